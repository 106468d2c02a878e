"""The planner in steps (planner/steps.py): the browser's worker runs the full
search a slice at a time between the reader's moves; the steps give exactly
what the one-call functions give, and stopping them early leaves nothing behind."""
import json

from lab_core import Workload
from lab_core.planner import plan_json, recommend, reuse
from lab_core.planner.json_plan import plan_json_steps
from lab_core.planner.recommend import recommend_steps
from lab_core.planner.steps import finish

HEAVY = dict(params=175e9, gpus=1024, global_batch_tokens=1536 * 2048)


def _count(steps):
    count = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return count, done.value
        count += 1


def test_a_full_search_yields_between_grids_and_returns_the_same_plan():
    reuse.clear()
    count, plan = _count(recommend_steps(Workload(**HEAVY)))
    assert count > 20
    reuse.clear()
    assert json.dumps(plan.to_dict(), sort_keys=True) == json.dumps(recommend(Workload(**HEAVY)).to_dict(),
                                                                    sort_keys=True)


def test_plan_json_steps_equals_plan_json_and_reports_bad_input_as_a_result():
    reuse.clear()
    stepped = finish(plan_json_steps(HEAVY))
    reuse.clear()
    assert stepped == plan_json(HEAVY)
    bad = finish(plan_json_steps(dict(HEAVY, gpus=0)))
    assert bad["ok"] is False and bad["error"]["field"] == "gpus"


def test_a_search_dropped_half_way_changes_no_later_answer():
    reuse.clear()
    steps = recommend_steps(Workload(**HEAVY))
    for _ in range(10):
        next(steps)
    steps.close()  # the reader moved: the worker drops the refine
    assert not reuse.PLANS.items and not reuse.SEARCHES.items
    reuse.clear()
    assert recommend(Workload(**HEAVY)).fits


def _evaluations_per_step(steps, monkeypatch):
    """The most plans one step of `steps` evaluates (search.evaluate counted)."""
    from lab_core.planner import search

    count = [0]
    evaluate = search.evaluate

    def counted(workload, parallelism):
        count[0] += 1
        return evaluate(workload, parallelism)

    monkeypatch.setattr(search, "evaluate", counted)
    most = 0
    while True:
        count[0] = 0
        try:
            next(steps)
        except StopIteration:
            return max(most, count[0])
        most = max(most, count[0])


def test_no_step_of_a_full_search_evaluates_more_than_a_few_plans(monkeypatch):
    """A reader's move waits for the step the worker is in: a grid's rows and the
    tightening of its bounds yield as they go (search.py), so one step evaluates at
    most a grid's probe and one micro-batch x interleave's ZeRO stages."""
    deepseek = dict(params=671e9, gpus=2048, experts=256, experts_per_token=8, expert_ffn_hidden=3072,
                    shared_experts=1, dense_layers=3, gpu="h800_80gb", global_batch_tokens=15360 * 4096)
    for workload in (HEAVY, dict(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192,
                                 global_batch_tokens=2048 * 8192), deepseek):
        reuse.clear()
        assert _evaluations_per_step(recommend_steps(Workload(**workload)), monkeypatch) <= 4
