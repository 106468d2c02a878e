"""The repository installs as one project (pyproject.toml, ``pip install -e .``):
every package folder is declared, and no script, hook or test edits
``sys.path`` to find the project's own code."""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYS_PATH_EDIT = re.compile(r"sys\.path\.(insert|append|extend)|sys\.path\s*[+]?=")


def _declared():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return set(config["packages"]), config["package-dir"]


def test_every_package_folder_is_declared():
    packages, package_dir = _declared()
    found = set()
    for top in ("lab_core", "lab_view", *package_dir):
        folder = ROOT / package_dir.get(top, top)
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder).parts
            found.add(".".join((top, *relative)))
    assert found == packages


def test_no_file_edits_sys_path():
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    offenders = [name for name in files
                 if (ROOT / name).exists() and SYS_PATH_EDIT.search((ROOT / name).read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_packages_import_from_anywhere(tmp_path):
    """Installed, not found through the working directory."""
    code = "import lab_core, lab_view, labsite, labtools; print(labsite.__file__)"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent == ROOT / "build" / "labsite"
