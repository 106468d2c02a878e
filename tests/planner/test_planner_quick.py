"""The lab's quick answer (recommend(budget=...)): a plan that fits, marked
provisional when the budget cut the search short, never better than the full
search's, which replaces it; finished or reused searches are final."""
import pytest

from lab_core import Workload
from lab_core.planner import plan_json, recommend, reuse
from lab_core.planner.assumptions import QUICK_SEARCH_EVALUATIONS

HEAVY = [dict(params=175e9, gpus=1024, global_batch_tokens=1536 * 2048),
         dict(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16777216),
         dict(params=141e9, layers=56, hidden=6144, heads=48, kv_heads=8, ffn_hidden=24576, vocab=32768, experts=8,
              experts_per_token=2, expert_ffn_hidden=24576, gpus=128, seq_len=16384, global_batch_tokens=16777216,
              gpu="h100_80gb", inter_node_gbps=400)]


@pytest.mark.parametrize("kw", HEAVY, ids=lambda kw: "%.3g@%d" % (kw["params"], kw["gpus"]))
def test_a_budget_gives_a_fitting_provisional_plan_the_full_search_does_not_lose_to(kw):
    reuse.clear()
    w = Workload(**kw)
    quick = recommend(w, budget=QUICK_SEARCH_EVALUATIONS)
    assert quick.provisional and quick.fits
    assert quick.report.memory_bytes <= quick.usable_bytes
    full = recommend(w)
    assert quick.search["plans_evaluated"] < full.search["plans_evaluated"]
    assert not full.provisional and full.search["complete"]
    assert full.goodput_tokens_per_s >= quick.goodput_tokens_per_s
    # Once the full plan is known, a quick request gets it.
    assert recommend(w, budget=QUICK_SEARCH_EVALUATIONS) is full


def test_a_search_within_the_budget_is_final():
    reuse.clear()
    plan = recommend(Workload(params=1.3e9, gpus=1), budget=QUICK_SEARCH_EVALUATIONS)
    assert not plan.provisional and plan.search["complete"]


def test_nothing_fits_is_never_provisional():
    reuse.clear()
    plan = recommend(Workload(params=1e12, gpus=8), budget=1)
    assert not plan.fits and not plan.provisional


def test_plan_json_says_provisional():
    reuse.clear()
    out = plan_json(HEAVY[0], budget=2)
    assert out["ok"] and out["plan"]["provisional"] is True
    assert plan_json(HEAVY[0])["plan"]["provisional"] is False
