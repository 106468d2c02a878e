"""The build-time Pyodide snapshot and trimmed standard library: made by Node
from the shipped packages, cached by their inputs, refused by the build when
the heap is too large for a restore; the standard library holds every module
the lab's packages import, precompiled."""
import ast
import io
import shutil
import zipfile

from labsite.paths import PYTHON_PACKAGES, ROOT

import pytest

from labsite import snapshot
from labsite.errors import BuildError

pytestmark = pytest.mark.node


def _stdlib_imports():
    """Top-level standard-library modules lab_core and lab_view name in any import statement."""
    names = set()
    for package in PYTHON_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    names.add(node.module)
    return {name for name in names if name.split(".")[0] not in PYTHON_PACKAGES}


def _missing(names, members, builtins):
    missing = []
    for name in sorted(names):
        path = name.replace(".", "/")
        if name not in builtins and f"{path}.pyc" not in members and f"{path}/__init__.pyc" not in members:
            missing.append(name)
    return missing


def _shipped_stdlib():
    current = snapshot.current()
    with zipfile.ZipFile(current.stdlib_path) as archive:
        return archive.infolist(), set(current.report["builtinModules"])


def test_trimmed_standard_library_has_every_module_the_lab_imports():
    infos, builtins = _shipped_stdlib()
    members = {info.filename for info in infos}
    assert all(name.endswith(".pyc") for name in members)
    assert all(info.compress_type == zipfile.ZIP_STORED for info in infos)  # the host compresses the whole file
    missing = _missing(_stdlib_imports(), members, builtins)
    assert not missing, f"imported by lab_core/lab_view but not in the shipped standard library: {missing}"
    assert "json/__init__.pyc" in members and "asyncio/__init__.pyc" in members  # the lab's and Pyodide's own
    assert "email/__init__.pyc" not in members and "tkinter/__init__.pyc" not in members


def test_an_import_the_trimmed_library_lacks_is_reported():
    infos, builtins = _shipped_stdlib()
    members = {info.filename for info in infos}
    assert _missing({"xml.dom.minidom", "json", "math"}, members, builtins) == ["xml.dom.minidom"]


def _zip(files):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_report_over_the_restore_limit_is_a_build_error():
    with pytest.raises(BuildError) as info:
        snapshot.check_report({"heapBytes": 40 * 2**20, "heapLimitBytes": 30 * 2**20})
    assert "40.0 MiB" in str(info.value) and "30.0 MiB" in str(info.value)
    snapshot.check_report({"heapBytes": 30 * 2**20, "heapLimitBytes": 30 * 2**20})


def test_packages_that_grow_the_heap_fail_the_build(tmp_path):
    """A package that allocates 20 MB at import grows Pyodide's heap past what
    a restore can take: the real script reports it and the build stops."""
    assert shutil.which("node")
    pyzip = _zip({"lab_core/__init__.py": "BIG = bytearray(20_000_000)\n", "lab_view/__init__.py": ""})
    with pytest.raises(BuildError) as info:
        snapshot.make(pyzip, tmp_path / "snapshot.bin.gz")
    assert "MiB" in str(info.value) and "restore" in str(info.value)
    assert not (tmp_path / "snapshot.bin.gz").exists()


def test_a_package_that_fails_to_import_fails_the_build_with_its_error(tmp_path):
    pyzip = _zip({"lab_core/__init__.py": "raise RuntimeError('boom at import')\n", "lab_view/__init__.py": ""})
    with pytest.raises(BuildError) as info:
        snapshot.make(pyzip, tmp_path / "snapshot.bin.gz")
    assert "boom at import" in str(info.value)


def test_the_key_depends_on_the_packages_only_through_their_bytes():
    one = _zip({"lab_core/__init__.py": "X = 1\n"})
    two = _zip({"lab_core/__init__.py": "X = 2\n"})
    assert snapshot.inputs_key(one) == snapshot.inputs_key(one)
    assert snapshot.inputs_key(one) != snapshot.inputs_key(two)


def test_current_snapshot_restores_the_lab_packages():
    current = snapshot.current()
    assert current.report["heapBytes"] <= current.report["heapLimitBytes"]
    assert {"lab_core", "lab_view"} <= set(current.report["modules"])
    assert current.name == f"snapshot.{current.key[:12]}.bin.gz"
