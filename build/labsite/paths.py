"""Where things are, relative to the repository root."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
CATALOGS = CONTENT / "i18n"
TEMPLATES = CONTENT / "templates"
NODE_MODULES = ROOT / "node_modules"
PYTHON_PACKAGES = ("lab_core", "lab_view")


def display_path(path):
    """The path as messages show it: relative to the working directory when inside it."""
    path = Path(path)
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (OSError, ValueError):
        return path.as_posix()
