"""Contract of the public API: inputs, errors, Report keys, compute()."""
import json

import pytest

import lab_core
from lab_core import INPUT_SPECS, LabInputError, Parallelism, Workload, compute, evaluate

GPT3 = dict(params=175e9, gpus=1024, seq_len=2048, global_batch_tokens=1536 * 2048)
GPT3_PAR = dict(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1)

REPORT_KEYS = {
    "parallelism", "shape", "memory", "time", "throughput", "training", "data", "failures",
}


def test_report_keys_are_stable_and_json():
    report = evaluate(Workload(**GPT3), Parallelism(**GPT3_PAR)).to_dict()
    assert set(report) == REPORT_KEYS
    assert {"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "total_bytes",
            "fits", "headroom_bytes"} <= set(report["memory"])
    assert {"step_s", "forward_s", "backward_s", "tp_comm_s", "pipeline_bubble_s", "dp_comm_s",
            "zero_comm_s", "optimizer_s"} <= set(report["time"])
    assert {"tokens_per_s", "mfu", "hfu"} <= set(report["throughput"])
    assert {"young_interval_s", "daly_interval_s", "goodput", "checkpoint_bytes"} <= set(report["failures"])
    json.dumps(report)


def test_step_time_is_sum_of_parts():
    t = evaluate(Workload(**GPT3), Parallelism(**GPT3_PAR)).to_dict()["time"]
    parts = ("forward_s", "backward_s", "recompute_s", "tp_comm_s", "pp_p2p_s", "pipeline_bubble_s",
             "dp_comm_s", "zero_comm_s", "optimizer_s")
    assert sum(t[k] for k in parts) == pytest.approx(t["step_s"], rel=1e-12)


def test_gpt3_on_1024_gpus_is_plausible():
    # Narayanan et al. report 140 TFLOP/s per GPU (Eq 3 FLOPs) for this run.
    r = evaluate(Workload(**GPT3, flash_attention=False, inter_node_gbps=200),
                 Parallelism(tp=8, pp=8, dp=16, recompute="full", micro_batch=1, interleave=2))
    achieved = r.hardware_flops_per_step / r.step_s / 1024
    assert 110e12 < achieved < 170e12


@pytest.mark.parametrize("field, value, reason", [
    ("params", "1.3e9", "not_a_number"),
    ("params", True, "not_a_number"),
    ("params", float("nan"), "not_a_number"),
    ("params", 1e20, "out_of_range"),
    ("gpus", 2.5, "not_an_integer"),
    ("gpu", "tpu_v5", "unknown_choice"),
    ("state_bytes_per_param", 17, "unknown_choice"),
    ("flash_attention", "yes", "not_a_bool"),
    ("bogus", 1, "unknown_field"),
])
def test_bad_inputs_raise_the_input_error(field, value, reason):
    with pytest.raises(LabInputError) as info:
        Workload.from_dict({field: value})
    assert info.value.field == field
    assert info.value.reason == reason
    out = compute({field: value})
    assert out["ok"] is False and out["error"]["field"] == field


@pytest.mark.parametrize("par, field", [
    (dict(tp=8, pp=8, dp=15), "dp"),
    (dict(tp=16, pp=4, dp=16), "tp"),
    (dict(tp=8, pp=7, dp=1024 // 56 if False else 1), "dp"),
    (dict(tp=8, pp=128, dp=1), "pp"),
    (dict(tp=8, pp=8, dp=16, micro_batch=5), "micro_batch"),
    (dict(tp=8, pp=1, dp=128, interleave=2), "interleave"),
    (dict(tp=8, pp=8, dp=16, recompute="some"), "recompute"),
    (dict(tp=8, pp=8, dp=16, zero=4), "zero"),
])
def test_invalid_layouts_name_the_field(par, field):
    with pytest.raises(LabInputError) as info:
        evaluate(Workload(**GPT3), Parallelism(**par))
    assert info.value.field == field
    assert info.value.allowed


def test_compute_keeps_its_contract():
    out = compute({"params": 7.5e9, "gpus": 64, "state_bytes_per_param": 16})
    assert out["ok"] is True
    assert out["memory"]["model_state_bytes"] == 120e9
    assert out["memory"]["device_bytes"] == 80e9
    assert out["memory"]["ratio"] == 1.5
    # The default keeps fp32 gradients (Megatron's bf16 path): 18 bytes per parameter.
    assert compute({"params": 7.5e9, "gpus": 64})["memory"]["model_state_bytes"] == 135e9
    assert out["report"]["parallelism"]["dp"] == 64
    json.dumps(out)
    assert compute({"gpus": 32768})["report_error"]["field"] == "dp"


def test_input_specs_cover_every_workload_field():
    names = [spec.name for spec in INPUT_SPECS]
    assert names == list(Workload().to_dict())
    for spec in INPUT_SPECS:
        d = spec.to_dict()
        assert {"name", "unit", "min", "max", "default", "log", "integer", "slider"} <= set(d)
    assert [s.name for s in INPUT_SPECS if s.slider] == [
        "params", "gpus", "global_batch_tokens", "seq_len", "inter_node_gbps", "checkpoint_interval_min"]


def test_public_names():
    for name in ("Workload", "Parallelism", "evaluate", "Report", "LabInputError", "INPUT_SPECS",
                 "model_state_bytes_per_gpu", "compute"):
        assert hasattr(lab_core, name)


def test_no_io_imports_in_lab_core():
    import ast
    import pathlib
    banned = {"os", "io", "time", "random", "socket", "pathlib", "subprocess", "numpy", "yaml", "json"}
    package = pathlib.Path(lab_core.__file__).parent
    for path in package.rglob("*.py"):
        if path.name in ("cli.py", "cli_plan.py"):  # the command line prints; it is not imported by the model
            continue
        # The launch exports are text: json.dumps writes the JSON formats (no file, no I/O).
        allowed = {"json"} if path.parent.name == "export" else set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not {a.name.split(".")[0] for a in node.names} & (banned - allowed), path
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                assert node.module.split(".")[0] not in banned - allowed, path


def test_data_module_matches_report():
    from lab_core.data import data_pipeline
    w = Workload(**GPT3)
    r = evaluate(w, Parallelism(**GPT3_PAR))
    d = data_pipeline(r.tokens_per_s, 128, w.loader_tokens_per_s_per_node, w.storage_read_gbps * 1e9)
    assert d == {k: v for k, v in r.to_dict()["data"].items()}
