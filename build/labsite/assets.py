"""Runtime assets written into the built site: self-hosted Pyodide and the
project's own Python packages (lab_core, lab_view) as one deterministic zip."""
import hashlib
import io
import os
import shutil
import zipfile

from .errors import BuildError
from .paths import NODE_MODULES, PYTHON_PACKAGES, ROOT

#: The loader, the interpreter's JS glue and the wasm. Not python_stdlib.zip (the
#: build writes a trimmed, precompiled one: labsite.snapshot) nor pyodide-lock.json
#: (the worker passes the lock's info with no packages: the lab loads none).
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm")
PYODIDE_DIR = "assets/pyodide"
PYZIP_DIR = "assets/lab"
_FIXED_TIME = (2020, 1, 1, 0, 0, 0)


def python_zip_bytes():
    """The model and view packages as a zip with fixed timestamps and order, so
    two builds of the same tree produce the same bytes (and the same name)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in PYTHON_PACKAGES:
            base = ROOT / package
            for path in sorted(base.rglob("*.py")):
                info = zipfile.ZipInfo(path.relative_to(ROOT).as_posix(), _FIXED_TIME)
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def python_zip_name(data):
    return f"py.{hashlib.sha256(data).hexdigest()[:12]}.zip"


def _copy_if_changed(source, target):
    if target.exists() and target.stat().st_size == source.stat().st_size and target.stat().st_mtime >= source.stat().st_mtime:
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


def pyodide_bytes(name):
    """Size of one shipped Pyodide file (for the page's download progress)."""
    return (NODE_MODULES / "pyodide" / name).stat().st_size


def copy_pyodide(site_dir):
    source_dir = NODE_MODULES / "pyodide"
    for stale in (site_dir / PYODIDE_DIR).glob("*") if (site_dir / PYODIDE_DIR).is_dir() else ():
        if stale.name in ("python_stdlib.zip", "pyodide-lock.json"):
            stale.unlink()  # shipped by earlier builds; no longer used
    for name in PYODIDE_FILES:
        source = source_dir / name
        if not source.exists():
            raise BuildError(source, "Pyodide is not installed: run `npm ci` (or `make setup`) first")
        _copy_if_changed(source, site_dir / PYODIDE_DIR / name)


def write_python_zip(site_dir, data, written):
    """Write the zip; remove zips of earlier builds (not ones in ``written``,
    the set of files this build wrote: each language's pages point at one)."""
    target = site_dir / PYZIP_DIR / python_zip_name(data)
    target.parent.mkdir(parents=True, exist_ok=True)
    written.add(target)
    for stale in target.parent.glob("py.*.zip"):
        if stale not in written:
            os.remove(stale)
    if not target.exists() or target.read_bytes() != data:
        target.write_bytes(data)


def write_generated(site_dir, files):
    """Files the pages produced while rendering (``{relative path: bytes}``),
    e.g. the precomputed results of the lab's scenario cards."""
    for relative, data in sorted(files.items()):
        target = site_dir / relative
        if target.exists() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
