"""Exhaustive search over the whole plan space (tests only): the reference
the pruned search in lab_core.planner.search must match."""
from lab_core import evaluate
from lab_core.context import context_for
from lab_core.parallelism import zero_stages
from lab_core.planner.assumptions import MEMORY_SAFETY_MARGIN
from lab_core.planner.search import make_parallelism
from lab_core.planner.space import divisors, space_for
from planner_random import interleavings


def all_plans(workload, grids=None):
    """Every plan of the planner's space (or of `grids`) its pipeline schedule can run."""
    wctx = context_for(workload)
    for grid in space_for(workload).layouts(workload.gpus) if grids is None else grids:
        R = wctx.batch_sequences // grid.dp
        for b in divisors(R):
            for v in interleavings(workload, grid, R // b):
                for z in zero_stages(workload.stack, grid.pp, grid.shards):
                    for r in ("none", "selective", "full"):
                        for sp in ((False, True) if grid.tp > 1 else (False,)):
                            yield make_parallelism(grid, z, r, sp, b, v)


def brute(workload, grids=None):
    """([(goodput tokens/s, parallelism, report)] of every fitting plan, {plan: report}, usable bytes)."""
    wctx = context_for(workload)
    usable = wctx.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
    goodput = wctx.failures.goodput
    out = []
    reports = {}
    for par in all_plans(workload, grids):
        rep = evaluate(workload, par)
        reports[par] = rep
        if rep.memory_bytes <= usable:
            out.append((rep.tokens_per_s * (goodput if goodput > 0 else 1.0), par, rep))
    return out, reports, usable
