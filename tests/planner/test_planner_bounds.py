"""The planner's bounds: memory is evaluate()'s figure exactly, and the step-time
bound (bounds.StepBound) never exceeds evaluate()'s step time, for plans with
context and expert parallelism, uneven pipeline splits, every stack and fp8."""
import random

import pytest

from lab_core import Parallelism, evaluate
from lab_core.context import context_for
from lab_core.planner.bounds import SharedFloor, StepBound, plan_memory, shared_floor_applies
from lab_core.planner.space import Grid, space_for
from planner_random import random_plan, random_workload


def _plans(seed, n):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        w, _ = random_workload(rng, [1, 8, 16, 64, 128, 512, 1024])
        out.append((w, random_plan(rng, w)))
    return out


PLANS = _plans(4, 300)


def test_random_plans_cover_the_new_dimensions():
    pars = [par for _, par in PLANS]
    assert any(p.cp > 1 for p in pars) and any(p.ep > 1 for p in pars)
    assert any(p.first_stage_layers for p in pars)
    assert {w.stack for w, _ in PLANS} == {"modern", "torch_native", "megatron_lm_2021"}
    assert any(w.precision == "fp8" for w, _ in PLANS)


@pytest.mark.parametrize("w,par", PLANS)
def test_memory_is_exact_and_step_bound_never_exceeds_evaluate(w, par):
    wctx = context_for(w)
    grid = Grid.of(par)
    probe = evaluate(w, Parallelism(zero=1 if grid.shards else 0, sequence_parallel=par.tp > 1,
                                    **grid.parallelism_fields()))
    bound = StepBound(wctx, grid, probe)
    report = evaluate(w, par)
    memory = plan_memory(wctx, grid, par.zero, par.recompute, par.micro_batch, par.interleave,
                         par.sequence_parallel)
    assert memory == pytest.approx(report.memory_bytes, rel=1e-12)
    lower = bound.step(par.micro_batch, par.interleave, par.zero, par.recompute, par.sequence_parallel or par.tp == 1)
    assert lower <= report.step_s * (1 + 1e-12)
    every_zero = bound.step(par.micro_batch, par.interleave, None, par.recompute,
                            par.sequence_parallel or par.tp == 1)
    assert every_zero <= lower * (1 + 1e-12)
    # A row's floor before its bound (search._Layout): below every plan at this interleaving or less.
    assert bound.row_floor(par.micro_batch, par.interleave) <= every_zero


@pytest.mark.parametrize("w,par", [(w, par) for w, par in PLANS if shared_floor_applies(context_for(w))][:160])
def test_shared_floor_never_exceeds_evaluate(w, par):
    """The floor built for another grid with the same tp, cp and ep (flash attention; dense,
    mixture-of-experts and mixed layers)."""
    wctx = context_for(w)
    grid = Grid.of(par)
    others = [g for g in space_for(w).layouts(w.gpus) if (g.tp, g.cp, g.ep) == (grid.tp, grid.cp, grid.ep)]
    reference = others[(par.micro_batch + par.interleave) % len(others)]
    shared = SharedFloor(wctx, reference)
    mode = "full" if par.recompute == "full" else "none"
    step = evaluate(w, par).step_s
    assert shared.floor(wctx, grid, par.micro_batch, mode) <= step * (1 + 1e-12)
    assert shared.least(wctx, grid, [(par.micro_batch, par.interleave)], mode) <= step * (1 + 1e-12)
    # Bounded with its own class of ZeRO stage (search._grid_floor) and its own recompute.
    row = [(par.micro_batch, par.interleave, par.recompute)]
    assert shared.least(wctx, grid, row, zero3=par.zero == 3) <= step * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_row_modes_by_binary_search_are_each_micro_batch_least_mode(seed):
    """search._row_modes finds each recompute mode's last fitting micro-batch by a binary
    search (memory grows with the micro-batch): the same modes as asking each size."""
    from lab_core.planner import search

    rng = random.Random(seed)
    checked = 0
    while checked < 40:
        w, _ = random_workload(rng, [1, 8, 16, 64, 128, 512, 1024])
        run = search._Search(w, None)
        choices = search.Choices(run.ctx.flash, None, run.ctx.per_op_selective)
        for grid in space_for(w).layouts(w.gpus)[:12]:
            largest = search._largest_micro_batch(run, grid, choices)
            if largest is None:
                continue
            sizes = [b for b in choices.micro_batches(run.ctx.batch_sequences // grid.dp) if b <= largest]
            state = search.stage_state_bytes(run.ctx, grid, choices.zeros(grid)[-1])
            expected = [search._least_mode(run, grid, choices, state, b, 1) for b in sizes]
            assert search._row_modes(run, grid, choices, sizes) == expected
            checked += 1
