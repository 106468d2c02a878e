"""The quick answer's warm start: the plan on screen, carried to the new workload.

A slider move changes the workload a little, and the plan the reader is
looking at (its layout, ZeRO stage, recompute, micro-batch and interleaving)
moved to the nearest grids of the new workload usually still fits and is
close to the best. The quick search (search.search(budget=..., hint=...))
evaluates those few plans before anything else and, when one fits, answers
with the best of them at once, marked provisional; the full search the page
asks for next replaces it. A hint never brings in a plan the full search
could not return: only grids of the new workload's space within the pins,
and values the search itself tries on them, are used.

hint: the plan on screen as Plan.to_dict()["parallelism"] (tp, cp, pp, ep,
first_stage_layers, last_stage_layers, zero, recompute, micro_batch,
interleave); missing fields count as 1, 0 or "none".
"""
import math

from .assumptions import WARM_START_GRIDS
from .space import Grid

_DEGREES = ("tp", "cp", "pp", "ep")


def _number(hint, name, default):
    value = hint.get(name)
    return value if isinstance(value, int) and value >= default else default


def _distance(grid, hint):
    """How far a grid is from the hint's layout: log2 steps of each degree, half a step for another split."""
    steps = 0.0
    for name in _DEGREES:
        steps += abs(math.log2(getattr(grid, name) / _number(hint, name, 1)))
    same_split = (grid.first, grid.last) == (_number(hint, "first_stage_layers", 0),
                                            _number(hint, "last_stage_layers", 0))
    return steps if same_split else steps + 0.5


def own_grid(grids, hint, gpus):
    """The hint's own layout on `gpus` GPUs (its tp, cp, pp, ep and split, the
    data parallelism the rest): the grid nearest the hint (distance 0), when it
    is one of `grids`, else None. Found without ranking every grid, so a move
    whose layout still exists (most moves but the GPU count's) pays for one grid."""
    tp, cp, pp = _number(hint, "tp", 1), _number(hint, "cp", 1), _number(hint, "pp", 1)
    if gpus % (tp * cp * pp):
        return None
    grid = Grid(tp, cp, pp, gpus // (tp * cp * pp), _number(hint, "ep", 1), _number(hint, "first_stage_layers", 0),
                _number(hint, "last_stage_layers", 0))
    return grid if grid in grids else None


def warm_tiers(grids, hint, gpus):
    """The grids a warm start looks at, tier by tier: the hint's own layout on
    `gpus`, then the WARM_START_GRIDS nearest grids, ranked only when the first
    tier did not do (the own layout is among them again; the search does not
    evaluate a plan twice)."""
    own = own_grid(grids, hint, gpus)
    if own is not None:
        yield [own]
    yield nearest_grids(grids, hint)


def nearest_grids(grids, hint):
    """The WARM_START_GRIDS grids nearest the hint's layout (first in the space's order on ties)."""
    order = sorted(range(len(grids)), key=lambda i: (_distance(grids[i], hint), i))
    return [grids[i] for i in order[:WARM_START_GRIDS]]


def _at_most(values, target):
    """The largest of ascending `values` not above `target`, else the smallest."""
    chosen = values[0]
    for value in values:
        if value > target:
            break
        chosen = value
    return chosen


def warm_plans(grid, hint, choices, batch_sequences, layers):
    """[(zero, recompute, sequence_parallel, micro_batch, interleave)] to try on
    `grid`: the hint's settings as near as the grid allows, then the leanest
    ZeRO stage and recompute at that micro-batch, then at micro-batch 1."""
    zeros = choices.zeros(grid)
    replica = batch_sequences // grid.dp
    sizes = choices.micro_batches(replica)
    if not zeros or not sizes:
        return []
    wanted_zero = _number(hint, "zero", 0)
    zero = min(zeros, key=lambda z: (abs(z - wanted_zero), z))
    modes = choices.modes
    mode = hint.get("recompute") if hint.get("recompute") in modes else modes[-1]
    b = _at_most(sizes, _number(hint, "micro_batch", 1))
    out = []
    for z, m, size in ((zero, mode, b), (zeros[-1], modes[-1], b), (zeros[-1], modes[-1], sizes[0])):
        vs = choices.interleaves(grid, layers, replica // size)
        if not vs:
            continue
        plan = (z, m, choices.sp(grid), size, _at_most(vs, _number(hint, "interleave", 1)))
        if plan not in out:
            out.append(plan)
    return out
