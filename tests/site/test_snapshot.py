"""The build-time Pyodide snapshot: made by Node from the shipped packages,
cached by its inputs, and refused by the build when its heap is too large for
a restore."""
import io
import shutil
import zipfile

import pytest

from labsite import snapshot
from labsite.errors import BuildError

pytestmark = pytest.mark.node


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
