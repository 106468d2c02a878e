"""lab_core and lab_view give byte-identical JSON in CPython and in Pyodide."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from labsite import assets, snapshot
from labsite.catalog import load_catalogs
from labsite.labpage import default_inputs, load_lab_layout
from labsite.pages.lab import runtime_session_config
from labsite.pages.rules import load_rules
from lab_core.presets import preset_inputs

import driver

HERE = Path(__file__).parent
pytestmark = pytest.mark.node


def parity_cases():
    cases = []
    for params in (125e6, 1.3e9, 7.5e9, 13e9, 70e9, 175e9, 405e9, 1e12, 2e12):
        for gpus in (1, 8, 64, 1024, 16384, 32768):
            cases.append({"fn": "lab_core.compute", "args": [{"params": params, "gpus": gpus}]})
    cases.append({"fn": "lab_core.compute", "args": [{"params": 1, "gpus": 8}]})
    cases.append({"fn": "lab_core.compute", "args": [{"params": 1e9, "gpus": 3.5}]})
    # Multi-token prediction: a dense model's modules, and DeepSeek-V3's (its preset) below.
    cases.append({"fn": "lab_core.compute", "args": [{"params": 13e9, "gpus": 64, "mtp_layers": 2}]})
    # The gradient reduction waited for after the backward, in one message (sync.gradient_times).
    cases.append({"fn": "lab_core.compute", "args": [{"params": 70e9, "gpus": 512, "grad_reduce_overlap": False}]})
    layout, rules = load_lab_layout(), load_rules()
    for lang, catalog in load_catalogs().items():
        config = runtime_session_config(layout, catalog, lang, rules)
        for params, gpus in ((1.3e9, 1), (1.3e9, 64), (13e9, 64), (175e9, 1024), (405e9, 16384), (1e12, 8)):
            inputs = dict(default_inputs(), params=params, gpus=gpus)
            cases.append({"session": config, "inputs": inputs})
        base = dict(default_inputs(), params=70e9, gpus=64)
        cases.append({"session": config, "inputs": base, "typed": {"params": "1.3B", "seq_len": "8K"}})
        cases.append({"session": config, "inputs": base, "typed": {"params": "lots"}})
        cases.append({"session": config, "inputs": base, "typed": {"gpus": "100000"}})
        # The lab's tools: pins, GiB, compare A/B, then the panels (pins, curves, launch configuration).
        llama = dict(default_inputs(), **preset_inputs("llama3-70b"), gpus=512, gpu="h100_80gb")
        state = {"inputs": llama, "pins": {"tp": "8"}}
        cases.append({"session": config, "requests": [
            {"inputs": llama, "pins": {"tp": "8"}, "units": "gib", "compare": {"inputs": llama, "pins": {}}},
            {"inputs": llama, "pins": {"tp": "3"}},
            {"kind": "extras", "state": state, "units": "gib", "pins": True, "curves": True, "export": "megatron"},
            {"kind": "extras", "state": state, "export": "torchtitan"},
            {"kind": "extras", "state": state, "export": "deepspeed"},
            {"kind": "extras", "state": state, "export": "json"},
        ]})
        # A mixture of experts with latent attention, group-limited routing and its multi-token-prediction
        # module on a lighter last stage (Megatron-Bridge's split for 8 stages), and its Megatron export.
        deepseek = dict(default_inputs(), **preset_inputs("deepseek-v3"), gpus=1024, gpu="h800_80gb",
                        global_batch_tokens=8192 * 4096, precision="fp8", moe_dispatcher="per_node")
        # A plan that recomputes only the fewest layers that fit, then a pinned count (planner/trim.py).
        long = dict(default_inputs(), params=42e9, gpus=61, global_batch_tokens=262144, seq_len=65536,
                    gpu="h100_80gb")
        cases.append({"session": config, "requests": [
            {"inputs": long, "pins": {}},
            {"inputs": long, "pins": {"recompute_layers": "2"}},
            {"kind": "extras", "state": {"inputs": long, "pins": {}}, "pins": True, "export": "megatron"},
        ]})
        split = {"pp": "8", "first_stage_layers": "8", "last_stage_layers": "5"}
        cases.append({"session": config, "requests": [
            {"inputs": deepseek, "pins": split},
            {"kind": "extras", "state": {"inputs": deepseek, "pins": split}, "export": "megatron"},
        ]})
    return cases


def test_cpython_and_pyodide_agree(tmp_path, repo_root):
    """Pyodide boots from the trimmed standard library the site ships, as the
    browser's worker does, so a module the lab imports but the trimmed library
    lacks fails this test too."""
    node = shutil.which("node")
    assert node, "node is required for the parity test"
    zip_path = tmp_path / "py.zip"
    zip_path.write_bytes(assets.python_zip_bytes())
    shipped = snapshot.current()
    lock_path = tmp_path / "lock-info.json"
    lock_path.write_text(json.dumps(shipped.lock_info), encoding="utf-8")
    cases = parity_cases()
    cases_path = tmp_path / "cases.json"
    cases_path.write_text(json.dumps(cases), encoding="utf-8")
    result = subprocess.run(
        [node, str(HERE / "run_pyodide.mjs"), str(zip_path), str(HERE / "driver.py"), str(cases_path),
         str(shipped.stdlib_path), str(lock_path)],
        cwd=repo_root, capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr[result.stderr.rfind("Traceback"):][:3000]
    pyodide_out = json.loads(result.stdout)
    cpython_out = json.loads(driver.run(json.dumps(cases)))
    assert len(pyodide_out) == len(cases)
    for case, ours, theirs in zip(cases, cpython_out, pyodide_out):
        assert ours == theirs, case
    assert result.stdout == driver.run(json.dumps(cases))
