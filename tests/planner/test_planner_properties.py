"""Property tests over the whole input space: recommend never raises, output is JSON-ready."""
import json
import math

from hypothesis import HealthCheck, example, given, settings, strategies as st

from lab_core import INPUT_SPECS, Workload
from lab_core.planner import STAGES, THRESHOLDS, plan_json, recommend, vocabulary
from lab_core.planner.decisions import DECISIONS
from lab_core.planner.diagram import PARTS
from lab_core.planner.meters import LEVELS, METERS

SPECS = {s.name: s for s in INPUT_SPECS}


def _log_number(name, integer=False):
    spec = SPECS[name]
    lo, hi = math.log10(spec.lowest), math.log10(spec.highest)
    values = st.floats(lo, hi).map(lambda x: min(spec.highest, max(spec.lowest, 10 ** x)))
    if integer:
        values = values.map(lambda x: max(int(spec.lowest), min(int(spec.highest), int(round(x)))))
    return values


workloads = st.fixed_dictionaries(
    {
        "params": _log_number("params"),
        "gpus": _log_number("gpus", integer=True),
        "global_batch_tokens": st.floats(math.log10(65536), math.log10(64e6)).map(lambda x: int(10 ** x)),
        "seq_len": _log_number("seq_len", integer=True),
        "inter_node_gbps": _log_number("inter_node_gbps"),
        "checkpoint_interval_min": _log_number("checkpoint_interval_min"),
    },
    optional={
        "gpu": st.sampled_from(SPECS["gpu"].choices),
        "gpus_per_node": st.sampled_from([1, 2, 4, 8, 16, 72]),
        "flash_attention": st.booleans(),
        "state_bytes_per_param": st.sampled_from([16, 18]),
        "gpu_failures_per_hour": st.sampled_from([0.0, 1e-6, 1e-4, 1e-2]),
        "restart_min": st.sampled_from([0.0, 10.0, 1440.0]),
        "checkpoint_storage_gbps": st.sampled_from([0.1, 100.0, 100000.0]),
        "loader_tokens_per_s_per_node": st.sampled_from([1e3, 5e6, 1e10]),
        "layers": st.sampled_from([0, 1, 7, 24, 96, 126, 360]),
        "hidden": st.sampled_from([0, 64, 1000, 4096, 12288]),
        "vocab": st.sampled_from([0, 256, 32000, 256000]),
    },
)


def _check_json(value):
    if isinstance(value, dict):
        for k, v in value.items():
            assert isinstance(k, str)
            _check_json(v)
    elif isinstance(value, list):
        for v in value:
            _check_json(v)
    else:
        assert value is None or isinstance(value, (str, bool, int, float)), type(value)
        if isinstance(value, float):
            assert math.isfinite(value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads)
def test_recommend_never_raises_and_is_json_ready(inputs):
    out = plan_json(inputs)
    assert out["ok"], out
    _check_json(out)
    json.dumps(out, allow_nan=False)
    plan = out["plan"]
    assert plan["stage"] in STAGES
    assert plan["plan_shape"] in STAGES
    assert set(plan["meters"]) == set(METERS)
    for meter in plan["meters"].values():
        assert meter["level"] in LEVELS
    assert [d["id"] for d in plan["decisions"]] == list(DECISIONS)
    assert set(plan["diagram"]) == set(PARTS)
    vocab = vocabulary()
    for d in plan["decisions"]:
        assert d["option"] in vocab["decision_options"][d["id"]], d
        assert d["reason"] in vocab["decision_reasons"][d["id"]], d
    for alt in plan["alternatives"]:
        assert alt["stage"] in STAGES and alt["reason"] in vocab["alternative_reasons"]
    for unfit in plan["unfit_stages"]:
        assert unfit["stage"] in STAGES and unfit["reason"] in vocab["unfit_reasons"]
        assert unfit["stage"] not in [a["stage"] for a in plan["alternatives"]]
    par = plan["parallelism"]
    assert par["tp"] * par["cp"] * par["pp"] * par["dp"] == plan["gpus"]["used"] <= plan["gpus"]["requested"]
    if plan["fits"]:
        assert plan["report"]["memory"]["total_bytes"] <= plan["memory"]["usable_bytes"]
        assert plan["no_fit"] is None
    else:
        assert plan["no_fit"]["overflow_bytes"] > 0
        assert plan["alternatives"] == []


@settings(max_examples=100, deadline=None)
@given(workloads, st.lists(st.floats(math.log10(125e6), math.log10(2e12)), min_size=2, max_size=4))
# One layer over a long sequence: the least recompute fits where full recompute (its working
# set) does not, so a grid can have a plan that fits while its floor plan does not.
@example(inputs={"params": 1e9, "gpus": 1, "global_batch_tokens": 100000, "seq_len": 29427, "inter_node_gbps": 100.0,
                 "checkpoint_interval_min": 1.0, "loader_tokens_per_s_per_node": 1000.0, "gpu": "a100_80gb",
                 "hidden": 0, "state_bytes_per_param": 16, "layers": 1, "checkpoint_storage_gbps": 0.1,
                 "vocab": 256000},
         log_params=[9.0, 9.125])
def test_stage_never_goes_backwards_as_params_grow(inputs, log_params):
    ranks = []
    for x in sorted(log_params):
        plan = recommend(Workload(**dict(inputs, params=min(2e12, max(125e6, 10 ** x)))))
        ranks.append(STAGES.index(plan.stage))
    assert ranks == sorted(ranks)


def test_thresholds_are_exported_as_data():
    json.dumps(THRESHOLDS)
    for name in METERS:
        t = THRESHOLDS[name]
        assert t["source"] == "teaching_assumption"
        assert 0 < t["warn"] < t["critical"]


def test_vocabulary_is_json_data():
    vocab = vocabulary()
    json.dumps(vocab)
    assert "tp_pp_dp_zero1" in vocab["decision_options"]["parallelism"]
    assert "tp_zero1" not in vocab["decision_options"]["parallelism"]


def test_deterministic():
    inputs = {"params": 175e9, "gpus": 1024, "global_batch_tokens": 1536 * 2048}
    assert json.dumps(plan_json(inputs), sort_keys=True) == json.dumps(plan_json(inputs), sort_keys=True)
