"""How many layers a plan that recomputes fully recomputes (Parallelism.recompute_layers).

The search weighs recompute none, selective and full (search.py). The plan it
picks, when it recomputes fully, then recomputes only the fewest layers of
each model chunk with which it still fits (lab_core.partial_recompute,
Megatron's --recompute-method block): each layer kept whole skips the replay
of its forward, so the step only gets shorter, and the plan keeps the memory
it needs. A reader's recompute_layers pin sets the count instead (0: every
layer, no trimming). TEACHING LIMITATION: the count is fitted on the layout
the search chose; a layout that only partial recompute would make the
fastest is not looked for (often a few percent faster on random workloads;
ARCHITECTURE.md "Plan" says what searching it would take).
"""
from dataclasses import replace

from ..context import context_for
from ..errors import LabInputError
from ..evaluate import evaluate
from ..gpu_memory import memory_of
from ..parallelism import check_layout
from ..partial_recompute import largest_chunk
from .search import Candidate


def recompute_layers(workload, cand, usable, pinned=None):
    """The plan `cand` (search.Candidate on `workload`) with its recompute layers:
    the fewest that fit in `usable` bytes when it recomputes fully (pinned None),
    or the pinned count (which need not fit: the caller says so). Returns `cand`
    itself when nothing changes."""
    par = cand.parallelism
    if par.recompute != "full" or pinned == 0:
        return cand
    if pinned is not None:
        chunk = chunk_layers(workload, par)[1]
        if pinned > chunk:
            raise LabInputError("recompute_layers", pinned, f"0 to {chunk}", "inconsistent",
                                f"the plan's largest model chunk holds {chunk} layers")
        return _variant(workload, cand, replace(par, recompute_layers=pinned), usable)
    fewest = fewest_fitting(workload, par, usable)
    return _variant(workload, cand, replace(par, recompute_layers=fewest), usable) if fewest else cand


def chunk_layers(workload, par):
    """(Layout, layers of the largest model chunk) of Parallelism `par` on `workload`."""
    layout = check_layout(workload, par)
    return layout, largest_chunk(layout.first_layers, layout.middle_layers, layout.last_layers, par.interleave)


def fewest_fitting(workload, par, usable):
    """The fewest layers of each chunk with which the fully recomputing plan `par` fits in
    `usable` bytes, 0 when only every layer does: memory falls with every layer recomputed
    (partial_recompute.py), so a bisection over the count finds it on the memory alone."""
    layout, chunk = chunk_layers(workload, par)
    ctx = context_for(workload)
    low, high = 1, chunk
    while low < high:
        middle = (low + high) // 2
        if memory_of(ctx, replace(par, recompute_layers=middle), layout).total <= usable:
            high = middle
        else:
            low = middle + 1
    return 0 if low >= chunk else low


def _variant(workload, cand, par, usable):
    """A Candidate of `par` in place of `cand`: the same shape of plan, its own figures."""
    out = Candidate(par, evaluate(workload, par), context_for(workload).failures.goodput, usable, 0.0)
    out.stage = cand.stage
    return out
