"""Data-parallel gradient synchronisation, ZeRO-3 gathers and the optimizer step.

Two stacks (stack.py). The 2021 stack (legacy_sync): one overlap window
serves all overlappable traffic (DP gradients, ZeRO-3 gathers); compute can
hide communication once, and a second of extra compute hides at most
calibration.DP_OVERLAP_FRACTION < 1 seconds. The modern stack (modern_sync):
what hides behind what follows from the schedule - gradient buckets behind
the last micro-batch's backward (ZeRO-2: each micro-batch's, as its sharded
gradients require, earlier_syncs), the parameter all-gather behind the next
step's first forward, ZeRO-3's per-layer gathers behind the layer before.
Every second hidden slows compute by calibration.COMM_CONTENTION.
Without Workload.grad_reduce_overlap (on every stack) the gradient reduction
starts when the backward ends and is exposed whole: Megatron-Core without
--overlap-grad-reduce calls its reduce synchronously in finish_grad_sync
(megatron/core/distributed/distributed_data_parallel.py); the parameter
all-gathers keep their own overlap. The traffic is the same bucketed volume
(Megatron-Core then sends its buffer as one bucket; the lab keeps the buckets'
message size, a teaching assumption that keeps "off" from ever looking faster).
"""
from . import calibration as cal
from .comms import group_time
from .gpu_memory import largest_layer_params
from .memory import WEIGHT_BYTES
from .stack import syncs_replicas_every_backward


class SyncTimes:
    """Seconds per step: DP gradient and ZeRO-3 traffic (total, exposed), optimizer.
    stall: the part of the exposed seconds that waits inside the micro-batches' slots
    (ZeRO-3's per-layer gathers and reduce-scatters, the syncs after every micro-batch
    but the last: earlier_syncs), with the modern stack's COMM_CONTENTION on what of
    them hides there; held: what of it the slots' waits for their sends hold
    (held_by_sends), which the step does not wait for again."""

    __slots__ = ("dp_total", "dp_exposed", "zero_total", "zero_exposed", "optimizer", "link", "stall", "held")


def gradient_sync(ctx, par, micro_batches, stage_times, pipe, sync_params):
    """SyncTimes of Parallelism `par` given its pipeline times: those of the stage
    the step waits for, the longest exposed sync plus optimizer step of its kinds of
    stage (every stage syncs and steps its optimizer at once), each with its own
    micro-batch times (stage_times: step_time.stage_micro_batch_times; the compute
    its traffic inside the slots hides behind, the layers ZeRO-3 gathers one by one)
    and its own (shared, expert) parameters (sync_params, the same order). The syncs
    at the step's end and start hide behind the slowest stage's passes
    (PipelineTimes.forward, backward): every stage's slots last as long, a lighter
    stage waiting in each for its input, and the step's compute ends when the slowest
    stage's does; with a stage's own passes, more compute on a stage that does not
    set the pace hid more of its sync and shortened the step. Not always the
    bottleneck stage or the one with the most parameters: shared weights sync over
    the data-parallel ranks and routed experts over their own, at other speeds, and
    a stage with fewer layers but the output layer can be the busiest while one with
    more layers gathers more under ZeRO-3. A stage's stalls inside the micro-batches count
    less what the slots' waits for their sends hold (SyncTimes.stall). The first of equals."""
    slowest, slowest_s = None, -1.0
    stages = tuple(zip(stage_times, sync_params))
    wait = micro_batches * (pipe.steady - pipe.busy)
    for mb, (shared, expert) in stages:
        if len(stages) > 1 and _outwaited(mb, (shared, expert), stages):
            continue
        if ctx.modern:
            times = modern_sync(ctx, par, micro_batches, mb, pipe, (shared, expert))
        else:
            times = legacy_sync(ctx, par, micro_batches, mb, pipe, shared + expert)
        _hold_in_own_slack(times, micro_batches * (pipe.busy - mb.busy))
        times.held = held_by_sends(times.stall, wait)
        waits = times.dp_exposed + times.zero_exposed + times.optimizer - times.held
        if waits > slowest_s:
            slowest, slowest_s = times, waits
    return slowest


def held_by_sends(stall, wait):
    """Seconds of `stall` (SyncTimes.stall) a pipeline's slots hold, given `wait`, the
    seconds per step its slots wait for their sends (m (steady - busy), step_time.pipeline_times).
    Traffic that stalls compute inside each micro-batch lengthens the busy part of its slot;
    a slot whose sends outlast its busy time waits for them anyway, and the stall runs in that
    wait: the slot lasts max(busy + stall, sends) per micro-batch. Without it more compute
    could shorten a send-bound step, by hiding more of the traffic in a slot whose length the
    sends set."""
    return stall if stall < wait else wait


def _hold_in_own_slack(times, slack):
    """A stage lighter than the slowest waits in each slot for its input: `slack` seconds per
    step (m (busy of the slowest - its own busy)). Its stalls inside the slots (SyncTimes.stall)
    run there first, as in a wait for the sends (held_by_sends), and the step does not wait
    for them: they leave its exposed seconds, in the shares they make of them. Without it a
    light stage's stalls counted in full, and more compute on it, which hid more of them
    behind its layers, could shorten the step it does not set."""
    own = times.stall if times.stall < slack else slack
    if own <= 0.0:
        return
    exposed = times.dp_exposed + times.zero_exposed
    times.dp_exposed -= own * times.dp_exposed / exposed
    times.zero_exposed -= own * times.zero_exposed / exposed
    times.stall -= own


def _outwaited(mb, params, stages):
    """Whether another stage of `stages` [(MicroBatchTimes, (shared, expert))] waits at least
    as long as this one by construction, so this one need not be computed: as many or more
    of both kinds of parameters, layers of the same times and as many or more of each
    (MicroBatchTimes.layer_windows), no more compute to hide behind (exposed sync and
    optimizer step grow with the traffic and shrink with the window, sync.py) and no less
    busy time (no more of its own slack to hold its stalls in, _hold_in_own_slack). Of
    identical stages the first is kept. Usually the first stage (it also holds the
    embedding) outwaits the middle ones of an even split."""
    room = mb.backward + mb.recompute
    earlier = True
    for other, other_params in stages:
        if other is mb:
            earlier = False
            continue
        other_room = other.backward + other.recompute
        if (other_params[0] >= params[0] and other_params[1] >= params[1]
                and other.forward <= mb.forward and other_room <= room and other.busy >= mb.busy
                and _more_layers_alike(other.layer_windows, mb.layer_windows)):
            same = (other_params == params and other.layers == mb.layers and other.forward == mb.forward
                    and other_room == room)
            if earlier or not same:
                return True
    return False


def _more_layers_alike(windows, than):
    """Whether layer windows ((layers, forward, backward), ...) have the same layer times as
    `than`, group by group, and at least as many layers in each group."""
    return len(windows) == len(than) and all(
        count >= other_count and forward == other_forward and backward == other_backward
        for (count, forward, backward), (other_count, other_forward, other_backward) in zip(windows, than))


def legacy_sync(ctx, par, micro_batches, mb, pipe, params_per_gpu):
    """The 2021 stack's data-parallel traffic (module docstring)."""
    t, p, d, v, zero = par.tp, par.pp, par.sync_ranks, par.interleave, par.zero
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
        z3 = zero3_times(ctx, t, p, d, par.ep)
        gather, fill, reduce = z3.gather, z3.layer_gather, z3.reduce
        exposed_forward = fill + excess(gather - fill, overlap * mb.forward)
        out.zero_total = 2.0 * m * gather
        out.dp_total = m * reduce
        if ctx.grad_overlap:
            exposed_backward = fill + excess(gather + reduce - fill, overlap * (mb.backward + mb.recompute))
            share = gather / (gather + reduce) if gather + reduce > 0.0 else 1.0
            out.zero_exposed = m * (exposed_forward + share * exposed_backward)
            out.dp_exposed = m * (1.0 - share) * exposed_backward
        else:
            backward_gathers = fill + excess(gather - fill, overlap * (mb.backward + mb.recompute))
            out.zero_exposed = m * (exposed_forward + backward_gathers)
            out.dp_exposed = out.dp_total
        out.stall = out.zero_exposed + out.dp_exposed  # all of it per micro-batch
    else:
        # All-reduce, or reduce-scatter + all-gather under ZeRO-1/2: the same
        # 2 Psi volume (arXiv:1910.02054 Sec 7.1, 7.2.1), in buckets that
        # leave while the last micro-batch's backward runs; ZeRO-2 also
        # reduce-scatters the micro-batches before it (earlier_syncs).
        # With v interleaved chunks a chunk's gradients are final once its
        # last backward ends, spread over the drain phase: (v - 1)/v of the
        # drain bubble is idle time the buckets of finished chunks can use.
        out.dp_total = bucket_times(ctx, params_per_gpu * ctx.grad_bytes, d, ranks_per_node, 2.0)[0]
        out.dp_exposed = excess(out.dp_total, overlap * pipe.backward + (v - 1.0) / v * pipe.bubble)
        out.stall = 0.0
        if zero == 2 and m > 1:
            reduce = bucket_times(ctx, params_per_gpu * ctx.grad_bytes, d, ranks_per_node, 1.0)[0]
            earlier, exposed = earlier_syncs(reduce, m, mb, overlap)
            out.dp_total += earlier
            out.dp_exposed += exposed
            out.stall = earlier if not ctx.grad_overlap else exposed
        if not ctx.grad_overlap:
            out.dp_exposed = out.dp_total
        out.zero_total = out.zero_exposed = 0.0
    out.optimizer = optimizer_time(ctx, params_per_gpu, d, zero)
    return out


def modern_sync(ctx, par, micro_batches, mb, pipe, sync_params):
    """The modern stack's data-parallel traffic (module docstring).

    Ranks that hold the same shared weights are the dp x cp data- and
    context-parallel GPUs; ZeRO shards over dp_shard x cp of them (all unless
    hybrid sharding), and hybrid sharding all-reduces each shard's gradients
    across the dp / dp_shard replicas once per step. Megatron-Core's rank
    order puts tensor parallelism innermost, then context, then data
    parallelism (pipeline outermost), so gpus_per_node / t of a data-parallel
    group share a node. Routed experts sync over the GPUs holding the same
    experts (gpu_memory.expert_shard_ranks), ep apart in rank order. All of
    that traffic hides behind one step's compute (Room): what one class hides
    the next cannot.
    """
    shared, expert = sync_params
    ranks = par.sync_ranks
    shard = par.shard_ranks * par.cp if par.zero >= 1 else ranks
    per_node = group_per_node(ctx, par.tp)
    out = SyncTimes()
    replicas = ranks // shard
    out.link = "none" if ranks == 1 else ("nvlink" if min(per_node, shard) >= shard and replicas == 1 else "inter_node")
    # The last micro-batch's backward. With v interleaved chunks the last
    # group of p micro-batches runs its backward chunk by chunk (last chunk
    # first, arXiv:2104.04473 Sec 2.2.2), so a chunk's gradients are final
    # while the other chunks' backwards of that group still run: on average
    # (v - 1)/v of p - 1 more micro-batches. The parameter all-gather hides
    # behind the first group's forwards the same way.
    group = 1.0 + (par.interleave - 1.0) / par.interleave * (par.pp - 1.0)
    room = Room(group * pipe.backward, group * pipe.forward, mb.forward + mb.backward + mb.recompute)
    out.dp_total = out.dp_exposed = out.zero_total = out.zero_exposed = 0.0
    if par.zero >= 3 and shard > 1:
        out.zero_total, out.zero_exposed, out.dp_total, out.dp_exposed = fsdp_times(
            ctx, par, micro_batches, mb, shard, min(per_node, shard), room)
        # Per layer, in every micro-batch: what is exposed and what hides.
        room.stalled += out.zero_exposed + out.dp_exposed
        room.slot_hidden += out.zero_total + out.dp_total - out.zero_exposed - out.dp_exposed
    else:
        _add(out, replica_sync(ctx, shared, shard, min(per_node, shard), par.zero, room, micro_batches))
    if replicas > 1:
        across, bucket = bucket_times(ctx, shared * ctx.grad_bytes / shard, replicas, 1, 2.0)
        _add(out, (across, room.reduction(ctx, across, bucket)))
        if par.zero >= 2 and syncs_replicas_every_backward(ctx.stack):
            _add(out, room.earlier(ctx, across, micro_batches))
    if expert:
        expert_ranks = par.tp * par.cp * par.dp // par.ep
        expert_per_node = group_per_node(ctx, par.ep)
        _add(out, replica_sync(ctx, expert, expert_ranks, min(expert_per_node, expert_ranks), min(par.zero, 2),
                               room, micro_batches if par.zero == 2 else 1))
    hidden = out.dp_total + out.zero_total - out.dp_exposed - out.zero_exposed
    # What hides inside the micro-batches' slots slows the compute there: a slot that
    # waits for its sends holds that too, as it holds what is exposed there (held_by_sends).
    out.stall = room.stalled + cal.COMM_CONTENTION * room.slot_hidden
    out.dp_exposed += cal.COMM_CONTENTION * hidden
    out.optimizer = optimizer_time(ctx, shared, shard, par.zero)
    if expert:
        out.optimizer += optimizer_time(ctx, expert, par.tp * par.cp * par.dp // par.ep, par.zero)
    return out


class Room:
    """Compute one step has left to hide the modern stack's data-parallel traffic
    behind, in seconds: the last micro-batch's backward (gradient reductions),
    the first forward (the updated weights' all-gather) and each earlier
    micro-batch's forward and backward (what is synced after every micro-batch).
    Each traffic class takes what it hides, so compute hides communication once
    however many classes share it (ZeRO-3's per-layer traffic, hybrid sharding's
    all-reduce across replicas, the routed experts' sync; the same rule as the
    2021 stack's one window, calibration.DP_OVERLAP_FRACTION). The total hidden
    does not depend on the order the classes take it in. stalled: the exposed seconds
    of the syncs that wait inside the micro-batches (earlier, ZeRO-3's per-layer traffic);
    slot_hidden: the seconds of theirs that hide there (SyncTimes.stall counts both)."""

    __slots__ = ("backward", "forward", "between", "stalled", "slot_hidden")

    def __init__(self, backward, forward, between):
        self.backward, self.forward, self.between = backward, forward, between
        self.stalled = self.slot_hidden = 0.0

    def behind_forward(self, total, bucket):
        """Exposed seconds of a bucketed all-gather behind the forward left (_exposed)."""
        exposed = _exposed(total, bucket, self.forward)
        self.forward -= total - exposed
        return exposed

    def reduction(self, ctx, total, bucket):
        """Exposed seconds of a bucketed gradient reduction behind the backward left, or all
        of it without Workload.grad_reduce_overlap (which then takes no room)."""
        if not ctx.grad_overlap:
            return total
        exposed = _exposed(total, bucket, self.backward)
        self.backward -= total - exposed
        return exposed

    def earlier(self, ctx, seconds, micro_batches):
        """(total, exposed) of a sync of `seconds` after each micro-batch before the last
        (earlier_syncs), each behind what is left of that micro-batch's compute."""
        earlier = micro_batches - 1
        if earlier <= 0:
            return 0.0, 0.0
        if not ctx.grad_overlap:
            self.stalled += earlier * seconds
            return earlier * seconds, earlier * seconds
        exposed = excess(seconds, self.between)
        self.between -= seconds - exposed
        self.stalled += earlier * exposed
        self.slot_hidden += earlier * (seconds - exposed)
        return earlier * seconds, earlier * exposed

    def take(self, forward, backward):
        """Take what ZeRO-3's per-layer traffic hides in each micro-batch's forward and backward."""
        self.forward = _less(self.forward, forward)
        self.backward = _less(self.backward, backward)
        self.between = _less(self.between, forward + backward)


def _less(window, used):
    return window - used if window > used else 0.0


def gathers_on_fabric(ctx, par):
    """Whether ZeRO-3's per-layer gathers leave a node on the modern stack: modern_sync's
    shard group, cp x dp_shard ranks placed after tensor parallelism, outgrows one node's
    share of it (step_time.layer_windows reads which link they take)."""
    shard = par.shard_ranks * par.cp
    return group_per_node(ctx, par.tp) < shard


def group_per_node(ctx, inner):
    """GPUs of one group per node when `inner` consecutive ranks of another
    parallelism come first in rank order (at least one)."""
    return ctx.gpus_per_node // inner if inner < ctx.gpus_per_node else 1


def replica_sync(ctx, params, ranks, ranks_per_node, zero, room=None, micro_batches=1):
    """(total, exposed) seconds of one step's gradient sync of `params`
    parameters over `ranks` GPUs: an all-reduce (ZeRO-0) or a reduce-scatter
    (ZeRO-1/2, arXiv:1910.02054 Sec 7.1) behind the backward window, and under
    ZeRO-1/2 the distributed optimizer's all-gather of the updated 16-bit
    weights behind the next step's first forward (--overlap-param-gather).
    ZeRO-2 also reduce-scatters the gradients of each of the `micro_batches`
    before the last (Room.earlier). The weights
    move in 16 bits, or in FP8 with Workload.fp8_weight_gather
    (context.layer_gather_bytes: Megatron-Core's --fp8-param-gather with the
    distributed optimizer, torchao's FP8 all-gather under FSDP2); the embedding
    and output layer, which stay 16-bit, are counted in FP8 too (a teaching
    assumption that shortens the gather of a stage that holds them).
    `room`: what is left of the step's compute to hide behind (Room), which it takes
    from; none (the totals alone) when not given."""
    if room is None:
        room = Room(0.0, 0.0, 0.0)
    if ranks <= 1 or params <= 0.0:
        return 0.0, 0.0
    factor = 2.0 if zero == 0 else 1.0
    reduce, bucket = bucket_times(ctx, params * ctx.grad_bytes, ranks, ranks_per_node, factor)
    total, exposed = reduce, room.reduction(ctx, reduce, bucket)
    if zero == 2 and micro_batches > 1:
        earlier, hidden_behind = room.earlier(ctx, reduce, micro_batches)
        total += earlier
        exposed += hidden_behind
    if zero >= 1:
        gather, bucket = bucket_times(ctx, ctx.layer_gather_bytes * params, ranks, ranks_per_node, 1.0)
        total += gather
        exposed += room.behind_forward(gather, bucket)
    return total, exposed


def earlier_syncs(seconds, micro_batches, mb, share=1.0):
    """(total, exposed) seconds of a gradient sync of `seconds` that runs after every
    micro-batch's backward, for the micro-batches before the last: ZeRO-2's
    reduce-scatter, and on the PyTorch-native stack hybrid sharding's all-reduce across
    the replicas (stack.syncs_replicas_every_backward). A GPU that keeps only its shard
    of the gradients cannot hold one micro-batch's full gradients until the next one's
    are added to them, so each micro-batch's backward ends with its own reduce-scatter
    (arXiv:1910.02054 Sec 5.2: gradients are reduced as they are produced and the rest
    freed; DeepSpeed's stage 2, PyTorch FSDP2 without resharding, Megatron-FSDP's
    optim_grads). Each hides behind the compute that runs before the next
    micro-batch's gradients are ready (that micro-batch's forward and backward; `share`
    of it on the 2021 stack, calibration.DP_OVERLAP_FRACTION). Megatron's distributed
    optimizer (ZeRO-1) accumulates into full-size gradients and reduce-scatters once
    per step."""
    earlier = micro_batches - 1
    between = share * (mb.forward + mb.backward + mb.recompute)
    return earlier * seconds, earlier * excess(seconds, between)


def _add(out, times):
    out.dp_total += times[0]
    out.dp_exposed += times[1]


def _exposed(total, bucket, window):
    """A bucketed collective behind a compute window: the last bucket cannot
    start before the window ends, the rest hides up to the window's length."""
    return bucket + excess(total - bucket, window)


def fsdp_times(ctx, par, micro_batches, mb, shard, shard_per_node, room=None):
    """(gather total, gather exposed, reduce total, reduce exposed) seconds per step
    of fully sharded data parallelism as PyTorch FSDP runs it.

    Per micro-batch each layer's 16-bit weights are all-gathered before its
    forward while the layer before computes (prefetch one layer ahead), freed
    after it, gathered again for its backward, and its gradients are
    reduce-scattered while the next layer's backward runs (arXiv:2304.11277
    Sec 3.3-3.4; reshard after forward, the default). The first gather of the
    forward and the last reduce-scatter are exposed; the embedding and output
    layer are one more unit gathered first. Collectives over the shard group
    use the hierarchical link model (comms.group_time: each GPU's NIC carries
    1/k of a node's traffic). What it hides it takes from `room` (Room), when given.
    """
    gather, reduce, gather_embedding, reduce_embedding = fsdp_unit_times(ctx, par.tp, par.ep, shard, shard_per_node)
    layers = mb.layers
    windows = mb.layer_windows
    forward = gather_embedding + gather + _behind_layers(windows, gather, 1, first_exposed=True)
    m = micro_batches
    gather_total = m * (2.0 * layers * gather + gather_embedding)
    reduce_total = m * (layers * reduce + reduce_embedding)
    hidden_forward = layers * gather + gather_embedding - forward
    if not ctx.grad_overlap:
        # Each layer's reduce-scatter waits for the backward; its gathers still prefetch.
        backward = _behind_layers(windows, gather, 2)
        if room is not None:
            room.take(hidden_forward, layers * gather - backward)
        return gather_total, m * (forward + backward), reduce_total, reduce_total
    backward = _behind_layers(windows, gather + reduce, 2)
    if room is not None:
        room.take(hidden_forward, layers * (gather + reduce) - backward)
    share = gather / (gather + reduce)
    gather_exposed = m * (forward + share * backward)
    reduce_exposed = m * ((1.0 - share) * backward + reduce_embedding)
    return gather_total, gather_exposed, reduce_total, reduce_exposed


def _behind_layers(windows, seconds, part, first_exposed=False):
    """Exposed seconds of `seconds` of traffic per layer hidden behind each layer's own
    window (MicroBatchTimes.layer_windows, `part` 1 forward, 2 backward); with
    first_exposed the first layer's is counted apart (exposed whole, by the caller)."""
    if len(windows) == 1:
        count = windows[0][0] - 1 if first_exposed else windows[0][0]
        return count * excess(seconds, windows[0][part])
    total = 0.0
    for window in windows:
        total += window[0] * excess(seconds, window[part])
    return total - excess(seconds, windows[0][part]) if first_exposed else total


def fsdp_unit_times(ctx, tp, ep, shard, shard_per_node):
    """(gather, reduce, gather_embedding, reduce_embedding) seconds of fsdp_times'
    units: the largest layer's weights all-gathered and its gradients
    reduce-scattered, and the same for the embedding unit, over `shard` ranks
    (`shard_per_node` of them in a node). Also read by the planner's bounds.
    A layer's weights move in 16 bits, or in FP8 with Workload.fp8_weight_gather
    (torchao casts Float8Linear weights before FSDP2's all-gather,
    enable_fsdp_float8_all_gather, as torchtitan's 405B config of 2024-10
    does); the embedding unit stays 16-bit."""
    nvl, nic = ctx.nvlink_rate, ctx.nic_rate
    layer = largest_layer_params(ctx.shape, tp, ep)
    embedding = ctx.vocab * ctx.hidden / tp + ctx.seq_len * ctx.hidden
    return (group_time(ctx.layer_gather_bytes * layer, shard, shard_per_node, nvl, nic, 1.0),
            group_time(ctx.grad_bytes * layer, shard, shard_per_node, nvl, nic, 1.0),
            group_time(WEIGHT_BYTES * embedding, shard, shard_per_node, nvl, nic, 1.0),
            group_time(ctx.grad_bytes * embedding, shard, shard_per_node, nvl, nic, 1.0))


def bucket_times(ctx, volume, ranks, ranks_per_node, factor):
    """(total, one bucket) seconds of `volume` bytes sent in buckets of
    calibration.DP_BUCKET_BYTES (the message size NCCL sees)."""
    if ranks <= 1 or volume <= 0.0:
        return 0.0, 0.0
    size = volume if volume < cal.DP_BUCKET_BYTES else cal.DP_BUCKET_BYTES
    one = group_time(size, ranks, ranks_per_node, ctx.nvlink_rate, ctx.nic_rate, factor)
    return volume / size * one, one


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


def zero3_times(ctx, tp, pp, dp, ep):
    """Per-layer weight all-gather, one pass's gathers and the gradient reduce-scatter.

    Messages are one layer's 16-bit weights (2 x layer params / t bytes; with
    experts, the largest layer a GPU holds, gpu_memory.largest_layer_params) or
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
    layer = largest_layer_params(ctx.shape, tp, ep)
    emb = ctx.vocab * ctx.hidden / tp + ctx.seq_len * ctx.hidden
    nvl, nic = ctx.nvlink_rate, ctx.nic_rate
    g_layer = group_time(2.0 * layer, dp, rpn, nvl, nic, 1.0)
    gather = (ctx.layers / pp) * g_layer + group_time(2.0 * emb, dp, rpn, nvl, nic, 1.0)
    g = ctx.grad_bytes
    reduce = ((ctx.layers / pp) * group_time(g * layer, dp, rpn, nvl, nic, 1.0)
              + group_time(g * emb, dp, rpn, nvl, nic, 1.0))
    return Zero3Times(g_layer, gather, reduce)

