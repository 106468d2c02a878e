"""plan_json gives byte-identical JSON in CPython and in Pyodide (Node) on the bench cases."""
import json
import shutil
import subprocess
from pathlib import Path

import driver  # tests/parity and bench/ are on sys.path (pytest.ini: pythonpath)
import pytest
from planner_cases import PLANNER_CASES

from lab_core.planner import reuse
from labsite import assets

ROOT = Path(__file__).resolve().parents[2]
PARITY = ROOT / "tests" / "parity"

pytestmark = pytest.mark.node


def test_plan_json_cpython_and_pyodide_agree(tmp_path):

    node = shutil.which("node")
    assert node, "node is required for the parity test"
    cases = [{"fn": "lab_core.planner.plan_json", "args": [case]} for case in PLANNER_CASES]
    cases.append({"fn": "lab_core.planner.plan_json", "args": [{"params": "big"}]})
    zip_path = tmp_path / "py.zip"
    zip_path.write_bytes(assets.python_zip_bytes())
    cases_path = tmp_path / "cases.json"
    cases_path.write_text(json.dumps(cases), encoding="utf-8")
    done = subprocess.run([node, str(PARITY / "run_pyodide.mjs"), str(zip_path), str(PARITY / "driver.py"),
                           str(cases_path)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    # Pyodide plans from a fresh interpreter; so must CPython (plan_json reports whether a search was reused).
    reuse.clear()
    ours = driver.run(json.dumps(cases))
    assert json.loads(done.stdout) == json.loads(ours)
    assert done.stdout == ours
