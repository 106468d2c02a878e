"""One micro-batch on the bottleneck pipeline stage, and the pipeline around it.

micro_batch_times: forward, backward, recompute and tensor-parallel time of
L/p layers (timing.layer_times) plus the output layer and loss (the last
stage carries them), and the stage-to-stage sends.
pipeline_times: the 1F1B schedule of m micro-batches with v interleaved
chunks (arXiv:2104.04473 Sec 2.2): m steady slots and a fill-and-drain
bubble (pipeline.bubble_time).
"""
from .comms import point_to_point_time
from .pipeline import bubble_time
from .timing import layer_times, logits_times


class MicroBatchTimes:
    """Seconds of one micro-batch on the bottleneck stage, by part."""

    __slots__ = ("forward", "backward", "recompute", "tp_comm", "p2p")

    @property
    def busy(self):
        """Compute and tensor-parallel time, the part sends can hide behind."""
        return self.forward + self.backward + self.recompute + self.tp_comm


def micro_batch_times(ctx, par):
    """MicroBatchTimes of Parallelism `par` (sources in timing.py and below)."""
    t, p, b, v = par.tp, par.pp, par.micro_batch, par.interleave
    s, h = ctx.seq_len, ctx.hidden
    layer = layer_times(s, b, h, ctx.heads, ctx.ffn_hidden, t, par.sequence_parallel and t > 1, par.recompute,
                        ctx.flash, ctx.flops_rate, ctx.hbm_rate, ctx.nvlink_rate, ctx.kv_ratio, ctx.dropout)
    logits_forward, logits_backward = logits_times(s, b, h, ctx.vocab, t, ctx.flops_rate, ctx.hbm_rate)
    per_stage = ctx.layers / p
    mb = MicroBatchTimes()
    mb.forward = per_stage * layer.forward + logits_forward
    mb.backward = per_stage * layer.backward + logits_backward
    mb.recompute = per_stage * layer.recompute
    mb.tp_comm = per_stage * layer.tp_comm
    mb.p2p = pipeline_send_time(ctx, t, p, b, v)
    return mb


def pipeline_send_time(ctx, tp, pp, micro_batch, interleave):
    """Stage-to-stage sends of one micro-batch, forward and backward.

    Activations cross stage boundaries as b s h 16-bit values, split t ways
    by Megatron's scatter/gather (arXiv:2104.04473 Sec 4.1), forward and
    backward, v times with interleaving; over NVLink while the t p GPUs of a
    pipeline fit one node, else over the inter-node fabric.
    """
    if pp == 1:
        return 0.0
    link = ctx.nvlink_rate if tp * pp <= ctx.gpus_per_node else ctx.nic_rate
    return 2.0 * interleave * point_to_point_time(2.0 * micro_batch * ctx.seq_len * ctx.hidden / tp, link)


class PipelineTimes:
    """The step's compute part: m steady slots and the fill-and-drain bubble."""

    __slots__ = ("busy", "steady", "bubble")


def pipeline_times(mb, pp, interleave):
    """Sends run asynchronously behind the next chunk's compute in the steady
    1F1B phase (Llama 3, arXiv:2407.21783 Sec 3.3.2; Megatron-Core's overlapped
    p2p): a slot lasts max(compute, sends). In the fill and drain phases each
    hop waits for its data, so the bubble carries both (pipeline.bubble_time).
    """
    pipe = PipelineTimes()
    pipe.busy = mb.busy
    pipe.steady = pipe.busy if pipe.busy >= mb.p2p else mb.p2p
    pipe.bubble = bubble_time(pp, interleave, pipe.busy + mb.p2p)
    return pipe
