"""Memory of the most loaded GPU of one layout: the first pipeline stage.

The one place that adds up per-GPU parameters, training state and
activations; evaluate() and the planner's bounds both call it.
Sources: ZeRO sharding, arXiv:1910.02054 Sec 5 (memory.model_state_parts);
activations, arXiv:2205.05198 Table 2 and Eq 5 (activations.py); the
recompute working set, arXiv:1604.06174 Sec 4 (activations.working_bytes).
"""
from .activations import extra_bytes, first_stage_bytes, per_layer_bytes, working_bytes
from .memory import WEIGHT_BYTES, model_state_parts


class MemoryBreakdown:
    """Bytes on the first-stage GPU, by part."""

    __slots__ = ("params_per_gpu", "weights", "gradients", "optimizer", "activations", "activations_per_layer",
                 "activations_working", "total")


def params_per_gpu(ctx, tp, pp):
    """Parameters on one GPU of the first pipeline stage (the most loaded one).

    L/p layers split t ways by tensor parallelism (Megatron-LM, arXiv:1909.08053
    Sec 3; layernorm weights, replicated, are counted as split - a <0.1% error),
    plus the vocabulary-parallel token embedding V h / t and the position
    embedding s h (arXiv:2104.04473 Eq 2 counts both). With p = 1 the tied
    output layer reuses the token embedding.
    """
    return (ctx.layers / pp) * ctx.layer_params / tp + ctx.vocab * ctx.hidden / tp + ctx.seq_len * ctx.hidden


def state_parts(ctx, tp, pp, dp, zero):
    """(weights, gradients, optimizer) bytes on a first-stage GPU.

    ZeRO-3 keeps two layers' gathered 16-bit weights in flight (the current
    one and the prefetched next, as DeepSpeed and FSDP prefetch), never more
    than the unsharded weights.
    """
    params = params_per_gpu(ctx, tp, pp)
    weights, grads, optimizer = model_state_parts(params, ctx.state_bytes, dp, zero)
    if zero >= 3 and dp > 1:
        in_flight = 2.0 * WEIGHT_BYTES * ctx.layer_params / tp
        weights += min(in_flight, WEIGHT_BYTES * params - weights)
    return weights, grads, optimizer


def state_bytes(ctx, tp, pp, dp, zero):
    """Weights + gradients + optimizer state on a first-stage GPU."""
    weights, grads, optimizer = state_parts(ctx, tp, pp, dp, zero)
    return weights + grads + optimizer


def activation_parts(ctx, tp, pp, recompute, sequence_parallel, micro_batch, micro_batches, interleave):
    """(per layer, total, working set) activation bytes of the first stage.

    Total = the layers' stored activations for the in-flight micro-batches
    (first_stage_bytes) + embedding dropout mask and single-stage logits
    (extra_bytes) + the recompute working set. Sequence parallelism applies
    only with tp > 1.
    """
    sp = sequence_parallel and tp > 1
    s, b, h, a, f, r, drop = (ctx.seq_len, micro_batch, ctx.hidden, ctx.heads, ctx.ffn_hidden, ctx.kv_ratio,
                              ctx.dropout)
    per_layer = per_layer_bytes(s, b, h, a, tp, sp, recompute, ctx.flash, f, r, drop)
    working = working_bytes(s, b, h, a, tp, sp, recompute, ctx.flash, f, r, drop)
    total = (first_stage_bytes(per_layer, ctx.layers, pp, micro_batches, interleave)
             + extra_bytes(s, b, h, ctx.vocab, tp, pp, micro_batches, drop) + working)
    return per_layer, total, working


def memory_of(ctx, par, micro_batches):
    """MemoryBreakdown of the first-stage GPU for Parallelism `par`."""
    mem = MemoryBreakdown()
    mem.params_per_gpu = params_per_gpu(ctx, par.tp, par.pp)
    mem.weights, mem.gradients, mem.optimizer = state_parts(ctx, par.tp, par.pp, par.dp, par.zero)
    mem.activations_per_layer, mem.activations, mem.activations_working = activation_parts(
        ctx, par.tp, par.pp, par.recompute, par.sequence_parallel, par.micro_batch, micro_batches, par.interleave)
    mem.total = mem.weights + mem.gradients + mem.optimizer + mem.activations
    return mem
