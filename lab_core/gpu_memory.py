"""Memory of the most loaded GPU of one layout.

The one place that adds up per-GPU parameters, training state and
activations; evaluate() and the planner both call it. A pipeline's stages
differ: the first holds the embedding and the most in-flight micro-batches
under 1F1B (p of them), the second p - 1, the last one micro-batch but the
output layer (arXiv:2205.05198 Sec 4.2.3). With an uneven split
(parallelism.stage_split) any of them can be the heaviest, so each kind of
stage is costed and the largest total is the GPU's memory.
Sources: ZeRO sharding, arXiv:1910.02054 Sec 5 (memory.model_state_parts);
activations, arXiv:2205.05198 Table 2 and Eq 5 (activations.py); the
recompute working set, arXiv:1604.06174 Sec 4 (activations.working_bytes).
"""
from .activations import (embedding_dropout_bytes, interleave_multiplier, output_layer_bytes, per_layer_bytes,
                          working_bytes)
from .memory import WEIGHT_BYTES, model_state_parts


class MemoryBreakdown:
    """Bytes on the most loaded GPU, by part; `stage` says which stage that is.
    largest_stage_params: the most parameters any stage's GPU holds (it syncs
    the most gradients, and every stage syncs at once)."""

    __slots__ = ("stage", "params_per_gpu", "largest_stage_params", "weights", "gradients", "optimizer", "activations",
                 "activations_per_layer", "activations_working", "total")


class Stage:
    """One kind of pipeline stage: its layers, the index that sets its in-flight
    micro-batches (p - index under 1F1B), and whether it holds the embedding or
    the output layer."""

    __slots__ = ("kind", "layers", "index", "embedding", "output")

    def __init__(self, kind, layers, index, embedding, output):
        self.kind, self.layers, self.index, self.embedding, self.output = kind, layers, index, embedding, output


def stages(pp, first_layers, middle_layers, last_layers):
    """The stage kinds worth costing: first, second (the heaviest middle one) and last."""
    if pp == 1:
        return (Stage("first", first_layers, 0, True, True),)
    out = [Stage("first", first_layers, 0, True, False)]
    if pp > 2:
        out.append(Stage("middle", middle_layers, 1, False, False))
    out.append(Stage("last", last_layers, pp - 1, False, True))
    return tuple(out)


def stage_params(ctx, tp, stage, pp):
    """Parameters on one GPU of a stage: its layers split t ways by tensor
    parallelism (arXiv:1909.08053 Sec 3; layernorm weights, replicated, are
    counted as split - a <0.1% error), plus the vocabulary-parallel token
    embedding V h / t and the position embedding s h on the first stage
    (arXiv:2104.04473 Eq 2 counts both) and the output layer V h / t on the
    last (a single stage reuses the tied embedding)."""
    params = stage.layers * ctx.layer_params / tp
    if stage.embedding:
        params += ctx.vocab * ctx.hidden / tp + ctx.seq_len * ctx.hidden
    if stage.output and pp > 1:
        params += ctx.vocab * ctx.hidden / tp
    return params


def state_parts(ctx, tp, params, shard_ranks, zero):
    """(weights, gradients, optimizer) bytes of `params` parameters sharded over
    shard_ranks by ZeRO. ZeRO-3 keeps two layers' gathered 16-bit weights in
    flight (the current one and the prefetched next, as DeepSpeed and FSDP
    prefetch), never more than the unsharded weights."""
    weights, grads, optimizer = model_state_parts(params, ctx.state_bytes, shard_ranks, zero)
    if zero >= 3 and shard_ranks > 1:
        in_flight = 2.0 * WEIGHT_BYTES * ctx.layer_params / tp
        weights += min(in_flight, WEIGHT_BYTES * params - weights)
    return weights, grads, optimizer


def stage_activations(ctx, tp, cp, pp, stage, recompute, sequence_parallel, micro_batch, micro_batches, interleave):
    """(per layer, total, working set) activation bytes of one stage.

    Each context-parallel rank keeps the activations of its s / cp tokens.
    Total = the stage's layers for its in-flight micro-batches, min(p - index, m),
    times the interleaving multiplier (arXiv:2205.05198 Eq 5 and Sec 4.2.3),
    + the embedding dropout mask (first stage) or the output layer (last),
    + the recompute working set. Sequence parallelism applies only with tp > 1.
    """
    sp = sequence_parallel and tp > 1
    tokens = ctx.seq_len / cp if cp > 1 else ctx.seq_len
    b, h, a, f, r, drop = micro_batch, ctx.hidden, ctx.heads, ctx.ffn_hidden, ctx.kv_ratio, ctx.dropout
    per_layer = per_layer_bytes(tokens, b, h, a, tp, sp, recompute, ctx.flash, f, r, drop)
    working = working_bytes(tokens, b, h, a, tp, sp, recompute, ctx.flash, f, r, drop)
    in_flight = min(pp - stage.index, micro_batches)
    total = per_layer * stage.layers * in_flight * interleave_multiplier(pp, interleave)
    if stage.embedding:
        total += embedding_dropout_bytes(tokens, b, h, tp, in_flight, drop)
    if stage.output:
        total += output_layer_bytes(tokens, b, h, ctx.vocab, tp)
    return per_layer, total + working, working


def memory_of(ctx, par, layout):
    """MemoryBreakdown of the most loaded GPU for Parallelism `par` (its Layout from check_layout)."""
    best = None
    largest = 0.0
    shard = par.shard_ranks * par.cp
    for stage in stages(par.pp, layout.first_layers, layout.middle_layers, layout.last_layers):
        mem = MemoryBreakdown()
        mem.stage = stage.kind
        mem.params_per_gpu = stage_params(ctx, par.tp, stage, par.pp)
        mem.weights, mem.gradients, mem.optimizer = state_parts(ctx, par.tp, mem.params_per_gpu, shard, par.zero)
        mem.activations_per_layer, mem.activations, mem.activations_working = stage_activations(
            ctx, par.tp, par.cp, par.pp, stage, par.recompute, par.sequence_parallel, par.micro_batch,
            layout.micro_batches, par.interleave)
        mem.total = mem.weights + mem.gradients + mem.optimizer + mem.activations
        largest = max(largest, mem.params_per_gpu)
        if best is None or mem.total > best.total:
            best = mem
    best.largest_stage_params = largest
    return best
