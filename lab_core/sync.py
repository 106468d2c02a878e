"""Data-parallel gradient synchronisation, ZeRO-3 gathers and the optimizer step.

One overlap window serves all overlappable traffic (DP gradients, ZeRO-3
gathers): compute can hide communication once, and a second of extra compute
hides at most calibration.DP_OVERLAP_FRACTION < 1 seconds, so more compute
never shortens the step.
"""
from . import calibration as cal
from .comms import group_time


class SyncTimes:
    """Seconds per step: DP gradient and ZeRO-3 traffic (total, exposed), optimizer."""

    __slots__ = ("dp_total", "dp_exposed", "zero_total", "zero_exposed", "optimizer", "link")


def gradient_sync(ctx, par, micro_batches, mb, pipe, params_per_gpu):
    """SyncTimes of Parallelism `par` given its micro-batch and pipeline times."""
    t, p, d, v, zero = par.tp, par.pp, par.dp, par.interleave, par.zero
    m = micro_batches
    ranks_per_node = dp_ranks_per_node(ctx, t, p, d)
    overlap = cal.DP_OVERLAP_FRACTION
    out = SyncTimes()
    out.link = "none" if d == 1 else ("nvlink" if ranks_per_node >= d else "inter_node")
    if zero >= 3 and d > 1:
        # Per micro-batch, every layer's 16-bit weights are all-gathered before
        # its forward and again before its backward, and its gradients are
        # reduce-scattered after it (arXiv:1910.02054 Sec 7.2.2: 3 Psi per
        # micro-batch; gradients are sharded, so they cannot be accumulated
        # unreduced over micro-batches). Prefetch runs one layer ahead inside
        # the same micro-batch: the first gather of each pass is exposed, the
        # rest competes for that pass's compute window.
        z3 = zero3_times(ctx, t, p, d)
        gather, fill, reduce = z3.gather, z3.layer_gather, z3.reduce
        exposed_forward = fill + excess(gather - fill, overlap * mb.forward)
        exposed_backward = fill + excess(gather + reduce - fill, overlap * (mb.backward + mb.recompute))
        out.zero_total = 2.0 * m * gather
        out.dp_total = m * reduce
        share = gather / (gather + reduce) if gather + reduce > 0.0 else 1.0
        out.zero_exposed = m * (exposed_forward + share * exposed_backward)
        out.dp_exposed = m * (1.0 - share) * exposed_backward
    else:
        # All-reduce, or reduce-scatter + all-gather under ZeRO-1/2: the same
        # 2 Psi volume (arXiv:1910.02054 Sec 7.1, 7.2.1), in buckets that
        # leave while the last micro-batch's backward runs.
        # With v interleaved chunks a chunk's gradients are final once its
        # last backward ends, spread over the drain phase: (v - 1)/v of the
        # drain bubble is idle time the buckets of finished chunks can use.
        out.dp_total = bucketed_time(ctx, params_per_gpu * ctx.grad_bytes, d, ranks_per_node, 2.0)
        out.dp_exposed = excess(out.dp_total, overlap * (mb.backward + mb.recompute) + (v - 1.0) / v * pipe.bubble)
        out.zero_total = out.zero_exposed = 0.0
    out.optimizer = optimizer_time(ctx, params_per_gpu, d, zero)
    return out


def optimizer_time(ctx, params_per_gpu, dp, zero):
    """One optimizer step over the parameters this GPU owns (all of them
    without ZeRO, 1/dp with it), streaming calibration.OPTIMIZER_BYTES_PER_PARAM
    bytes of HBM traffic per parameter."""
    owned = params_per_gpu / dp if zero >= 1 else params_per_gpu
    return owned * cal.OPTIMIZER_BYTES_PER_PARAM / ctx.hbm_rate


def excess(comm, window):
    """Communication time left exposed after a compute window."""
    return comm - window if comm > window else 0.0


def dp_ranks_per_node(ctx, tp, pp, dp):
    """Data-parallel ranks sharing a node (Megatron order: TP innermost, then DP)."""
    gpn = ctx.gpus_per_node
    per_node = gpn // (tp * pp) if tp * pp < gpn else 1
    return per_node if per_node < dp else dp


class Zero3Times:
    """ZeRO-3 traffic of one micro-batch on one GPU, seconds (see zero3_times)."""

    __slots__ = ("layer_gather", "gather", "reduce")

    def __init__(self, layer_gather, gather, reduce):
        self.layer_gather = layer_gather
        self.gather = gather
        self.reduce = reduce


def zero3_times(ctx, tp, pp, dp):
    """Per-layer weight all-gather, one pass's gathers and the gradient reduce-scatter.

    Messages are one layer's 16-bit weights (2 x layer params / t bytes) or
    its gradients (grad bytes x layer params / t), plus the embeddings
    (V h / t + s h) as one more message; each runs at the bus bandwidth of its
    own size (comms.size_efficiency) over the link the DP group spans.
    All-gather and reduce-scatter move (n - 1)/n of the message
    (arXiv:1910.02054 Sec 7.1). Inside one node that is an NVLink ring; a
    group that spans nodes is charged as a flat ring in which each GPU's
    share crosses its own NIC (no intra-node aggregation of the node's eight
    NICs, which gradient all-reduce buckets get, comms.group_time).
    ASSUMPTION, checked against the six ZeRO-3 rows of arXiv:2104.04473
    Table 2 (DeepSpeed ZeRO-3, 175B and 530B on 384-2,240 A100s): with it the
    model is 11-40% faster than published (mean +25%); with hierarchical
    aggregation it was 42-362% faster.
    """
    rpn = dp_ranks_per_node(ctx, tp, pp, dp)
    if rpn < dp:
        rpn = 1
    layer = ctx.layer_params / tp
    emb = ctx.vocab * ctx.hidden / tp + ctx.seq_len * ctx.hidden
    nvl, nic = ctx.nvlink_rate, ctx.nic_rate
    g_layer = group_time(2.0 * layer, dp, rpn, nvl, nic, 1.0)
    gather = (ctx.layers / pp) * g_layer + group_time(2.0 * emb, dp, rpn, nvl, nic, 1.0)
    g = ctx.grad_bytes
    reduce = ((ctx.layers / pp) * group_time(g * layer, dp, rpn, nvl, nic, 1.0)
              + group_time(g * emb, dp, rpn, nvl, nic, 1.0))
    return Zero3Times(g_layer, gather, reduce)


def bucketed_time(ctx, volume, ranks, ranks_per_node, factor):
    """Collective time of `volume` bytes sent in buckets of calibration.DP_BUCKET_BYTES
    (the bucket size is the message size NCCL sees)."""
    bucket = cal.DP_BUCKET_BYTES
    if ranks <= 1 or volume <= 0.0:
        return 0.0
    if volume <= bucket:
        return group_time(volume, ranks, ranks_per_node, ctx.nvlink_rate, ctx.nic_rate, factor)
    return volume / bucket * group_time(bucket, ranks, ranks_per_node, ctx.nvlink_rate, ctx.nic_rate, factor)
