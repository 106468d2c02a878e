"""plan_json: JSON in, JSON out, never raises."""
import pytest

from lab_core.planner import plan_json

PLAN_KEYS = {"fits", "stage", "stage_rank", "plan_shape", "parallelism", "gpus", "memory", "throughput", "pins", "provisional",
             "checkpoint", "meters", "decisions", "diagram", "alternatives", "unfit_stages", "no_fit", "search",
             "report"}


@pytest.mark.parametrize("bad", [None, 3, "x", [], {"params": "big"}, {"params": 1}, {"gpus": 0},
                                 {"nonsense": 1}, {"gpu": "tpu"}, {"params": float("nan")},
                                 {"flash_attention": "yes"}, {"hidden": 1000, "heads": 7}])
def test_bad_input_is_an_error_result(bad):
    out = plan_json(bad)
    assert out["ok"] is False
    assert set(out["error"]) >= {"field", "value", "allowed", "reason"}


def test_key_tree_is_stable():
    out = plan_json({"params": 175e9, "gpus": 1024, "global_batch_tokens": 1536 * 2048})
    assert out["ok"] is True
    assert set(out) == {"ok", "workload", "shape", "plan"}
    assert set(out["plan"]) == PLAN_KEYS
    assert set(out["plan"]["report"]) == {"parallelism", "shape", "memory", "time", "throughput", "training",
                                          "data", "failures"}
    for decision in out["plan"]["decisions"]:
        assert set(decision) == {"id", "option", "reason", "numbers"}


def test_no_fit_result():
    out = plan_json({"params": 1e12, "gpus": 8})
    plan = out["plan"]
    assert out["ok"] and not plan["fits"]
    assert plan["no_fit"]["min_gpus"] > 8
    assert plan["no_fit"]["overflow_bytes"] > 0


def test_idle_gpus_are_reported():
    out = plan_json({"params": 1.3e9, "gpus": 1000})
    gpus = out["plan"]["gpus"]
    assert gpus["used"] < 1000 and gpus["idle"] == 1000 - gpus["used"]
