"""When nothing fits: how far off the closest plan is, and how many GPUs would do.

Uses the memory floor of a grid (the most ZeRO sharding, full recompute,
micro-batch 1, no interleaving: the least memory any plan of it can use,
bounds.floor_memory; with pins, the pinned values instead), which only
shrinks as dp grows for fixed tp, cp, pp and ep. GPU counts are tp cp pp dp with
tp dividing the GPUs per node, pp splitting the layers and dp the batch (with
micro-batch counts the pipeline schedule can run, space.Space.schedule_runs); for
a mixture of experts each count takes the largest ep searched (the fewest
experts per GPU, the least memory). That ep can fall as dp grows (a dp whose
tp x cp x dp it does not divide), and where ZeRO-3 is not the floor's stage
(parallelism.zero_stages) the experts' weights and gradients on a GPU grow
with it: the dp are searched in runs of equal ep (_dp_runs), within which the
floor only shrinks.
"""
from bisect import bisect_right

from .assumptions import MAX_GPUS_SEARCHED
from .bounds import floor_memory
from .space import Grid, expert_parallel_sizes
from .steps import finish


def _ep(space, ranks):
    """The largest ep searched for tp x cp x dp = ranks (1 for a dense model)."""
    return expert_parallel_sizes(space.experts, ranks, space.gpn)[-1]


def _grid(space, t, c, p, first, last, d):
    return Grid(t, c, p, d, _ep(space, t * c * d), first, last)


def _dp_runs(space, t, c, dps, top):
    """The indices of dps[:top] (ascending) grouped by the ep their grid takes
    (_grid): one group for a dense model."""
    if not space.experts:
        return (range(top),)
    runs = {}
    for i in range(top):
        runs.setdefault(_ep(space, t * c * dps[i]), []).append(i)
    return runs.values()


def _parts(space, accept):
    for t in space.tps:
        for c in space.cps:
            for p, first, last in space.splits:
                if accept is None or accept(Grid(t, c, p, 0, 0, first, last), dp=False):
                    yield t, c, p, first, last


def smallest_fitting(wctx, space, usable, at_most=MAX_GPUS_SEARCHED, floor=None, accept=None):
    """(gpus, Grid) of the fewest GPUs whose floor fits, or None (smallest_fitting_steps at once)."""
    return finish(smallest_fitting_steps(wctx, space, usable, at_most, floor, accept))


def smallest_fitting_steps(wctx, space, usable, at_most=MAX_GPUS_SEARCHED, floor=None, accept=None):
    """smallest_fitting as steps (steps.py): yields after each (tp, cp, pp),
    so the worker's refine can be dropped between them.

    floor(wctx, grid): the memory floor (default bounds.floor_memory);
    accept(grid, dp=False): whether a grid's tp, cp and pp are allowed (pins).
    For each (tp, cp, pp) the floor falls as dp grows, so a binary search over
    the divisors of the batch finds the least dp that fits. Only dp that
    could tie or beat the best count so far are looked at (the count only
    grows with dp), so once a small layout fits most others take one floor.
    """
    floor = floor or floor_memory
    best = None
    dps = space.dps
    for t, c, p, first, last in _parts(space, accept):
        yield
        mp = t * c * p
        cap = at_most if best is None else min(at_most, best[0])
        top = bisect_right(dps, cap // mp)  # dps[:top]: the dp whose count is within the cap
        for run in _dp_runs(space, t, c, dps, top):
            if not run or floor(wctx, _grid(space, t, c, p, first, last, dps[run[-1]])) > usable:
                continue
            lo, hi = 0, len(run) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if floor(wctx, _grid(space, t, c, p, first, last, dps[run[mid]])) <= usable:
                    hi = mid
                else:
                    lo = mid + 1
            # The floor only falls with dp: the least fitting dp the pipeline schedule can run.
            while lo < len(run) and not space.schedule_runs(p, dps[run[lo]]):
                lo += 1
            if lo == len(run):
                continue
            grid = _grid(space, t, c, p, first, last, dps[run[lo]])
            n = grid.gpus
            if best is None or (n, grid) < best:
                best = (n, grid)
    return best


def largest_fitting(wctx, space, usable, at_most, floor=None, accept=None):
    """The most GPUs (<= at_most) some grid whose floor fits uses, or None.

    Each (tp, cp, pp) is looked at with its largest dp within `at_most` of
    each ep (the least memory of it, _dp_runs); the candidates are tried from
    the most GPUs down, so the first that fits is the answer and the rest need
    no floor."""
    floor = floor or floor_memory
    dps = space.dps
    candidates = []
    for t, c, p, first, last in _parts(space, accept):
        top = bisect_right(dps, at_most // (t * c * p))
        for run in _dp_runs(space, t, c, dps, top):
            if not run:
                continue
            d = dps[run[-1]]
            candidates.append((t * c * p * d, t, c, p, first, last, d))
    candidates.sort(reverse=True)
    for n, t, c, p, first, last, d in candidates:
        if space.schedule_runs(p, d) and floor(wctx, _grid(space, t, c, p, first, last, d)) <= usable:
            return n
    return None
