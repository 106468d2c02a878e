"""shapes.possible_classes and leanest_classes: the shapes a grid's plans can have, which
the search uses to skip a grid that cannot beat a shape's best. Checked against the memory of every plan of
the grid (bounds.plan_memory, evaluate()'s figure exactly; test_planner_bounds.py)."""
import random

import pytest

from lab_core.planner import search
from lab_core.planner.bounds import plan_memory
from lab_core.planner.shapes import leanest_classes, possible_classes, shape_classes
from lab_core.planner.space import space_for
from planner_random import random_workload


def _least_modes(run, grid, choices):
    """The least recompute mode that fits of every plan of the grid (the search evaluates no other)."""
    ctx = run.ctx
    replica = ctx.batch_sequences // grid.dp
    out = []
    for b in choices.micro_batches(replica):
        for v in choices.interleaves(grid, ctx.layers, replica // b):
            for zero in choices.zeros(grid):
                for mode in choices.modes:
                    if plan_memory(ctx, grid, zero, mode, b, v, choices.sp(grid)) <= run.usable:
                        out.append(mode)
                        break
    return out


def _split_grids(rng):
    """(run, choices, grid) of the first grids of random workloads that split the model
    (tp, cp, pp or ep above 1), without end."""
    while True:
        w, _ = random_workload(rng, [8, 16, 64, 128, 512], long_share=0.5)
        run = search._Search(w, None)
        choices = search.Choices(run.ctx, None)
        for grid in space_for(w).layouts(w.gpus)[:10]:
            if grid.tp * grid.cp * grid.pp * grid.ep > 1:
                yield run, choices, grid


@pytest.mark.parametrize("seed", range(3))
def test_possible_classes_hold_every_plan_of_the_grid(seed):
    """A grid classed full_3d only has no plan that fits without full recompute; one classed
    tensor_pipeline only has none that needs it; both kinds occur."""
    seen = {"full_only": 0, "split_only": 0}
    checked = 0
    for run, choices, grid in _split_grids(random.Random(seed)):
        largest = search._largest_micro_batch(run, grid, choices)
        if largest is None:
            continue
        classes = possible_classes(run, grid, choices, largest)
        modes = _least_modes(run, grid, choices)
        if classes == ("full_3d",):
            assert set(modes) == {"full"}
            seen["full_only"] += 1
        elif classes == ("tensor_pipeline",):
            assert "full" not in modes
            seen["split_only"] += 1
        checked += 1
        if checked == 400:
            break
    assert seen["full_only"] >= 5 and seen["split_only"] >= 5, seen


@pytest.mark.parametrize("seed", range(3))
def test_leanest_classes_hold_every_plan_of_the_grid(seed):
    """Asked before any micro-batch is known to fit (the search's first floors): a grid it
    classes full_3d only has no plan that fits without full recompute, and the others keep
    every shape of the grid; both kinds occur."""
    seen = {"full_only": 0, "both": 0}
    checked = 0
    for run, choices, grid in _split_grids(random.Random(100 + seed)):
        if not choices.micro_batches(run.ctx.batch_sequences // grid.dp) or not choices.zeros(grid):
            continue
        classes = leanest_classes(run, grid, choices)
        if classes == ("full_3d",):
            assert set(_least_modes(run, grid, choices)) <= {"full"}
            seen["full_only"] += 1
        else:
            assert classes == shape_classes(grid)
            seen["both"] += 1
        checked += 1
        if checked == 400:
            break
    assert seen["full_only"] >= 5 and seen["both"] >= 5, seen
