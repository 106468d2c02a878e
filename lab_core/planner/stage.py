"""Stage: the shape of system the workload forces, one id.

STAGES are ordered; a later one is a bigger system. The stage comes from what
the chosen plan has to hold and where it runs, computed with the model's own
memory accounting (ZeRO, arXiv:1910.02054 Sec 3.1 and 5) and failure model,
never from slider values:

  single_gpu       one GPU;
  data_parallel    a whole replica's training state fits one GPU (DP works);
  zero_sharded     it does not, but the weights do and ZeRO-2 over the largest
                   data-parallel group fits: shard optimizer state + gradients;
  tensor_pipeline  the weights exceed a GPU but fit one node split t ways: the
                   model itself is split (TP inside the node, PP, or ZeRO-3's
                   fully sharded weights);
  full_3d          the weights exceed a whole node: split across nodes (TP + PP +
                   DP, with activation recompute where it must);
  at_scale         a multi-node job with at least AT_SCALE_INTERRUPTIONS_PER_DAY
                   expected interruptions: checkpoint-and-recover is part of the
                   system (arXiv:2407.21783 Sec 3.3.4).

It uses the training state only (activations are the activation decision's
business), so it never goes backwards as params grow: every test is a bound
on bytes proportional to the parameter count. The chosen plan may go further
than its stage when that is faster (plan_shape says what it actually uses).
"""
from ..memory import WEIGHT_BYTES
from .assumptions import AT_SCALE_INTERRUPTIONS_PER_DAY

STAGES = ("single_gpu", "data_parallel", "zero_sharded", "tensor_pipeline", "full_3d", "at_scale")


def stage_params(workload):
    """The parameter count the stage is judged on: the reader's `params` when the
    shape is derived from it (the rounded shape's count jitters by a few %),
    else the count of the shape the reader gave."""
    derived = workload.shape.derived
    if "layers" in derived and "hidden" in derived:
        return float(workload.params)
    return workload.shape.params


def largest_dp(batch_sequences, gpus):
    """Largest data-parallel degree: a divisor of the batch of sequences, at most the GPUs."""
    for d in range(min(batch_sequences, gpus), 0, -1):
        if batch_sequences % d == 0:
            return d
    return 1


def workload_stage(workload, usable_bytes, interruptions_per_day):
    """The stage id for a workload (see module docstring)."""
    gpus = workload.gpus
    gpn = workload.gpus_per_node
    if gpus == 1:
        return "single_gpu"
    if gpus > gpn and interruptions_per_day >= AT_SCALE_INTERRUPTIONS_PER_DAY:
        return "at_scale"
    params = stage_params(workload)
    state = workload.state_bytes_per_param * params
    weights = WEIGHT_BYTES * params
    if state <= usable_bytes:
        return "data_parallel"
    d = largest_dp(workload.batch_sequences, gpus)
    if weights + (state - weights) / d <= usable_bytes:
        return "zero_sharded"
    if weights / min(gpn, gpus) <= usable_bytes:
        return "tensor_pipeline"
    return "full_3d"


def shape_stage_parts(t, p, d, zero, recompute, needs_sharding=True, cp=1, ep=1):
    """What a plan uses, in stage ids (for alternatives and plan_shape).

    single_gpu: one GPU; data_parallel: replicas (ZeRO only for speed);
    zero_sharded: replicas that must shard state to fit (needs_sharding: the
    ZeRO-0 twin would not fit); tensor_pipeline: the model itself is split
    (TP, CP, PP or EP); full_3d: split with full activation recompute
    (arXiv:2205.05198 Sec 5).
    """
    if t * cp * p * d == 1:
        return "single_gpu"
    if t * cp * p * ep == 1:
        return "zero_sharded" if zero >= 1 and needs_sharding else "data_parallel"
    return "full_3d" if recompute == "full" else "tensor_pipeline"


def shape_stage(par, needs_sharding=True):
    return shape_stage_parts(par.tp, par.pp, par.dp, par.zero, par.recompute, needs_sharding, par.cp, par.ep)


def stage_rank(stage):
    return STAGES.index(stage)
