"""Exhaustive search over the whole plan space (tests only): the reference
the pruned search in lab_core.planner.search must match."""
from lab_core import LabInputError, Parallelism, evaluate
from lab_core.context import context_for
from lab_core.planner.assumptions import MEMORY_SAFETY_MARGIN
from lab_core.planner.space import Space, divisors


def all_plans(workload):
    space = Space(workload)
    wctx = context_for(workload)
    for t, p, d in space.layouts(workload.gpus):
        R = wctx.batch_sequences // d
        for b in divisors(R):
            m = R // b
            vs = divisors(wctx.layers // p) if p > 1 and m % p == 0 else [1]
            for v in vs:
                for z in ((0, 1, 2, 3) if d > 1 else (0,)):
                    for r in ("none", "selective", "full"):
                        for sp in ((False, True) if t > 1 else (False,)):
                            yield Parallelism(tp=t, pp=p, dp=d, zero=z, recompute=r, sequence_parallel=sp,
                                              micro_batch=b, interleave=v)


def brute(workload):
    """[(goodput tokens/s, parallelism, report, needed_recompute_full, needs_sharding)] of every fitting plan."""
    wctx = context_for(workload)
    usable = wctx.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
    goodput = wctx.failures.goodput
    out = []
    reports = {}
    for par in all_plans(workload):
        rep = evaluate(workload, par)
        reports[(par.tp, par.pp, par.dp, par.zero, par.recompute, par.sequence_parallel, par.micro_batch,
                 par.interleave)] = rep
        if rep.memory_bytes <= usable:
            out.append((rep.tokens_per_s * (goodput if goodput > 0 else 1.0), par, rep))
    return out, reports, usable
