"""Curves of one plan: how its memory and step time move with one input.

Each curve holds the plan's layout and varies one thing, evaluating every
point with evaluate() (the same figures as the plan's own):

- memory against the sequence length: the same number of sequences per step
  (so the layout stays valid), sequences of 512 tokens up to the slider's
  maximum, doubling;
- memory against the micro-batch: every micro-batch that divides a
  replica's share of the batch;
- step time against the GPU count (strong scaling, arXiv:2104.04473 Sec 5.4):
  the same global batch and model-parallel layout on more or fewer
  data-parallel replicas, with the largest micro-batch up to the plan's that
  divides the replica's share.

A point the layout cannot run (a global batch past its limit, a micro-batch
count the interleaved schedule cannot use) is kept with ``ok`` False and its
reason, so the page can say why it is missing. Points also say whether the
plan fits the device (``fits``: evaluate's memory within the device).
"""
import dataclasses

from .errors import LabInputError
from .evaluate import evaluate
from .inputs import SPEC_BY_NAME
from .planner.space import divisors
from .planner.steps import finish

# At most this many points per curve (log-spaced when there are more candidates). TEACHING ASSUMPTION:
# enough to see the shape, few enough to compute after every move in the browser.
MAX_POINTS = 16


def _thin(values, limit=MAX_POINTS):
    """At most ``limit`` of ascending ``values``, spread evenly by index, keeping both ends."""
    if len(values) <= limit:
        return list(values)
    last = len(values) - 1
    picked = sorted({round(i * last / (limit - 1)) for i in range(limit)})
    return [values[i] for i in picked]


def _point(x, workload, par):
    try:
        report = evaluate(workload, par)
    except LabInputError as err:
        return {"x": x, "ok": False, "reason": err.reason, "field": err.field}
    return {"x": x, "ok": True, "weights_bytes": report.weights_bytes, "gradients_bytes": report.gradients_bytes,
            "optimizer_bytes": report.optimizer_bytes, "activations_bytes": report.activations_bytes,
            "loss_bytes": report.loss_bytes, "memory_bytes": report.memory_bytes, "device_bytes": report.device_bytes, "fits": report.fits,
            "step_s": report.step_s, "gpus": par.model_parallel * par.dp, "micro_batch": par.micro_batch,
            "dp": par.dp}


def memory_against_seq_len(workload, par):
    """Points for sequence lengths 512, 1,024 … up to the slider's maximum (as steps)."""
    spec = SPEC_BY_NAME["seq_len"]
    sequences = workload.batch_sequences
    points, s = [], int(spec.minimum)
    while s <= spec.maximum:
        try:
            w = dataclasses.replace(workload, seq_len=s, global_batch_tokens=sequences * s)
        except LabInputError as err:
            points.append({"x": s, "ok": False, "reason": err.reason, "field": err.field})
        else:
            points.append(_point(s, w, par))
            yield
        s *= 2
    return points


def memory_against_micro_batch(workload, par):
    """Points for every micro-batch dividing a replica's share of the batch (as steps)."""
    per_replica = workload.batch_sequences // par.dp
    points = []
    for b in _thin(divisors(per_replica)):
        points.append(_point(b, workload, dataclasses.replace(par, micro_batch=b)))
        yield
    return points


def step_against_gpus(workload, par):
    """Points for data-parallel degrees dividing the batch (GPU counts up to the slider's maximum; as steps)."""
    spec = SPEC_BY_NAME["gpus"]
    mp = par.model_parallel
    degrees = [d for d in divisors(workload.batch_sequences) if mp * d <= spec.maximum]
    points = []
    for d in _thin(degrees):
        per_replica = workload.batch_sequences // d
        b = max(k for k in divisors(per_replica) if k <= par.micro_batch)
        try:
            w = dataclasses.replace(workload, gpus=mp * d)
        except LabInputError as err:
            points.append({"x": mp * d, "ok": False, "reason": err.reason, "field": err.field})
            continue
        shard = par.dp_shard if par.dp_shard and d % par.dp_shard == 0 else 0
        points.append(_point(mp * d, w, dataclasses.replace(par, dp=d, micro_batch=b, dp_shard=shard)))
        yield
    return points


# Each builder is a steps generator (planner/steps.py): it yields after each point, returns the points.
CURVES = {"seq_len": memory_against_seq_len, "micro_batch": memory_against_micro_batch, "gpus": step_against_gpus}


def curves(workload, par):
    """Every curve of the plan ``par`` (a Parallelism) of ``workload``: {name: [point]}."""
    return finish(curves_steps(workload, par))


def curves_steps(workload, par):
    """curves() as steps (planner/steps.py), one point each: the lab's worker
    computes them between the reader's moves, and a move drops them."""
    out = {}
    for name, build in CURVES.items():
        out[name] = yield from build(workload, par)
    return out
