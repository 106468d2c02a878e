"""Memory of the most loaded GPU of one layout.

The one place that adds up per-GPU parameters, training state and
activations; evaluate() and the planner both call it. A pipeline's stages
differ: the first holds the embedding and the most in-flight micro-batches
under 1F1B (p of them), the second p - 1, the last one micro-batch but the
output layer (arXiv:2205.05198 Sec 4.2.3). With an uneven split
(parallelism.stage_split) any of them can be the heaviest, so each kind of
stage is costed and the largest total is the GPU's memory. DualPipe keeps two
copies of a stage's weights and p + 1 micro-batches of activations on every GPU,
DualPipeV p + 1/2 (pipeline.weight_copies, pipeline.in_flight_chunks); the GPU's
two stages are costed as two of its own (TEACHING ASSUMPTION: the mirror stage
holds what this one does, exact for an even split with the embedding and the
output layer of one size).
Sources: ZeRO sharding, arXiv:1910.02054 Sec 5 (memory.model_state_parts);
activations, arXiv:2205.05198 Table 2 and Eq 5 (activations.py); the
recompute working set, arXiv:1604.06174 Sec 4 (activations.working_bytes);
the logits and the loss's buffers on the last stage (activations.loss_bytes,
calibration.LOSS_BYTES_PER_LOGIT); what each software stack keeps
(stack.py MEMORY).
"""
from . import calibration as cal
from .activations import (embedding_dropout_bytes, interleave_multiplier, loss_bytes, module_savings,
                          moe_dispatch_bytes, output_input_bytes, per_layer_bytes, per_op_selective_bytes,
                          working_bytes)
from .memory import WEIGHT_BYTES, model_state_parts
from .partial_recompute import is_partial, recomputed_layers
from .pipeline import in_flight_chunks, weight_copies
from .shape import mtp_module_extra_params


class MemoryBreakdown:
    """Bytes on the most loaded GPU, by part; `stage` says which stage that is.
    sync_params: (shared, expert) parameters of a GPU of each kind of stage
    (model_stages' order): every stage syncs its gradients at once, and the
    step waits for the slowest (sync.gradient_sync).
    loss: the part of `activations` that is the logits and the loss's
    buffers (0 on a stage without the output layer)."""

    __slots__ = ("stage", "params_per_gpu", "sync_params", "weights", "gradients", "optimizer", "activations",
                 "activations_per_layer", "activations_working", "loss", "total")


class Stage:
    """One kind of pipeline stage: its layers (`dense` of them with a dense MLP,
    the rest mixture-of-experts; on the stage with the output layer, the
    multi-token-prediction layers too, `mtp` of them), the index that sets its
    in-flight micro-batches (p - index under 1F1B), whether it holds the
    embedding or the output layer, and `outputs`: the output layer's passes
    (1 + mtp on the stage with it, else 0; shape.ModelShape.output_passes)."""

    __slots__ = ("kind", "layers", "dense", "moe", "index", "embedding", "output", "mtp", "outputs", "copies")

    def __init__(self, kind, layers, index, embedding, output, dense, mtp=0, copies=1):
        self.kind, self.layers, self.index, self.embedding, self.output = kind, layers, index, embedding, output
        self.dense = dense
        self.moe = layers - dense
        self.mtp = mtp
        self.outputs = 1 + mtp if output else 0
        # The pipeline stages this kind stands for (stages(): middle ones alike in their layers).
        self.copies = copies


def stages(pp, first_layers, middle_layers, last_layers, dense_layers=None, mtp=0):
    """The stage kinds worth costing: first, the heaviest middle ones and last.

    dense_layers: how many of the model's leading layers have a dense MLP
    (None: all of them); they sit on the first stages in order. mtp: the
    multi-token-prediction layers, of the last layer's kind, on the stage with
    the output layer (Megatron-Core's default placement, docs/user-guide/
    features/multi_token_prediction.md "Pipeline Parallel Layout for MTP").
    Middle stages alike in their layers are one kind, costed at the lowest
    index of them (the most micro-batches in flight; all take as long): one
    kind, unless the dense layers spill past the first stage, when the middle
    stages with only dense layers, the one with some and those with none are
    three (the last are the heaviest in time wherever an expert layer is).
    """
    total = first_layers + max(pp - 2, 0) * middle_layers + (last_layers if pp > 1 else 0)
    dense = total if dense_layers is None else dense_layers
    # A dense model's multi-token-prediction layers are dense too.
    extra_dense = mtp if dense_layers is None else 0
    if pp == 1:
        return (Stage("first", first_layers + mtp, 0, True, True, min(dense, first_layers) + extra_dense, mtp),)
    out = [Stage("first", first_layers, 0, True, False, min(dense, first_layers))]
    if pp > 2:
        out.extend(_middle_stages(pp - 2, middle_layers, max(dense - first_layers, 0)))
    out.append(Stage("last", last_layers + mtp, pp - 1, False, True,
                     max(0, dense - (total - last_layers)) + extra_dense, mtp))
    return tuple(out)


def _middle_stages(count, layers, dense):
    """Stages of stages()'s `count` middle stages of `layers` each, which hold the first
    `dense` dense layers in order: one per run of stages alike (index 1 on)."""
    full, partial = divmod(min(dense, count * layers), layers)
    runs = ((full, layers), (1 if partial else 0, partial), (count - full - (1 if partial else 0), 0))
    out, index = [], 1
    for copies, held in runs:
        if copies > 0:
            out.append(Stage("middle", layers, index, False, False, held, copies=copies))
            index += copies
    return out


def model_stages(ctx, pp, first_layers, middle_layers, last_layers):
    """stages() of the workload's model: its leading dense layers and its multi-token-prediction layers."""
    shape = ctx.shape
    experts = shape.experts
    return stages(pp, first_layers, middle_layers, last_layers, None if experts is None else experts.dense_layers,
                  shape.mtp_layers)


def stage_params(ctx, tp, stage, pp, ep=1):
    """(shared, expert) parameters on one GPU of a stage.

    Shared: its layers split t ways by tensor parallelism (arXiv:1909.08053
    Sec 3; layernorm weights, replicated, are counted as split - a <0.1%
    error), plus the vocabulary-parallel token embedding V h / t and the
    position embedding s h on the first stage (arXiv:2104.04473 Eq 2 counts
    both) and the output layer V h / t on the last (a single stage reuses the
    tied embedding). A mixture-of-experts layer's attention, router and shared
    experts are shared too. Expert: its routed experts split ep ways by expert
    parallelism, whole experts on each GPU (expert tensor parallelism 1, as
    Megatron-Core's parallel folding allows, arXiv:2504.14960 Sec 3.2).
    Under DualPipe a GPU also holds its mirror stage's: twice these (pipeline.weight_copies).
    """
    shape = ctx.shape
    shared = stage.dense * shape.layer_params / tp
    expert = 0.0
    if stage.moe:
        shared += stage.moe * shape.moe_layer_shared_params / tp
        expert = stage.moe * shape.experts.routed_params / ep
    if stage.embedding:
        shared += ctx.vocab * ctx.hidden / tp + ctx.seq_len * ctx.hidden
    if stage.output and pp > 1:
        shared += ctx.vocab * ctx.hidden / tp
    if stage.mtp:
        # Each module's projection and norms; past the first stage, a copy of the token embedding
        # the modules share (Megatron-Core builds it on the stage with them: GPTModel's mtp_process).
        shared += stage.mtp * mtp_module_extra_params(ctx.hidden) / tp
        if pp > 1:
            shared += ctx.vocab * ctx.hidden / tp
    if ctx.pipeline_schedule == "1f1b":
        return shared, expert  # one copy (pipeline.weight_copies), without a call on the planner's hot path
    copies = weight_copies(pp, ctx.pipeline_schedule)
    return shared * copies, expert * copies


def state_parts(ctx, tp, params, shard_ranks, zero, expert_params=0.0, expert_shard_ranks=1, ep=1):
    """(weights, gradients, optimizer) bytes of `params` shared parameters
    sharded over shard_ranks by ZeRO and `expert_params` expert parameters
    sharded over expert_shard_ranks (the ranks holding the same experts).
    ZeRO-3 keeps two layers' gathered 16-bit weights in flight (the current
    one and the prefetched next, as DeepSpeed and FSDP prefetch), never more
    than the unsharded weights."""
    weights, grads, optimizer = model_state_parts(params, ctx.state_bytes, shard_ranks, zero)
    if expert_params:
        w, g, o = model_state_parts(expert_params, ctx.state_bytes, expert_shard_ranks, zero)
        weights, grads, optimizer = weights + w, grads + g, optimizer + o
    if zero >= 3 and (shard_ranks > 1 or expert_shard_ranks > 1):
        in_flight = 2.0 * WEIGHT_BYTES * largest_layer_params(ctx.shape, tp, ep)
        weights += min(in_flight, WEIGHT_BYTES * (params + expert_params) - weights)
    return weights, grads, optimizer


def largest_layer_params(shape, tp, ep):
    """Parameters of the largest layer one GPU holds (ZeRO-3 gathers a layer at a time)."""
    if shape.experts is None:
        return shape.layer_params / tp
    moe = shape.moe_layer_shared_params / tp + shape.experts.routed_params / ep
    return max(shape.layer_params / tp, moe)


def stage_activations(ctx, tp, cp, pp, stage, micro_batch, micro_batches, interleave, kinds, recomputed=None):
    """(per layer, total, working set) activation bytes of one stage.

    Each context-parallel rank keeps the activations of its s / cp tokens.
    Total = the stage's layers for its in-flight micro-batches, min(p - index, m),
    times the interleaving multiplier (arXiv:2205.05198 Eq 5 and Sec 4.2.3),
    + the embedding dropout mask (first stage) or the output layer (last),
    + the recompute working set. kinds: the plan's layer_kind_activations (one
    layer of each kind, the same on every stage, so computed once per plan).
    recomputed: (dense, mixture-of-experts) layers that recompute fully when
    only some do (partial_recompute.py); kinds is then the pair of
    layer_kind_activations at full recompute and without.
    """
    terms = stage_terms(stage, kinds) if recomputed is None else partial_stage_terms(stage, recomputed, *kinds)
    total = stage_activation_total(ctx, tp, cp, pp, stage, terms, micro_batch, micro_batches, interleave)
    return terms[0], total, terms[2]


def partial_stage_terms(stage, recomputed, full, kept):
    """stage_terms of a stage whose `recomputed` (dense, mixture-of-experts) layers
    keep their inputs alone (`full`: layer_kind_activations with full recompute)
    and whose other layers keep everything (`kept`: without recompute). The
    largest layer and working set are those of the kinds the stage holds."""
    dense_full, moe_full = recomputed
    parts = ((dense_full, full[0]), (stage.dense - dense_full, kept[0]))
    if stage.moe:
        parts += ((moe_full, full[1]), (stage.moe - moe_full, kept[1]))
    layers = per_layer = working = 0.0
    for count, (stored, working_set) in parts:
        if count > 0:
            layers += count * stored
            per_layer, working = max(per_layer, stored), max(working, working_set)
    return per_layer, layers, working


def layer_kind_activations(ctx, tp, cp, recompute, sequence_parallel, micro_batch, moe):
    """((stored, working set) of a dense layer, the same of a mixture-of-experts
    layer or None without `moe`) for one micro-batch: what stage_terms adds up
    for a stage of any split (the planner caches them per micro-batch size)."""
    sp = sequence_parallel and tp > 1
    tokens = ctx.seq_len / cp if cp > 1 else ctx.seq_len
    dense = layer_activations(ctx, tokens, micro_batch, tp, sp, recompute, ctx.ffn_hidden)
    if not moe:
        return dense, None
    return dense, moe_layer_activations(ctx, tokens, micro_batch, tp, sp, recompute)


def stage_terms(stage, kinds):
    """(per layer, the stage's layers, working set) bytes of one micro-batch of a stage, from
    its layer_kind_activations: the parts of stage_activations that do not depend on the
    pipeline schedule. The largest layer and working set are those of the kinds of layer the
    stage holds (a stage of expert layers alone has no dense layer's working set)."""
    dense, moe = kinds
    if not stage.moe:
        return dense[0], stage.dense * dense[0], dense[1]
    moe_layer, moe_working = moe
    if not stage.dense:
        return moe_layer, stage.moe * moe_layer, moe_working
    return (max(dense[0], moe_layer), stage.dense * dense[0] + stage.moe * moe_layer,
            max(dense[1], moe_working))


def layer_activations(ctx, tokens, b, tp, sp, recompute, width, routed_width=0.0, dispatched=0.0):
    """(stored, working set) bytes of one layer whose MLP is `width` wide, as the
    workload's stack keeps them: Korthikanti's accounting (per_layer_bytes,
    working_bytes; FP8 inputs where the stack keeps them; the attention block
    at its own sizes), per-op selective checkpointing for a stack that runs it
    (per_op_selective_bytes), or Megatron-Core's selective recompute of the
    workload's modules (activations.module_savings); a working set is what was
    dropped, never below zero. A stack whose tensor parallelism saves the
    all-gathered GEMM inputs keeps those too (activations.gathered_input_bytes).
    A mixture-of-experts layer: routed_width of `width` is its routed experts',
    `dispatched` its token copies (kept unless the layer recomputes fully)."""
    h, a, r, drop = ctx.hidden, ctx.heads, ctx.kv_ratio, ctx.dropout
    fp8, gathered, attention = ctx.fp8_inputs, ctx.gathered_inputs, ctx.attention
    if recompute == "selective" and (ctx.per_op_selective or ctx.module_recompute):
        whole = per_layer_bytes(tokens, b, h, a, tp, sp, "none", ctx.flash, width, r, drop, fp8, gathered,
                                attention)
        if ctx.per_op_selective:
            stored = per_op_selective_bytes(tokens, b, h, tp, sp, width, r)
        else:
            # What the layer keeps besides its token copies: those count in the savings of moe, which drops them.
            # A dense layer's MLP is `width` wide; a mixture-of-experts layer's splits into routed and shared.
            modules = ctx.recompute_modules
            core = "selective" if "core_attn" in modules else "none"
            dense, shared = (0.0, width - routed_width) if routed_width else (width, 0.0)
            stored = (per_layer_bytes(tokens, b, h, a, tp, sp, core, ctx.flash, width, r, drop, fp8, gathered,
                                      attention)
                      - module_savings(tokens, b, h, tp, sp, modules, attention, fp8, dense, routed_width, shared,
                                       dispatched))
        return stored + dispatched, max(0.0, whole - stored)
    # Full recompute keeps the layer's input alone: no token copies.
    return (per_layer_bytes(tokens, b, h, a, tp, sp, recompute, ctx.flash, width, r, drop, fp8, gathered, attention)
            + (dispatched if recompute != "full" else 0.0),
            working_bytes(tokens, b, h, a, tp, sp, recompute, ctx.flash, width, r, drop, fp8, gathered, attention))


def stage_activation_total(ctx, tp, cp, pp, stage, terms, micro_batch, micro_batches, interleave):
    """stage_activations' total from its terms: the layers for the in-flight
    micro-batches, the embedding mask or output layer, the working set."""
    tokens = ctx.seq_len / cp if cp > 1 else ctx.seq_len
    b, h = micro_batch, ctx.hidden
    # pipeline.in_flight_chunks, its 1F1B case written out: the planner asks this for every row of every grid.
    in_flight = (min(pp - stage.index, micro_batches) if ctx.pipeline_schedule == "1f1b"
                 else in_flight_chunks(pp, stage.index, micro_batches, ctx.pipeline_schedule))
    total = terms[1] * in_flight * interleave_multiplier(pp, interleave)
    if stage.embedding:
        total += embedding_dropout_bytes(tokens, b, h, tp, in_flight, ctx.dropout)
    if stage.output:
        # Once per output pass: the model's and each multi-token-prediction module's.
        total += stage.outputs * output_input_bytes(tokens, b, h, tp)
        total += stage_loss_bytes(ctx, tp, cp, stage, micro_batch)
    return total + terms[2]


def stage_loss_bytes(ctx, tp, cp, stage, micro_batch):
    """The logits and the loss's buffers of one micro-batch on the stage with
    the output layer (activations.loss_bytes), else 0: each context-parallel
    rank computes the loss of its s / cp tokens, each tensor-parallel rank of
    its V / t vocabulary shard (the stack's bytes per logit without and with
    tensor parallelism, calibration.LOSS_BYTES_PER_LOGIT)."""
    if not stage.output:
        return 0.0
    tokens = ctx.seq_len / cp if cp > 1 else ctx.seq_len
    per_pass = loss_bytes(tokens, micro_batch, ctx.vocab, tp, ctx.loss_bytes_per_logit[1 if tp > 1 else 0])
    return stage.outputs * per_pass


def moe_layer_activations(ctx, tokens, b, tp, sp, recompute):
    """(stored, working set) bytes of one mixture-of-experts layer: a dense
    layer whose MLP is as wide as the experts each token uses (top-k routed
    x calibration.MOE_CAPACITY_FACTOR, plus the shared ones), plus the
    dispatched token copies (activations.moe_dispatch_bytes)."""
    experts = ctx.shape.experts
    routed = experts.per_token * cal.MOE_CAPACITY_FACTOR
    width = (routed + experts.shared) * experts.ffn_hidden
    dispatched = moe_dispatch_bytes(tokens, b, ctx.hidden, tp, sp, routed, ctx.fp8_inputs)
    return layer_activations(ctx, tokens, b, tp, sp, recompute, width, routed * experts.ffn_hidden, dispatched)


def stage_memories(ctx, par, layout, stages=None):
    """[(MemoryBreakdown, (shared, expert) parameters)] of one GPU of each kind
    of stage (stages(): first, the heaviest middle one, last), in that order.
    stages: model_stages of the plan, when the caller has them."""
    out = []
    shard = par.shard_ranks * par.cp
    if stages is None:
        stages = model_stages(ctx, par.pp, layout.first_layers, layout.middle_layers, layout.last_layers)
    partial = is_partial(par)
    moe = any(stage.moe for stage in stages)
    if partial:
        kinds = tuple(layer_kind_activations(ctx, par.tp, par.cp, mode, par.sequence_parallel, par.micro_batch, moe)
                      for mode in ("full", "none"))
    else:
        kinds = layer_kind_activations(ctx, par.tp, par.cp, par.recompute, par.sequence_parallel, par.micro_batch,
                                       moe)
    for stage in stages:
        mem = MemoryBreakdown()
        mem.stage = stage.kind
        shared, expert = stage_params(ctx, par.tp, stage, par.pp, par.ep)
        mem.params_per_gpu = shared + expert
        mem.weights, mem.gradients, mem.optimizer = state_parts(ctx, par.tp, shared, shard, par.zero, expert,
                                                                expert_shard_ranks(par), par.ep)
        mem.activations_per_layer, mem.activations, mem.activations_working = stage_activations(
            ctx, par.tp, par.cp, par.pp, stage, par.micro_batch, layout.micro_batches, par.interleave, kinds,
            recomputed_layers(stage, par) if partial else None)
        mem.loss = stage_loss_bytes(ctx, par.tp, par.cp, stage, par.micro_batch)
        mem.total = mem.weights + mem.gradients + mem.optimizer + mem.activations
        out.append((mem, (shared, expert)))
    return out


def memory_of(ctx, par, layout, stages=None):
    """MemoryBreakdown of the most loaded GPU for Parallelism `par` (its Layout from check_layout;
    stages: its model_stages, when the caller has them)."""
    best = None
    pairs = []
    for mem, pair in stage_memories(ctx, par, layout, stages):
        pairs.append(pair)
        if best is None or mem.total > best.total:
            best = mem
    best.sync_params = tuple(pairs)
    return best


def expert_shard_ranks(par):
    """GPUs holding the same experts: the tp x cp x dp ranks of a stage fold into
    ep expert-parallel groups (arXiv:2504.14960 Sec 3.2), so tp cp dp / ep of
    them hold each expert; ZeRO shards its state over them."""
    return par.tp * par.cp * par.dp // par.ep


def reserved_bytes(allocated):
    """What the PyTorch caching allocator reserves at the peak of `allocated` bytes
    of tensors, the "peak memory" frameworks log (torchtitan's memory/max_reserved):
    allocated x calibration.ALLOCATOR_RESERVED_RATIO (PyTorch docs, CUDA
    semantics, memory management: cached free blocks and rounded block sizes)."""
    return allocated * cal.ALLOCATOR_RESERVED_RATIO
