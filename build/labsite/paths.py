"""Where things are, relative to the repository root."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
CATALOGS = CONTENT / "i18n"
TEMPLATES = CONTENT / "templates"
NODE_MODULES = ROOT / "node_modules"
PYTHON_PACKAGES = ("lab_core", "lab_view")
