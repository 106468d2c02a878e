"""One micro-batch on the bottleneck pipeline stage, and the pipeline around it.

micro_batch_times: forward, backward, recompute and tensor-parallel time of
the stage's layers (timing.layer_times) plus the output layer and loss on
the last stage, the context-parallel exchange of keys and values, and the
stage-to-stage sends. With an uneven split the slowest stage sets the pace.
pipeline_times: the 1F1B schedule of m micro-batches with v interleaved
chunks (arXiv:2104.04473 Sec 2.2): m steady slots and a fill-and-drain
bubble (pipeline.bubble_time).
"""
from . import calibration as cal
from .comms import point_to_point_time
from .efficiency import attention_rate, gemm_rate
from .pipeline import bubble_time
from .timing import layer_times, logits_times


class MicroBatchTimes:
    """Seconds of one micro-batch on the bottleneck stage, by part.

    tp_comm and cp_comm are what stays exposed; *_total what the collectives
    take in all. layer_forward / layer_backward are one layer's compute (the
    windows per-layer ZeRO-3 gathers hide behind); layers is the stage's count.
    """

    __slots__ = ("forward", "backward", "recompute", "tp_comm", "tp_comm_total", "cp_comm", "cp_comm_total",
                 "p2p", "layer_forward", "layer_backward", "layers", "stage")

    @property
    def busy(self):
        """Compute and exposed in-stage communication, the part sends can hide behind."""
        return self.forward + self.backward + self.recompute + self.tp_comm + self.cp_comm


def micro_batch_times(ctx, par, layout):
    """MicroBatchTimes of Parallelism `par` (sources in timing.py and below)."""
    t, cp, b = par.tp, par.cp, par.micro_batch
    s, h = ctx.seq_len, ctx.hidden
    tokens = b * s / cp
    device = ctx.device
    rate = gemm_rate(device, ctx.precision, tokens, h / t)
    flash_rate = attention_rate(device) if ctx.flash else None
    sp = par.sequence_parallel and t > 1
    layer = layer_times(s, b, h, ctx.heads, ctx.ffn_hidden, t, sp, par.recompute, ctx.flash, rate,
                        ctx.hbm_rate, ctx.nvlink_rate, ctx.kv_ratio, ctx.dropout, flash_rate, ctx.flash, cp)
    tp_exposed = tensor_parallel_exposed(ctx, layer, t, sp)
    cp_total, cp_exposed = context_parallel_times(ctx, par, layer)
    # The output layer stays in 16-bit (arXiv:2209.05433 Sec 4).
    logits_rate = gemm_rate(device, "bf16", tokens, h / t)
    logits = logits_times(s / cp, b, h, ctx.vocab, t, logits_rate, ctx.hbm_rate)
    per_layer = layer.forward + layer.backward + layer.recompute + tp_exposed + cp_exposed
    # The last stage (a single stage is one) also runs the output layer and loss.
    stages = [("last", layout.last_layers)]
    if par.pp > 1:
        stages += [("first", layout.first_layers)] + ([("middle", layout.middle_layers)] if par.pp > 2 else [])
    best = None
    for stage, layers in stages:
        busy = layers * per_layer + (logits[0] + logits[1] if stage == "last" else 0.0)
        if best is None or busy > best[0]:
            best = (busy, stage, layers)
    _, stage, layers = best
    mb = MicroBatchTimes()
    mb.stage, mb.layers = stage, layers
    on_last = stage == "last"
    mb.forward = layers * layer.forward + (logits[0] if on_last else 0.0)
    mb.backward = layers * layer.backward + (logits[1] if on_last else 0.0)
    mb.recompute = layers * layer.recompute
    mb.tp_comm = layers * tp_exposed
    mb.tp_comm_total = layers * layer.tp_comm
    mb.cp_comm = layers * cp_exposed
    mb.cp_comm_total = layers * cp_total
    mb.layer_forward = layer.forward
    mb.layer_backward = layer.backward + layer.recompute
    mb.p2p = pipeline_send_time(ctx, par)
    return mb


def tensor_parallel_exposed(ctx, layer, tp, sequence_parallel):
    """Tensor-parallel time one layer cannot hide.

    The 2021 stack and plain all-reduces expose it all (calibration.
    TP_BACKWARD_OVERLAP). The modern stack with overlap on and sequence
    parallelism splits each all-gather / reduce-scatter into t ring steps
    pipelined with chunks of the GEMM next to it (Transformer Engine
    userbuffers, arXiv:2406.06858 Sec 3; torchtitan async TP): the first step
    waits, the rest hides behind the layer's GEMMs (forward, and twice that in
    backward), slowing them by calibration.COMM_CONTENTION.
    """
    comm = layer.tp_comm
    if not (ctx.tp_overlap and sequence_parallel and tp > 1) or comm <= 0.0:
        return comm
    window = 3.0 * layer.gemm_forward
    first = comm / tp
    rest = comm - first
    exposed = first + (rest - window if rest > window else 0.0)
    return exposed + cal.COMM_CONTENTION * (comm - exposed)


def context_parallel_times(ctx, par, layer):
    """(total, exposed) seconds of the context-parallel key/value exchange of one layer.

    Megatron-Core's default ring (--cp-comm-type p2p, arXiv:2310.01889 Ring
    Attention; Llama 3 Sec 3.3.2 gathers K/V instead): cp - 1 steps, each
    sending one rank's keys and values, 2 b (s / cp) (h r / t) 16-bit values
    (r = key/value heads / heads), while the attention of the block already
    there runs; backward sends them again plus their gradients. Each step
    exposes what its attention block does not cover.
    """
    cp = par.cp
    if cp == 1:
        return 0.0, 0.0
    t = par.tp
    block = 2.0 * 2.0 * par.micro_batch * (ctx.seq_len / cp) * ctx.hidden * ctx.kv_ratio / t
    link = ctx.nvlink_rate if t * cp <= ctx.gpus_per_node else ctx.nic_rate
    step = point_to_point_time(block, link)
    attention_step = layer.attention_forward / cp
    forward = (cp - 1) * (step - attention_step if step > attention_step else 0.0)
    backward = (cp - 1) * (2.0 * step - 2.0 * attention_step if step > attention_step else 0.0)
    total = 3.0 * (cp - 1) * step
    exposed = forward + backward
    if ctx.modern:
        exposed += cal.COMM_CONTENTION * (total - exposed)
    return total, exposed


def pipeline_send_time(ctx, par):
    """Stage-to-stage sends of one micro-batch, forward and backward.

    Activations cross stage boundaries as b (s / cp) h 16-bit values, split t
    ways by Megatron's scatter/gather (arXiv:2104.04473 Sec 4.1), forward and
    backward, v times with interleaving; over NVLink while a pipeline's GPUs
    fit one node, else over the inter-node fabric.
    """
    tp, pp, cp = par.tp, par.pp, par.cp
    if pp == 1:
        return 0.0
    link = ctx.nvlink_rate if tp * cp * pp <= ctx.gpus_per_node else ctx.nic_rate
    size = 2.0 * par.micro_batch * (ctx.seq_len / cp if cp > 1 else ctx.seq_len) * ctx.hidden / tp
    return 2.0 * par.interleave * point_to_point_time(size, link)


class PipelineTimes:
    """The step's compute part: m steady slots and the fill-and-drain bubble."""

    __slots__ = ("busy", "steady", "bubble")


def pipeline_times(mb, pp, interleave):
    """Sends run asynchronously behind the next chunk's compute in the steady
    1F1B phase (Llama 3, arXiv:2407.21783 Sec 3.3.2; Megatron-Core's overlapped
    p2p): a slot lasts max(compute, sends). In the fill and drain phases each
    hop waits for its data, so the bubble carries both (pipeline.bubble_time).
    With uneven stages the slowest stage's slot is used throughout.
    """
    pipe = PipelineTimes()
    pipe.busy = mb.busy
    pipe.steady = pipe.busy if pipe.busy >= mb.p2p else mb.p2p
    pipe.bubble = bubble_time(pp, interleave, pipe.busy + mb.p2p)
    return pipe
