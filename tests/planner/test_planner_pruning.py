"""The search's time bounds only skip work: recommend() gives the same Plan
with every bound-based skip turned off (each grid, row, interleaving and plan
the memory rules leave is evaluated), on the bench's planner cases (the
largest and slowest searches: 16,384 GPUs, 2,048-GPU mixtures of experts,
128K tokens) and on random workloads of every kind. Only the search's own
counters (plans evaluated and considered) may differ. The exhaustive scans of
test_planner_search_exact.py and test_planner_nofit.py check the memory rules
themselves on smaller spaces."""
import random

import pytest

from lab_core import Workload
from lab_core.planner import recommend
from lab_core.planner import search as search_module
from planner_cases import PLANNER_CASES
from planner_random import random_workload_fields
from planner_timing import _forget

COUNTERS = ("plans_evaluated", "plans_considered")


def _random_workloads(n, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        kw = random_workload_fields(rng, [1, 8, 16, 64, 128, 256, 512, 1024, 2048, 4096])
        try:
            Workload(**kw)
        except Exception:  # noqa: BLE001 - an inconsistent draw: draw again
            continue
        out.append(kw)
    return out


def _answer(kw):
    _forget()
    out = recommend(Workload(**kw)).to_dict()
    counters = {name: out["search"].pop(name) for name in COUNTERS}
    return out, counters


WORKLOADS = list(PLANNER_CASES) + _random_workloads(60, 15)


@pytest.mark.parametrize("kw", WORKLOADS, ids=lambda kw: "%.3g@%d" % (kw["params"], kw["gpus"]))
def test_pruned_search_gives_the_unpruned_plan(kw, monkeypatch):
    pruned, pruned_counts = _answer(kw)
    monkeypatch.setattr(search_module._Search, "worth", lambda self, *args: True)
    monkeypatch.setattr(search_module._Search, "worth_any", lambda self, *args: True)
    monkeypatch.setattr(search_module._Search, "in_tie_band", lambda self, *args: True)
    full, full_counts = _answer(kw)
    _forget()
    assert pruned == full
    assert pruned_counts["plans_evaluated"] <= full_counts["plans_evaluated"]


def test_the_cases_prune():
    """The comparison above means something: on the bench cases the bounds skip most plans."""
    pruned = full = 0
    for kw in PLANNER_CASES:
        pruned += _answer(kw)[1]["plans_evaluated"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_module._Search, "worth", lambda self, *args: True)
        patch.setattr(search_module._Search, "worth_any", lambda self, *args: True)
        patch.setattr(search_module._Search, "in_tie_band", lambda self, *args: True)
        for kw in PLANNER_CASES:
            full += _answer(kw)[1]["plans_evaluated"]
    _forget()
    assert pruned * 5 < full
