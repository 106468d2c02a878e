"""What recommend() reuses from earlier calls gives the plan a fresh search gives."""
import dataclasses

import pytest

from lab_core import Workload
from lab_core.planner import recommend, reuse


def _fresh(workload, pins=None):
    reuse.clear()
    return recommend(workload, pins).to_dict()


def _without_search_counts(plan):
    return dict(plan, search={k: v for k, v in plan["search"].items()
                              if k not in ("plans_evaluated", "plans_considered", "reused")})


@pytest.mark.parametrize("kw,pins", [
    (dict(params=175e9, gpus=1024, global_batch_tokens=1536 * 2048), None),
    (dict(params=13e9, gpus=64), {"tp": 2}),
    (dict(params=1e12, gpus=8), None),  # nothing fits: the closest plan is reused
    (dict(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=131072, global_batch_tokens=128 * 131072), None),
])
def test_a_new_checkpoint_interval_reuses_the_search_and_gives_the_fresh_plan(kw, pins):
    before = Workload(**kw, checkpoint_interval_min=60)
    after = dataclasses.replace(before, checkpoint_interval_min=7)
    reuse.clear()
    recommend(before, pins)
    reused = recommend(after, pins).to_dict()
    assert reused["search"]["reused"] is True
    fresh = _fresh(after, pins)
    assert fresh["search"]["reused"] is False
    assert _without_search_counts(reused) == _without_search_counts(fresh)


def test_the_same_inputs_give_the_same_plan_object():
    reuse.clear()
    w = Workload(params=13e9, gpus=64)
    assert recommend(w) is recommend(Workload(params=13e9, gpus=64))
    assert recommend(w, {"tp": 2}) is not recommend(w)


def test_caches_keep_the_most_recent(monkeypatch):
    monkeypatch.setattr(reuse.PLANS, "kept", 4)
    monkeypatch.setattr(reuse.SEARCHES, "kept", 4)
    reuse.clear()
    for gpus in range(1, 11):
        recommend(Workload(params=1.3e8, gpus=gpus))
    assert len(reuse.PLANS.items) == 4 and len(reuse.SEARCHES.items) == 4
    last = Workload(params=1.3e8, gpus=10)
    assert recommend(last) is recommend(last)


def _candidates_in(value, seen):
    """Every Candidate reachable from `value` through slots, lists, tuples and dicts."""
    from lab_core.planner.search import Candidate

    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, Candidate):
        yield value
        return
    if isinstance(value, dict):
        for item in value.values():
            yield from _candidates_in(item, seen)
    elif isinstance(value, (list, tuple, set)):
        for item in value:
            yield from _candidates_in(item, seen)
    elif hasattr(type(value), "__slots__") and type(value).__module__.startswith("lab_core.planner"):
        for name in type(value).__slots__:
            yield from _candidates_in(getattr(value, name, None), seen)


def test_a_kept_search_holds_only_the_plans_recommend_reads():
    # The search evaluates a score of plans; a result kept for reuse holds the chosen,
    # best and closest plans and the best of each shape, so the caches stay small for the
    # cycle collector (lab_view/heap.py).
    reuse.clear()
    plan = recommend(Workload(params=175e9, gpus=1024, global_batch_tokens=1536 * 2048))
    assert plan.search["plans_evaluated"] >= 16
    (result,) = reuse.SEARCHES.items.values()
    kept = {id(c) for c in _candidates_in(result, set())}
    read = {id(c) for c in [result.chosen, result.best, result.closest, *result.stage_best.values()] if c is not None}
    assert kept == read
    assert len(kept) < plan.search["plans_evaluated"] / 4


def test_tables_a_quick_answer_drops_are_freed_by_the_next_full_search(monkeypatch):
    from lab_core.planner import memory_table

    monkeypatch.setattr(memory_table, "_TABLES_KEPT", 2)
    memory_table._TABLES.clear()
    memory_table._RETIRED.clear()
    reuse.clear()
    for seq_len in (1024, 2048, 4096):  # a new sequence length: a new table
        recommend(Workload(params=1.3e9, gpus=8, seq_len=seq_len), budget=24)
    assert len(memory_table._TABLES) == 2 and len(memory_table._RETIRED) == 1
    for seq_len in (8192, 16384, 32768, 65536, 131072):
        recommend(Workload(params=1.3e9, gpus=8, seq_len=seq_len), budget=24)
    assert len(memory_table._RETIRED) == memory_table._RETIRED_KEPT  # bounded: the oldest freed at once
    recommend(Workload(params=1.3e9, gpus=8, seq_len=131072))
    assert memory_table._RETIRED == [] and len(memory_table._TABLES) == 2
