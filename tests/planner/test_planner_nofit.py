"""The no-fit answer's "smallest GPU count that fits" (nofit.smallest_fitting)
against an exhaustive scan of every (tp, cp, pp, split, dp): the pruned binary
search must find the same count and the same grid. The same for the largest
count within the reader's GPUs (nofit.largest_fitting, tried from the most GPUs down)."""
import random

from lab_core.context import context_for
from lab_core.planner.assumptions import MAX_GPUS_SEARCHED, MEMORY_SAFETY_MARGIN
from lab_core.planner.bounds import floor_memory
from lab_core.planner.nofit import _grid, _parts, largest_fitting, smallest_fitting
from lab_core.planner.space import space_for

from planner_random import random_workload


def exhaustive_smallest(wctx, space, usable, at_most=MAX_GPUS_SEARCHED):
    best = None
    for t, c, p, first, last in _parts(space, None):
        for d in space.dps:
            grid = _grid(space, t, c, p, first, last, d)
            if grid.gpus <= at_most and floor_memory(wctx, grid) <= usable:
                if best is None or (grid.gpus, grid) < best:
                    best = (grid.gpus, grid)
                break  # the floor only falls as dp grows: larger dp use more GPUs
    return best


def test_smallest_fitting_matches_an_exhaustive_scan():
    rng = random.Random(20261130)
    checked = fitting = 0
    while checked < 60:
        w, _ = random_workload(rng, [1, 2, 8, 64, 512, 4096], max_log_params=12.6)
        wctx = context_for(w)
        space = space_for(w)
        usable = wctx.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
        for at_most in (MAX_GPUS_SEARCHED, 64):
            expected = exhaustive_smallest(wctx, space, usable, at_most)
            assert smallest_fitting(wctx, space, usable, at_most) == expected, w
            fitting += expected is not None
        checked += 1
    # The draw covers both answers: some workloads fit somewhere, some nowhere within 64 GPUs.
    assert 0 < fitting < 2 * checked


def exhaustive_largest(wctx, space, usable, at_most):
    best = None
    for t, c, p, first, last in _parts(space, None):
        for d in space.dps:
            grid = _grid(space, t, c, p, first, last, d)
            if grid.gpus <= at_most and floor_memory(wctx, grid) <= usable and (best is None or grid.gpus > best):
                best = grid.gpus
    return best


def test_largest_fitting_matches_an_exhaustive_scan():
    rng = random.Random(20261201)
    answers = set()
    for _ in range(40):
        w, _ = random_workload(rng, [1, 2, 8, 64, 512, 4096], max_log_params=12.6)
        wctx = context_for(w)
        space = space_for(w)
        usable = wctx.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
        for at_most in (w.gpus, 96, 1):
            expected = exhaustive_largest(wctx, space, usable, at_most)
            assert largest_fitting(wctx, space, usable, at_most) == expected, (w, at_most)
            answers.add(expected is None)
    assert answers == {True, False}  # some fit within the count, some do not
