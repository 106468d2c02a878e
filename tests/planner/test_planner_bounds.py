"""The planner's step-time bound (bounds.StepBound) never exceeds evaluate()'s step time."""
import random

import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.planner.bounds import StepBound
from lab_core.planner.space import Space, divisors


def _plans(seed, n):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        w = Workload(params=float("%.3g" % 10 ** rng.uniform(8.2, 12.3)),
                     gpus=rng.choice([1, 8, 16, 64, 128, 512, 1024]),
                     global_batch_tokens=int(2 ** rng.uniform(16, 22)), seq_len=rng.choice([512, 2048, 8192]),
                     flash_attention=rng.random() < 0.5, inter_node_gbps=float("%.3g" % 10 ** rng.uniform(1.4, 3.5)),
                     gpu=rng.choice(["a100_80gb", "h100_80gb"]))
        layouts = Space(w).layouts(w.gpus)
        if not layouts:
            continue
        t, p, d = rng.choice(layouts)
        R = w.batch_sequences // d
        b = rng.choice(divisors(R))
        m = R // b
        vs = divisors(w.shape.layers // p) if p > 1 and m % p == 0 else [1]
        par = Parallelism(tp=t, pp=p, dp=d, zero=rng.choice((0, 1, 2, 3)) if d > 1 else 0,
                          recompute=rng.choice(("none", "selective", "full")),
                          sequence_parallel=t > 1 and rng.random() < 0.8,
                          micro_batch=b, interleave=rng.choice(vs))
        out.append((w, par))
    return out


@pytest.mark.parametrize("w,par", _plans(4, 150))
def test_step_bound_never_exceeds_evaluate(w, par):
    wctx = context_for(w)
    probe = evaluate(w, Parallelism(tp=par.tp, pp=par.pp, dp=par.dp, zero=1 if par.dp > 1 else 0,
                                    sequence_parallel=par.tp > 1))
    bound = StepBound(wctx, par.tp, par.pp, par.dp, probe)
    step = evaluate(w, par).step_s
    lower = bound.step(par.micro_batch, par.interleave, par.zero, par.recompute, par.sequence_parallel or par.tp == 1)
    assert lower <= step * (1 + 1e-12)
