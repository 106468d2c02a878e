"""The lab's quick answer (recommend(budget=...)): a plan that fits, marked
provisional when the budget cut the search short, never better than the full
search's, which replaces it; finished or reused searches are final."""
import pytest

from lab_core import Workload
from lab_core.planner import plan_json, recommend, reuse
from lab_core.planner.assumptions import QUICK_SEARCH_EVALUATIONS, TIE_TOLERANCE, WARM_START_GRIDS
from lab_core.planner.space import Grid, space_for

HEAVY = [dict(params=175e9, gpus=1024, global_batch_tokens=1536 * 2048),
         dict(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16777216),
         dict(params=141e9, layers=56, hidden=6144, heads=48, kv_heads=8, ffn_hidden=24576, vocab=32768, experts=8,
              experts_per_token=2, expert_ffn_hidden=24576, gpus=128, seq_len=16384, global_batch_tokens=16777216,
              gpu="h100_80gb", inter_node_gbps=400)]


# A budget the heavy searches exceed (the full ones evaluate 18 to 30 plans, some within
# QUICK_SEARCH_EVALUATIONS, whose answers are then final: test_a_search_within_the_budget_is_final).
SHORT_BUDGET = 6


@pytest.mark.parametrize("kw", HEAVY, ids=lambda kw: "%.3g@%d" % (kw["params"], kw["gpus"]))
def test_a_budget_gives_a_fitting_provisional_plan_the_full_search_does_not_lose_to(kw):
    reuse.clear()
    w = Workload(**kw)
    quick = recommend(w, budget=SHORT_BUDGET)
    assert quick.provisional and quick.fits
    assert quick.report.memory_bytes <= quick.usable_bytes
    full = recommend(w)
    assert quick.search["plans_evaluated"] < full.search["plans_evaluated"]
    assert not full.provisional and full.search["complete"]
    # The full search's fastest plan is never slower than the quick one; the plan it
    # chooses may be a simpler one within the tie band of that fastest (search.py).
    best = full.search["best_goodput_tokens_per_s"]
    assert best >= quick.goodput_tokens_per_s
    assert full.goodput_tokens_per_s >= best * (1.0 - TIE_TOLERANCE)
    # Once the full plan is known, a quick request gets it.
    assert recommend(w, budget=QUICK_SEARCH_EVALUATIONS) is full


def test_a_search_within_the_budget_is_final():
    reuse.clear()
    plan = recommend(Workload(params=1.3e9, gpus=1), budget=QUICK_SEARCH_EVALUATIONS)
    assert not plan.provisional and plan.search["complete"]


def test_nothing_fits_quick_answer_leaves_only_the_smallest_gpu_count_to_the_full_search():
    # The smallest count that fits scans every layout up to MAX_GPUS_SEARCHED: a quick
    # answer says it is searching (provisional), with the closest plan the full answer has.
    reuse.clear()
    w = Workload(params=1e12, gpus=8)
    quick = recommend(w, budget=1)
    assert not quick.fits and quick.provisional
    assert quick.no_fit["min_gpus_searching"] and quick.no_fit["min_gpus"] is None
    assert quick.decisions[0]["reason"] == "nothing_fits_searching"
    full = recommend(w)
    assert not full.fits and not full.provisional and not full.no_fit["min_gpus_searching"]
    assert full.parallelism == quick.parallelism and full.report.memory_bytes == quick.report.memory_bytes
    assert full.no_fit["min_gpus"] > 8 and full.decisions[0]["reason"] == "nothing_fits"
    assert full.unfit_stages and not quick.unfit_stages  # the least-memory scan is the full request's
    # The count depends on memory only: another GPU count where nothing fits knows it at once.
    again = recommend(Workload(params=1e12, gpus=16), budget=1)
    assert again.no_fit["min_gpus"] == full.no_fit["min_gpus"] and not again.no_fit["min_gpus_searching"]


@pytest.mark.parametrize("params", [1e12, 2e12])
def test_a_known_smallest_gpu_count_gives_the_same_answers_where_nothing_fits(params):
    """recommend() skips the scan for the most GPUs that fit when the smallest count that
    fits is known to be larger: same plans as a fresh search at every count."""
    counts = (1, 8, 16, 96, 512, 1000, 4096)
    fresh = {}
    for gpus in counts:
        reuse.clear()
        fresh[gpus] = recommend(Workload(params=params, gpus=gpus))
    reuse.clear()
    recommend(Workload(params=params, gpus=2))  # now the smallest count is known
    for gpus in counts:
        reuse.PLANS.items.clear()
        reuse.SEARCHES.items.clear()
        known = recommend(Workload(params=params, gpus=gpus))
        assert known.to_dict() == fresh[gpus].to_dict(), gpus


def test_plan_json_says_provisional():
    reuse.clear()
    out = plan_json(HEAVY[0], budget=2)
    assert out["ok"] and out["plan"]["provisional"] is True
    assert plan_json(HEAVY[0])["plan"]["provisional"] is False


# The quick answer's warm start (warm_start.py): the plan on screen, carried to the new workload.


def _moved(kw, **change):
    reuse.clear()
    before = recommend(Workload(**kw))
    return before.parallelism.to_dict(), Workload(**dict(kw, **change))


@pytest.mark.parametrize("kw,change", [
    (HEAVY[0], {"global_batch_tokens": 2 * 1536 * 2048}),
    (HEAVY[1], {"seq_len": 16384}),
    (HEAVY[2], {"inter_node_gbps": 200}),
    (HEAVY[0], {"params": 200e9}),
], ids=["batch", "seq", "moe-bandwidth", "params"])
def test_a_warm_start_answers_from_the_plan_on_screen_with_a_few_evaluations(kw, change):
    hint, w = _moved(kw, **change)
    reuse.clear()
    quick = recommend(w, budget=QUICK_SEARCH_EVALUATIONS, hint=hint)
    assert quick.fits and quick.provisional
    assert quick.search["plans_evaluated"] <= 3 * WARM_START_GRIDS
    assert Grid.of(quick.parallelism) in space_for(w).layouts(quick.gpus_used)
    full = recommend(w)
    # The full search's best (its chosen plan is the simplest within the tie band).
    assert full.search["best_goodput_tokens_per_s"] >= quick.goodput_tokens_per_s


def test_a_warm_start_keeps_the_pins():
    hint, w = _moved(HEAVY[0], global_batch_tokens=2 * 1536 * 2048)
    reuse.clear()
    pins = {"tp": 4, "pp": 16}
    quick = recommend(w, pins=pins, budget=QUICK_SEARCH_EVALUATIONS, hint=hint)
    assert quick.fits and (quick.parallelism.tp, quick.parallelism.pp) == (4, 16)


def test_a_hint_that_fits_nowhere_falls_back_to_the_quick_search(monkeypatch):
    from lab_core.planner import search as search_module

    # Carried plans that cannot fit: a whole 175B replica's state per GPU (ZeRO-0, no recompute).
    monkeypatch.setattr(search_module, "warm_plans", lambda grid, *rest: [(0, "none", False, 1, 1)])
    hint = {"tp": 1, "cp": 1, "pp": 1, "dp": 1024, "ep": 1, "zero": 0, "recompute": "none", "micro_batch": 1,
            "interleave": 1}
    w = Workload(**HEAVY[0])
    reuse.clear()
    with_hint = recommend(w, budget=QUICK_SEARCH_EVALUATIONS, hint=hint)
    reuse.clear()
    without = recommend(w, budget=QUICK_SEARCH_EVALUATIONS)
    assert with_hint.fits and with_hint.search["plans_evaluated"] > WARM_START_GRIDS
    assert with_hint.parallelism == without.parallelism


def test_a_small_search_starts_from_the_hint_too():
    """A few grids on 8 GPUs: the plan on screen, carried over, answers after a
    few evaluations instead of the budget's worth (the unhinted quick search)."""
    kw = dict(params=1.3e9, gpus=8)
    hint, w = _moved(kw, global_batch_tokens=2 * 1048576)
    reuse.clear()
    plan = recommend(w, budget=QUICK_SEARCH_EVALUATIONS, hint=hint)
    reuse.clear()
    unhinted = recommend(w, budget=QUICK_SEARCH_EVALUATIONS)
    assert plan.fits and plan.search["plans_evaluated"] <= 3 < unhinted.search["plans_evaluated"]
    assert Grid.of(plan.parallelism) == Grid.of(recommend(Workload(**kw)).parallelism)
    assert recommend(w).search["best_goodput_tokens_per_s"] >= plan.goodput_tokens_per_s
