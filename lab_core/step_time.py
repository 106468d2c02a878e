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
from .comms import point_to_point_time, ring_time
from .efficiency import (attention_rate, gemm_rate, gemms_seconds, layer_gemm_seconds, moe_layer_gemm_seconds,
                         per_op_replayed_gemms)
from .gpu_memory import model_stages
from .partial_recompute import is_partial, kept_plan, recomputed_layers
from .pipeline import bubble_time
from .recompute_replay import module_replay
from .shape import mtp_projection_params
from .stack import tp_overlap_waiting_share
from .sync import gathers_on_fabric
from .timing import layer_times, logits_times


class MicroBatchTimes:
    """Seconds of one micro-batch on the bottleneck stage, by part.

    tp_comm, cp_comm and ep_comm (expert-parallel all-to-all) are what stays
    exposed; *_total what the collectives take in all. layer_windows:
    ((layers, forward, backward), ...), one layer's wall time in each pass for
    each group of the stage's layers (the windows per-layer ZeRO-3 gathers hide
    behind: layer_windows); layers is the stage's count. weight_grad is the
    backward's weight-gradient GEMMs (the W of the bidirectional schedules,
    pipeline.bubble_time): as many FLOPs as the forward GEMMs, at their rate.
    """

    __slots__ = ("forward", "backward", "recompute", "tp_comm", "tp_comm_total", "cp_comm", "cp_comm_total",
                 "ep_comm", "ep_comm_total", "p2p", "layer_windows", "layers", "stage",
                 "weight_grad")

    @property
    def busy(self):
        """Compute and exposed in-stage communication, the part sends can hide behind."""
        return self.forward + self.backward + self.recompute + self.tp_comm + self.cp_comm + self.ep_comm


class _Kind:
    """One kind of layer's per-micro-batch times (dense or mixture-of-experts)."""

    __slots__ = ("times", "tp_exposed", "cp_total", "cp_exposed", "ep_total", "ep_exposed", "tp_forward_share",
                 "shares")

    @property
    def busy(self):
        t = self.times
        return t.forward + t.backward + t.recompute + self.tp_exposed + self.cp_exposed + self.ep_exposed


def _layer_kind(ctx, par, ffn_hidden, gemm_s, moe=False):
    """One kind of layer; ffn_hidden is its MLP's width (a mixture-of-experts
    layer's: the experts a token uses, which per-op selective checkpointing
    replays as one gated MLP of that width). Selective recompute of modules
    (Workload.recompute_modules) replays what recompute_replay.module_replay says."""
    t, cp, b = par.tp, par.cp, par.micro_batch
    s, h = ctx.seq_len, ctx.hidden
    tokens = b * s / cp
    rate = gemm_rate(ctx.device, ctx.precision, tokens, h / t) * ctx.compute_factor
    flash_rate = attention_rate(ctx.device, s / cp) * ctx.attention_factor if ctx.flash else None
    sp = par.sequence_parallel and t > 1
    replay = modules = None
    if par.recompute == "selective" and ctx.per_op_selective:
        replay = gemms_seconds(ctx.device, ctx.precision, tokens,
                               per_op_replayed_gemms(h, ffn_hidden, ctx.kv_ratio, t, ctx.attention)) / ctx.compute_factor
    elif par.recompute == "selective" and ctx.module_recompute:
        module = module_replay(ctx, tokens, t, sp, par.ep, ffn_hidden, moe)
        replay, modules = module.seconds, ctx.recompute_modules
    kind = _Kind()
    kind.times = layer_times(s, b, h, ctx.heads, ffn_hidden, t, sp, par.recompute, ctx.flash, rate, ctx.hbm_rate,
                             ctx.nvlink_rate, ctx.kv_ratio, ctx.dropout, flash_rate, ctx.flash, cp,
                             gemm_s / ctx.compute_factor, ctx.attention, replay, modules)
    # Of the layer's tensor-parallel collectives 2 run in the forward; 2 in the backward, 2 more
    # when full recompute replays the forward, and those the replayed modules add (timing.py).
    collectives = 4.0 + (2.0 if par.recompute == "full" else 0.0)
    if modules is not None and module.collectives and t > 1:
        kind.times.tp_comm += module.collectives * ring_time(2.0 * tokens * h, t, ctx.nvlink_rate)
        collectives += module.collectives
    kind.tp_forward_share = 2.0 / collectives
    kind.tp_exposed = tensor_parallel_exposed(ctx, kind.times, t, sp, par.recompute)
    kind.cp_total, kind.cp_exposed = context_parallel_times(ctx, par, kind.times)
    kind.ep_total = kind.ep_exposed = 0.0
    return kind


def layer_kinds(ctx, par):
    """(dense, mixture of experts) one layer of each kind, one micro-batch of `par`
    (the second None for a dense model): what micro_batch_times sums over a
    stage's layers. It reads only tp, cp, ep, the micro-batch, recompute and
    sequence parallelism of the plan."""
    t, cp, b = par.tp, par.cp, par.micro_batch
    h = ctx.hidden
    tokens = b * ctx.seq_len / cp
    experts = ctx.shape.experts
    dense = _layer_kind(ctx, par, ctx.ffn_hidden,
                        layer_gemm_seconds(ctx.device, ctx.precision, tokens, h, ctx.ffn_hidden, ctx.kv_ratio, t,
                                           ctx.attention, ctx.fused_qkv))
    dense.shares = _shares_gathers_link(ctx, par, False)
    moe = None
    if experts is not None:
        # A mixture-of-experts layer computes like a dense one whose MLP is as
        # wide as the experts a token uses (moe.py), at the experts' own GEMM shapes.
        width = experts.used_per_token * experts.ffn_hidden
        moe = _layer_kind(ctx, par, width, moe_layer_gemm_seconds(ctx.device, ctx.precision, tokens, h,
                                                                  ctx.kv_ratio, t, experts, par.ep,
                                                                  ctx.attention, ctx.fused_qkv), True)
        moe.ep_total, moe.ep_exposed = expert_alltoall_times(ctx, par)
        moe.shares = _shares_gathers_link(ctx, par, True)
        permute = expert_permutation_seconds(ctx, par)
        moe.times.forward += permute
        moe.times.backward += permute
        if replays_moe_layer(ctx, par.recompute):
            moe.times.recompute += permute
    return dense, moe


def _shares_gathers_link(ctx, par, moe):
    """(tensor-, context-, expert-parallel) whether each of a layer's exchanges takes the link
    ZeRO-3's gathers take (sync.gathers_on_fabric): NVLink inside a node, the NICs beyond it
    (context_parallel_span; expert_alltoall_on_fabric for a mixture-of-experts layer's)."""
    fabric = gathers_on_fabric(ctx, par)
    node = ctx.gpus_per_node
    return ((par.tp > node) == fabric, (context_parallel_span(par.tp, par.cp) > node) == fabric,
            moe and expert_alltoall_on_fabric(ctx, par) == fabric)


def stage_layer_kinds(stage, par, kinds, kept=None):
    """[(layers, _Kind)] of a stage: its dense and mixture-of-experts layers at
    the plan's recompute (`kinds`, layer_kinds of the plan) or, when only some
    layers recompute fully (partial_recompute.py), those at full recompute and
    the rest without (`kept`, layer_kinds of partial_recompute.kept_plan)."""
    dense, moe = kinds
    if kept is None:
        return ((stage.dense, dense),) + (((stage.moe, moe),) if stage.moe else ())
    dense_full, moe_full = recomputed_layers(stage, par)
    counts = ((dense_full, dense), (stage.dense - dense_full, kept[0]))
    if stage.moe:
        counts += ((moe_full, moe), (stage.moe - moe_full, kept[1]))
    return tuple(part for part in counts if part[0] > 0)


def layer_windows(counts):
    """MicroBatchTimes.layer_windows: ((layers, forward, backward + recompute), ...), one
    group per kind of layer the stage holds (`counts`, stage_layer_kinds: dense and mixture
    of experts, and with only some layers recomputing fully those and the kept ones apart),
    each at its own layer's wall time in that pass: its compute plus the in-layer
    communication it leaves exposed (tensor-, context- and expert-parallel), each part
    in the pass that sends it, less the exchanges that take the gathers' own link
    (_pass_windows). Traffic that hides behind a layer runs while the layer runs, whatever
    it is waiting for, on a link nothing else of the layer takes (a teaching assumption:
    COMM_CONTENTION is all traffic on different links costs each other). Counting compute
    alone, more compute that also hid more of a layer's tensor-parallel traffic hid more
    ZeRO-3 traffic than the layer grew, and a heavier layer could shorten the step; as the
    wall time, ZeRO-3's gathers hid behind context-parallel waits on the same NICs. At most
    the stage's busy time less the output layer's."""
    return tuple((count, *_pass_windows(kind)) for count, kind in counts if count > 0)


def _pass_windows(kind):
    """(forward, backward + recompute) seconds of one layer of a _Kind that ZeRO-3's gathers can
    use: each pass's compute and its part of the exposed in-layer traffic (tensor-parallel: by
    collectives, _Kind.tp_forward_share; context-parallel: the forward sends keys and values,
    the backward them and their gradients, context_parallel_times; expert all-to-alls: a
    dispatch and a combine in each pass), less all of an exchange that takes the gathers' own
    link (_Kind.shares: hidden or exposed, it keeps that link busy)."""
    t = kind.times
    tp_same, cp_same, ep_same = kind.shares
    tp = kind.tp_exposed - (t.tp_comm if tp_same else 0.0)
    cp = kind.cp_exposed - (kind.cp_total if cp_same else 0.0)
    ep = kind.ep_exposed - (kind.ep_total if ep_same else 0.0)
    forward = t.forward + tp * kind.tp_forward_share + cp / 3.0 + ep / 2.0
    backward = t.backward + t.recompute + tp * (1.0 - kind.tp_forward_share) + cp * (2.0 / 3.0) + ep / 2.0
    return (forward if forward > 0.0 else 0.0), (backward if backward > 0.0 else 0.0)


def micro_batch_times(ctx, par, layout):
    """MicroBatchTimes of Parallelism `par` on its bottleneck stage (sources in timing.py and below)."""
    return stage_micro_batch_times(ctx, par, layout)[0]


def stage_micro_batch_times(ctx, par, layout, stages=None):
    """(MicroBatchTimes of the bottleneck stage, [MicroBatchTimes of each kind of stage
    (model_stages' order)]): the stage with the most busy time sets the pipeline's pace;
    each stage's own times set the compute its gradient sync hides behind
    (sync.gradient_sync). stages: the plan's model_stages, when the caller has them."""
    kinds = layer_kinds(ctx, par)
    kept = layer_kinds(ctx, kept_plan(par)) if is_partial(par) else None
    logits = output_layer_times(ctx, par.tp, par.cp, par.micro_batch)
    sends = pipeline_send_time(ctx, par)
    if stages is None:
        stages = model_stages(ctx, par.pp, layout.first_layers, layout.middle_layers, layout.last_layers)
    best, every = None, []
    for stage in stages:
        mb = _stage_times(stage, stage_layer_kinds(stage, par, kinds, kept), logits, sends)
        every.append(mb)
        if best is None or mb.busy > best.busy:
            best = mb
    return best, every


def _stage_times(stage, counts, logits, sends):
    """MicroBatchTimes of one stage from its layer kinds' counts (stage_layer_kinds)."""
    mb = MicroBatchTimes()
    mb.stage, mb.layers = stage.kind, stage.layers
    mb.forward = (logits[0] if stage.output else 0.0)
    mb.backward = (logits[1] if stage.output else 0.0)
    # The output layer's weight gradient is one GEMM as long as its forward GEMM: its backward
    # less its forward (timing.logits_times: the fp32 logits' traffic is in both, the loss is not
    # a weight's gradient; with prediction modules, their passes and projections the same way).
    mb.weight_grad = (logits[1] - logits[0]) if stage.output else 0.0
    mb.recompute = mb.tp_comm = mb.tp_comm_total = mb.cp_comm = mb.cp_comm_total = 0.0
    mb.ep_comm = mb.ep_comm_total = 0.0
    for count, kind in counts:
        mb.weight_grad += count * kind.times.gemm_forward
        mb.forward += count * kind.times.forward
        mb.backward += count * kind.times.backward
        mb.recompute += count * kind.times.recompute
        mb.tp_comm += count * kind.tp_exposed
        mb.tp_comm_total += count * kind.times.tp_comm
        mb.cp_comm += count * kind.cp_exposed
        mb.cp_comm_total += count * kind.cp_total
        mb.ep_comm += count * kind.ep_exposed
        mb.ep_comm_total += count * kind.ep_total
    mb.layer_windows = layer_windows(counts)
    mb.p2p = sends
    return mb


def expert_alltoall_times(ctx, par):
    """(total, exposed) seconds of one mixture-of-experts layer's all-to-alls, one micro-batch.

    Each token's hidden state goes to the ranks of its k experts and comes
    back (dispatch and combine), forward and backward, again in a full
    recompute (arXiv:2006.16668 GShard Sec 3.2): a rank's tokens / t
    (sequence-parallel slice) in 16-bit values. The expert-parallel group is
    ep consecutive ranks (Megatron-Core's folding, arXiv:2504.14960 Sec 3.2):
    inside one node over NVLink, beyond it over the NICs.

    A plain all-to-all (Workload.moe_dispatcher all_to_all) sends every copy
    on its own: k (ep - 1) / ep copies per token leave the GPU, those for
    other nodes over the NIC. The per_node dispatcher deduplicates across
    nodes (DeepSeek-V3 arXiv:2412.19437 Sec 3.2.2: a token crosses
    InfiniBand once per target node, to the GPU of the same in-node index,
    and is forwarded over NVLink to the GPUs holding its experts; DeepEP, the
    flex dispatcher Megatron-Core runs on Hopper): the fabric carries one copy
    per remote node holding one of its experts (moe.Experts.
    remote_nodes_per_token), NVLink the copies for the other GPUs of a node,
    k (n - 1) / n per token (n GPUs of the group per node). Both links run
    at once; the slower sets the time, each at the bus bandwidth of its
    share's size.

    Exposed: with Workload.moe_comm_overlap (modern stacks) the step waits
    for calibration.MOE_ALLTOALL_EXPOSED of it and the rest slows the
    compute it hides behind (COMM_CONTENTION): Megatron-Core's batch-level
    overlap of one micro-batch's all-to-all with another's compute
    (--overlap-moe-expert-parallel-comm, added in Megatron-Core v0.14,
    2025-09: NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md
    "What's New"). Without it (earlier Megatron-Core, the 2021 stack) the
    dispatcher's all-to-alls run between the layer's kernels on the
    critical path and are exposed in full.
    """
    if par.ep == 1:
        return 0.0, 0.0
    intra, inter = expert_alltoall_links(ctx, par)
    one = intra if intra > inter else inter
    count = 6.0 if replays_moe_layer(ctx, par.recompute) else 4.0
    total = count * one
    if not ctx.moe_overlap:
        return total, total
    exposed = cal.MOE_ALLTOALL_EXPOSED * total
    return total, exposed + cal.COMM_CONTENTION * (total - exposed)


def replays_moe_layer(ctx, recompute):
    """Whether the backward replays a mixture-of-experts layer's forward, its all-to-alls
    and token permutation included: full recompute, or selective with the moe module."""
    return recompute == "full" or (recompute == "selective" and ctx.module_recompute
                                   and "moe" in ctx.recompute_modules)


def expert_alltoall_links(ctx, par):
    """(NVLink, fabric) seconds of one expert-parallel all-to-all of one micro-batch
    (expert_alltoall_times: the copies of each token each link carries, at its rate);
    both run at once, so the slower sets the all-to-all's time."""
    token = 2.0 * par.micro_batch * ctx.seq_len / par.cp / par.tp * ctx.hidden
    nvlink_copies, fabric_copies = expert_copies(ctx, par)
    return (point_to_point_time(token * nvlink_copies, ctx.nvlink_rate),
            point_to_point_time(token * fabric_copies, ctx.nic_rate))


def expert_copies(ctx, par):
    """(over NVLink, over the fabric) copies of each of a rank's tokens one dispatch sends
    (expert_alltoall_times: the plain all-to-all's k (n - 1) / ep and k (ep - n) / ep, or the
    per-node dispatcher's k (n - 1) / n and moe.Experts.remote_nodes_per_token)."""
    ep = par.ep
    experts = ctx.shape.experts
    k = experts.per_token
    in_node = min(ep, ctx.gpus_per_node)
    if ctx.per_node_dispatch and ep > in_node:
        return k * (in_node - 1.0) / in_node, experts.remote_nodes_per_token(ep / in_node)
    return k * (in_node - 1.0) / ep, k * (ep - in_node) / ep


def expert_alltoall_on_fabric(ctx, par):
    """Whether the fabric between nodes sets the time of the plan's expert all-to-alls
    (expert_alltoall_links: the slower link). Not while the expert-parallel group fits a
    node; beyond it, the per-node dispatcher sends a token over the fabric once per remote
    node and forwards the copies over NVLink, which can then be the slower link on a fast
    fabric."""
    if par.ep <= ctx.gpus_per_node:
        return False
    intra, inter = expert_alltoall_links(ctx, par)
    return inter >= intra


def expert_permutation_seconds(ctx, par):
    """Seconds of one mixture-of-experts layer's token permutation, one pass
    (forward or backward), one micro-batch.

    Memory-bound work that grows with the copies of each token, k, not with
    the experts' FLOPs: before the experts, each of a rank's tokens (b s /
    cp / t, its sequence-parallel slice) is copied into k rows grouped by
    expert (read k h, write k h values); after them the k outputs are
    weighted by the router's probabilities and summed back into one row
    (read k h, write h): Megatron-Core's permute / unpermute
    (megatron/core/transformer/moe/moe_utils.py, fused or not by
    --moe-permute-fusion; the "small expert GEMMs" wall of
    Megatron-Bridge docs/training/moe-optimization.md, arXiv:2603.07685).
    (3k + 1) h 16-bit values per token at the achievable HBM rate; the
    backward pass moves the same gradients the other way.
    """
    experts = ctx.shape.experts
    tokens = par.micro_batch * ctx.seq_len / par.cp / par.tp
    values = (3.0 * experts.per_token + 1.0) * ctx.hidden * tokens
    return 2.0 * values / ctx.hbm_rate


def output_layer_times(ctx, tp, cp, micro_batch):
    """(forward, backward) seconds of the output layer and loss for one micro-batch
    (timing.logits_times). It stays in 16-bit (arXiv:2209.05433 Sec 4). With
    multi-token prediction the stage runs it once per module more (a shared
    head, arXiv:2412.19437 Sec 2.2), and each module's 2h x h projection, a GEMM
    split t ways at its shape's rate (its backward twice its forward)."""
    tokens = micro_batch * ctx.seq_len / cp
    rate = gemm_rate(ctx.device, "bf16", tokens, ctx.hidden) * ctx.compute_factor
    forward, backward = logits_times(ctx.seq_len / cp, micro_batch, ctx.hidden, ctx.vocab, tp, rate, ctx.hbm_rate)
    shape = ctx.shape
    if not shape.mtp_layers:
        return forward, backward
    projection = (shape.mtp_layers / ctx.compute_factor
                  * gemms_seconds(ctx.device, ctx.precision, tokens, ((mtp_projection_params(ctx.hidden) / tp,
                                                                       ctx.hidden / tp),)))
    return shape.output_passes * forward + projection, shape.output_passes * backward + 2.0 * projection


def tensor_parallel_exposed(ctx, layer, tp, sequence_parallel, recompute="none"):
    """Tensor-parallel time one layer cannot hide.

    The 2021 stack and plain all-reduces expose it all (calibration.
    TP_BACKWARD_OVERLAP). The modern stack with overlap on and sequence
    parallelism splits each all-gather / reduce-scatter into t ring steps
    pipelined with chunks of the GEMM next to it (Transformer Engine
    userbuffers, arXiv:2406.06858 Sec 3; torchtitan async TP), or runs it whole
    behind another GEMM: one ring step of the collectives
    stack.tp_overlap_waiting_share names waits, the rest hides behind the
    layer's GEMMs (forward, and twice that in backward), slowing them by
    calibration.COMM_CONTENTION.
    """
    comm = layer.tp_comm
    if not (ctx.tp_overlap and sequence_parallel and tp > 1) or comm <= 0.0:
        return comm
    window = 3.0 * layer.gemm_forward
    first = tp_overlap_waiting_share(ctx.stack, recompute) * comm / tp
    rest = comm - first
    exposed = first + (rest - window if rest > window else 0.0)
    return exposed + cal.COMM_CONTENTION * (comm - exposed)


def context_parallel_times(ctx, par, layer):
    """(total, exposed) seconds of the context-parallel key/value exchange of one layer.

    Megatron-Core's default ring (--cp-comm-type p2p, arXiv:2310.01889 Ring
    Attention; Llama 3 Sec 3.3.2 gathers K/V instead): cp - 1 steps, each
    sending one rank's keys and values, b (s / cp) 2 r h / t 16-bit values
    (r = key/value heads / heads; attention.AttentionShape.kv_values_per_token
    for other shapes), while the attention of the block already
    there runs; backward sends them again plus their gradients. Each step
    exposes what its attention block does not cover. With
    Workload.cp_all_gather the same blocks are all-gathered (and their
    gradients reduce-scattered) before the attention starts, so none of it
    hides: Llama 3's context parallelism, whose "all-gather communication
    latency is exposed in the critical path" (arXiv:2407.21783 Sec 3.3.2).
    """
    cp = par.cp
    if cp == 1:
        return 0.0, 0.0
    t = par.tp
    block = 2.0 * par.micro_batch * (ctx.seq_len / cp) * ctx.attention.kv_values_per_token() / t
    link = ctx.nvlink_rate if context_parallel_span(t, cp) <= ctx.gpus_per_node else ctx.nic_rate
    step = point_to_point_time(block, link)
    attention_step = layer.attention_forward / cp
    forward = (cp - 1) * (step - attention_step if step > attention_step else 0.0)
    backward = (cp - 1) * (2.0 * step - 2.0 * attention_step if step > attention_step else 0.0)
    total = 3.0 * (cp - 1) * step
    if ctx.cp_all_gather:
        return total, total
    exposed = forward + backward
    return total, exposed + context_parallel_charge(ctx) * (total - exposed)


def context_parallel_charge(ctx):
    """Share of the hidden ring exchange that still costs time: the modern stack
    slows the attention it hides behind by calibration.COMM_CONTENTION; the
    2021 stack predates context parallelism (Megatron-Core added it in 2023,
    arXiv:2310.01889 as cited above) and exposed its model-parallel
    collectives (stack.py), so there the whole exchange is charged.
    TEACHING ASSUMPTION for megatron_lm_2021 (no published 2021 run used CP)."""
    return cal.COMM_CONTENTION if ctx.modern else 1.0


def pipeline_send_time(ctx, par):
    """Stage-to-stage sends of one micro-batch, forward and backward
    (pipeline_send_seconds of the plan's grid, micro-batch and interleaving)."""
    return pipeline_send_seconds(ctx, par.tp, par.cp, par.dp, par.pp, par.micro_batch, par.interleave)


def pipeline_send_seconds(ctx, tp, cp, dp, pp, micro_batch, interleave):
    """Stage-to-stage sends of one micro-batch, forward and backward.

    Activations cross stage boundaries as b (s / cp) h 16-bit values, split t
    ways by Megatron's scatter/gather (arXiv:2104.04473 Sec 4.1), forward and
    backward, v times with interleaving, over pipeline_link_rate.
    """
    if pp == 1:
        return 0.0
    size = micro_batch * pipeline_message_bytes(ctx, tp, cp)
    return 2.0 * interleave * point_to_point_time(size, pipeline_link_rate(ctx, tp, cp, dp, pp))


def pipeline_message_bytes(ctx, tp, cp):
    """One sequence's activations at a stage boundary: (s / cp) h 16-bit values over t ranks."""
    return 2.0 * (ctx.seq_len / cp if cp > 1 else ctx.seq_len) * ctx.hidden / tp


def pipeline_link_rate(ctx, tp, cp, dp, pp):
    """The link of pipeline sends. The pipeline dimension is the outermost of the
    rank order (Megatron-Core's default "tp-cp-ep-dp-pp", megatron/core/
    parallel_state.py initialize_model_parallel; torchtitan's device mesh and
    DeepSpeed's topology also put it first), as sync.py's data-parallel groups
    assume: neighbouring stages are tp x cp x dp ranks apart, so the sends stay on
    NVLink only while the whole grid fits one node; else some hop, which every
    micro-batch makes, crosses the inter-node fabric."""
    return ctx.nvlink_rate if pipeline_span(tp, cp, dp, pp) <= ctx.gpus_per_node else ctx.nic_rate


def context_parallel_span(tp, cp):
    """Consecutive ranks one context-parallel group spreads over: its cp ranks come right
    after tensor parallelism in rank order (Megatron-Core's "tp-cp-ep-dp-pp"), so its
    exchange leaves a node once these outgrow it (context_parallel_times; the lab's
    interconnect decision reads the same)."""
    return tp * cp


def pipeline_span(tp, cp, dp, pp):
    """Ranks a pipeline's stages spread over: the pipeline is outermost in rank order,
    so the whole grid (pipeline_link_rate; the lab's interconnect decision reads the same)."""
    return tp * cp * dp * pp


class PipelineTimes:
    """The step's compute part: m steady slots and the fill-and-drain bubble; forward and
    backward (with recompute): the slowest stage's passes, as long as every stage's slots
    last (a lighter stage waits in each for its input), which the end-of-step syncs hide behind
    (sync.gradient_sync)."""

    __slots__ = ("busy", "steady", "bubble", "forward", "backward")


def pipeline_times(mb, pp, interleave, schedule="1f1b"):
    """Sends run asynchronously behind the next chunk's compute in the steady
    1F1B phase (Llama 3, arXiv:2407.21783 Sec 3.3.2; Megatron-Core's overlapped
    p2p): a slot lasts max(compute, sends). In the fill and drain phases each
    hop waits for its data, so the bubble carries both (pipeline.bubble_time,
    by schedule). With uneven stages the slowest stage's slot is used throughout.
    """
    pipe = PipelineTimes()
    pipe.busy = mb.busy
    pipe.forward, pipe.backward = mb.forward, mb.backward + mb.recompute
    pipe.steady = pipe.busy if pipe.busy >= mb.p2p else mb.p2p
    pipe.bubble = bubble_time(pp, interleave, pipe.busy + mb.p2p, schedule, mb.backward + mb.recompute,
                              mb.weight_grad)
    return pipe
