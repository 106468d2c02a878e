"""Cheap predictions the search uses to skip plans without evaluating them.

Memory comes from the model's own per-GPU functions (lab_core.gpu_memory:
stage_params, state_parts, stage_activations, per kind of stage of the grid's
split, with its cp and ep), so the planner's memory prediction is evaluate()'s
figure by construction. The step-time bound (StepBound) is extrapolated from
one evaluated probe of each grid, so the planner can rule a candidate out in
about a microsecond. Bounds only ever *skip* work: every plan the planner
returns comes from evaluate(). tests/planner/test_planner_bounds.py checks
that memory is exact and that the time bound never exceeds evaluate()'s step
time, so a model change that breaks either shows up there.
"""
from operator import add

from .. import calibration as cal
from ..comms import size_efficiency
from ..efficiency import layer_gemm_seconds, moe_layer_gemm_seconds
from ..gpu_memory import stage_params
from .memory_table import table_for
from ..sync import fsdp_unit_times, modern_sync, group_per_node, optimizer_time, replica_sync, zero3_times
from ..parallelism import Parallelism, zero_stages
from ..pipeline import least_drain_slots
from ..stack import least_tp_overlap_waiting_share
from ..step_time import (context_parallel_charge, expert_alltoall_times, layer_kinds, output_layer_times,
                         pipeline_send_seconds, pipeline_span)

__all__ = ("SharedFloor", "StepBound", "fits", "grid_stages", "most_loaded", "plan_memory",
           "stage_activation_bytes", "stage_state_bytes")

def grid_stages(ctx, grid):
    """The kinds of stage of the grid's pipeline split (gpu_memory.stages)."""
    return table_for(ctx).kinds(grid)


def stage_state_bytes(ctx, grid, zero):
    """Training state of each kind of stage (grid_stages order), as gpu_memory.memory_of counts it:
    shared weights sharded over the dp x cp ranks, experts over the tp cp dp / ep ranks."""
    return table_for(ctx).states(grid, zero)


def stage_activation_bytes(ctx, grid, recompute, micro_batch, interleave, sequence_parallel=None):
    """Activations of each kind of stage (gpu_memory.stage_activations) of a plan
    with micro-batch b on the grid's dp replicas. Sequence parallelism is on whenever
    tp > 1 unless sequence_parallel says otherwise (the planner's rule, see search.py)."""
    sp = grid.tp > 1 if sequence_parallel is None else sequence_parallel
    return table_for(ctx).activations(grid, recompute, micro_batch, interleave, sp and grid.tp > 1)


def fits(states, activations):
    """The most loaded GPU's bytes: the largest state + activations of any stage."""
    return max(map(add, states, activations))


def most_loaded(states, activations):
    """Index of the stage whose GPU fits() measures: the most state plus activations."""
    return max(range(len(states)), key=lambda i: states[i] + activations[i])


def plan_memory(ctx, grid, zero, recompute, micro_batch, interleave, sequence_parallel=None):
    """evaluate()'s memory_bytes of a plan on `grid`, without evaluating it."""
    return fits(stage_state_bytes(ctx, grid, zero),
                stage_activation_bytes(ctx, grid, recompute, micro_batch, interleave, sequence_parallel))


def floor_memory(ctx, grid):
    """The least memory any plan of the grid uses: the most ZeRO sharding it
    allows (parallelism.zero_stages), full recompute, micro-batch 1, no interleaving."""
    return plan_memory(ctx, grid, zero_stages(ctx.stack, grid.pp, grid.shards)[-1], "full", 1, 1)


def _sync_params(ctx, grid):
    """(shared, expert) parameters of the stage whose GPU holds the most. The model's sync and
    optimizer step are the slowest stage's (sync.gradient_sync), each stage's with its own
    compute, no more than the busiest stage's the bounds take as the window, so what the
    bounds derive from this stage's traffic stays below it."""
    best = (0.0, 0.0)
    for stage in grid_stages(ctx, grid):
        shared, expert = stage_params(ctx, grid.tp, stage, grid.pp, grid.ep)
        if shared + expert > best[0] + best[1]:
            best = (shared, expert)
    return best


def _weights_key(grid):
    """What a grid's gradient sync and optimizer step depend on: the weights a GPU holds
    (tp, pp and the split, ep) and the dp x cp ranks that hold the same ones, not how
    those ranks divide into dp and cp (sync.modern_sync places them after tensor
    parallelism either way). For one GPU count, grids that differ only in cp share it."""
    return grid.tp, grid.pp, grid.first, grid.last, grid.ep, grid.dp * grid.cp


def _optimizer_s(ctx, grid, zero):
    """sync.py's optimizer step of the grid at a ZeRO stage (modern: shared and
    expert state each over its own ranks; 2021 stack: all over dp x cp)."""
    return _remember(ctx, ("optimizer", _weights_key(grid), zero), _optimizer_at, grid, zero)


def _optimizer_at(ctx, grid, zero):
    return _stage_optimizer_s(ctx, grid, zero, _sync_params(ctx, grid))


def _stage_optimizer_s(ctx, grid, zero, params):
    shared, expert = params
    ranks = grid.dp * grid.cp
    if not ctx.modern:
        return optimizer_time(ctx, shared + expert, ranks, zero)
    out = optimizer_time(ctx, shared, ranks, zero)
    if expert:
        out += optimizer_time(ctx, expert, grid.expert_ranks, zero)
    return out


def _least_optimizer_s(ctx, grid, zero):
    """The least of the stages' optimizer steps at a ZeRO stage: what a bound may add to the
    stalls inside the slowest stage's slots, which the step pays with that stage's own
    optimizer step (a lighter stage holds its stalls in its own waits, sync.gradient_sync).
    The grid's only stage's without pipelining (_optimizer_s)."""
    if grid.pp == 1:
        return _optimizer_s(ctx, grid, zero)
    return _remember(ctx, ("least optimizer", _weights_key(grid), zero), _least_optimizer_at, grid, zero)


def _least_optimizer_at(ctx, grid, zero):
    return min(_stage_optimizer_s(ctx, grid, zero, params) for params in _each_stage_params(ctx, grid))


def _each_stage_params(ctx, grid):
    """(shared, expert) parameters on one GPU of each kind of stage of the grid (gpu_memory.stage_params)."""
    return [stage_params(ctx, grid.tp, stage, grid.pp, grid.ep) for stage in grid_stages(ctx, grid)]


def outside_floor(optimizer, least_optimizer, sync):
    """What every plan adds to its busy time besides the sends and the bubble, at least: its
    optimizer step and its least sync `sync` (sync_floor). The sync ZeRO-3 stalls inside the
    slots is paid with the slowest stage's optimizer step, which may be the least
    (`least_optimizer`); the stage whose optimizer step is `optimizer` pays at least that."""
    with_sync = least_optimizer + sync
    return with_sync if with_sync > optimizer else optimizer


class _NoWindow:
    """A micro-batch (and pipeline) without compute: sync.modern_sync's traffic totals do not depend on its windows."""

    forward = backward = recompute = 0.0


class _SyncPlan:
    """The fields sync.modern_sync reads from a plan (the grid's, at a ZeRO stage below 3,
    full sharding), without building and checking a lab_core.Parallelism for each grid."""

    __slots__ = ("tp", "cp", "pp", "dp", "ep", "zero", "interleave", "dp_shard")

    sync_ranks = Parallelism.sync_ranks
    shard_ranks = Parallelism.shard_ranks

    def __init__(self, grid, zero):
        self.tp, self.cp, self.pp, self.dp, self.ep = grid.tp, grid.cp, grid.pp, grid.dp, grid.ep
        self.zero, self.interleave, self.dp_shard = zero, 1, 0


def sync_floor(ctx, grid):
    """Seconds of data-parallel sync no plan of the grid exposes less of, on the
    modern stack: what hides still costs COMM_CONTENTION of its time
    (sync.modern_sync: exposed + C (total - exposed) >= C total), and no ZeRO
    stage moves less than the least of ZeRO-1's traffic and ZeRO-3's at one
    micro-batch (_sync_parts). 0 on the 2021 stack, which charges no contention."""
    below, fsdp = _sync_parts(ctx, grid)
    return cal.COMM_CONTENTION * (fsdp.total if fsdp is not None and fsdp.total < below else below)


def _sync_parts(ctx, grid):
    """(seconds of ZeRO-1's sync traffic, ZeRO-3's per micro-batch as an _Fsdp or None),
    the least traffic of the grid's plans below ZeRO-3 and at it, on the modern stack
    (0 and None on the 2021 stack). ZeRO-0's all-reduce and ZeRO-2 move at least
    ZeRO-1's traffic (ZeRO-0 when the grid has no ranks to shard over), computed by
    sync.modern_sync itself; ZeRO-3 gathers each layer's weights twice and
    reduce-scatters its gradients per micro-batch (sync.fsdp_times), counted over the
    stage with the fewest layers."""
    if not ctx.modern:
        return 0.0, None
    return _remember(ctx, ("sync parts", _weights_key(grid)), _sync_parts_at, grid)


def _sync_parts_at(ctx, grid):
    below = modern_sync(ctx, _SyncPlan(grid, 1 if grid.shards else 0), 1, _NoWindow, _NoWindow,
                        _sync_params(ctx, grid)).dp_total
    if not (grid.shards and grid.dp * grid.cp > 1):
        return below, None
    return below, _Fsdp(ctx, grid)


def _expert_sync_s(ctx, grid):
    """Seconds of the routed experts' gradient sync per step at ZeRO-3 on the modern stack
    (sync.modern_sync: outside the per-layer gathers, a reduce-scatter and the updated
    weights' all-gather over the GPUs that hold the same experts, as below ZeRO-3,
    hidden behind what the per-layer traffic leaves of the last micro-batch, _Fsdp.with_experts);
    0 without experts or on the 2021 stack. With stages, the least of theirs: it comes with the
    slowest stage's stalls inside its slots (_least_optimizer_s)."""
    if not ctx.modern or ctx.shape.experts is None:
        return 0.0
    return _remember(ctx, ("expert sync", _weights_key(grid)), _expert_sync_at, grid)


def _expert_sync_at(ctx, grid):
    ranks = grid.expert_ranks
    return min(replica_sync(ctx, expert, ranks, min(group_per_node(ctx, grid.ep), ranks), 2)[0]
               for _, expert in _each_stage_params(ctx, grid))


def _zero2_reduce_s(ctx, grid):
    """Seconds of one micro-batch's gradient reduce-scatter at ZeRO-2 on the modern stack, which
    it repeats for every micro-batch but the last (sync.earlier_syncs): the shared
    weights' over the dp x cp ranks and the routed experts' over the GPUs that hold the same
    ones, as sync.modern_sync sends them; 0 on the 2021 stack (its bounds leave the repeats out).
    With stages, the least of theirs: the repeats stall the slowest stage's slots, a lighter
    stage holds its own in its waits (_least_optimizer_s)."""
    if not (ctx.modern and grid.shards):
        return 0.0
    return _remember(ctx, ("zero2 reduce", _weights_key(grid)), _zero2_reduce_at, grid)


def _zero2_reduce_at(ctx, grid):
    # The model's own traffic: a second micro-batch adds exactly one repeat (sync.earlier_syncs).
    plan = _SyncPlan(grid, 2)
    return min(modern_sync(ctx, plan, 2, _NoWindow, _NoWindow, params).dp_total
               - modern_sync(ctx, plan, 1, _NoWindow, _NoWindow, params).dp_total
               for params in _each_stage_params(ctx, grid))


def _beyond_window(traffic, window):
    """The modern stack's charge for a sync of `traffic` seconds behind `window` seconds of
    compute: what does not fit is exposed, what hides costs COMM_CONTENTION of its time."""
    exposed = traffic - window
    return (1.0 - cal.COMM_CONTENTION) * (exposed if exposed > 0.0 else 0.0) + cal.COMM_CONTENTION * traffic


def _smallest_gemm_rows(ctx, grid):
    """Rows of the smallest GEMM one sequence gives a GPU (the one whose rate a
    larger micro-batch can raise the most): the s / cp tokens; with mixture of
    experts the router's tokens / t and each routed expert's ep (s / cp / t) k / E
    (efficiency.moe_layer_gemm_seconds)."""
    rows = ctx.seq_len / grid.cp
    experts = ctx.shape.experts
    if experts is not None:
        per_rank = rows / grid.tp
        routed = grid.ep * per_rank * experts.per_token / experts.count
        rows = min(rows, per_rank, routed)
    return rows


# Exact sums rebuilt from parts may round above the model's own; bounds give this much away.
_ROUNDING = 1.0 - 1e-9


# The last context's figures that depend on a few fields of a grid, by those
# fields (many grids share them): the model's own functions, asked once each.
_REMEMBERED = [None, {}]


def _remember(ctx, key, compute, *args):
    """compute(ctx, *args), once per key for the context the search is on."""
    if _REMEMBERED[0] is not ctx:
        _REMEMBERED[0], _REMEMBERED[1] = ctx, {}
    found = _REMEMBERED[1].get(key)
    if found is None:
        found = _REMEMBERED[1][key] = compute(ctx, *args)
    return found


def _tp_exposed_share(ctx, tp):
    """The least share of a layer's TP communication the step waits for, with
    sequence parallelism (step_time.tensor_parallel_exposed): overlapped, one
    of t ring steps of a share w of the collectives waits
    (stack.tp_overlap_waiting_share, least over recompute modes) and the hidden
    rest costs COMM_CONTENTION, so exposed + C (comm - exposed) = (1 - C) exposed
    + C comm, which grows with the exposed part (C < 1) and is least when only
    those steps wait: comm ((1 - C) w / t + C). Not overlapped: all of it."""
    if not (ctx.tp_overlap and tp > 1):
        return 1.0
    return (1.0 - cal.COMM_CONTENTION) * least_tp_overlap_waiting_share(ctx.stack) / tp + cal.COMM_CONTENTION


def _logits_s(ctx, tp, cp, b):
    """step_time.output_layer_times (it reads only these of the plan)."""
    return _remember(ctx, ("logits", tp, cp, b), output_layer_times, tp, cp, b)


def _gemm_s(ctx, grid, b, moe=False):
    """One layer's forward GEMM seconds for a micro-batch of b (step_time._layer_kind):
    a dense layer's, or with moe a mixture-of-experts layer's at the grid's ep."""
    return _remember(ctx, ("gemm", grid.tp, grid.cp, grid.ep if moe else 1, b, moe), _layer_gemm_s, grid, b, moe)


def _layer_gemm_s(ctx, grid, b, moe):
    tokens = b * ctx.seq_len / grid.cp
    if moe:
        seconds = moe_layer_gemm_seconds(ctx.device, ctx.precision, tokens, ctx.hidden, ctx.kv_ratio, grid.tp,
                                         ctx.shape.experts, grid.ep, ctx.attention, ctx.fused_qkv)
    else:
        seconds = layer_gemm_seconds(ctx.device, ctx.precision, tokens, ctx.hidden, ctx.ffn_hidden, ctx.kv_ratio,
                                     grid.tp, ctx.attention, ctx.fused_qkv)
    return seconds / ctx.compute_factor


def _stage_gemm_s(ctx, grid, stage, b):
    """A stage's forward GEMM seconds for a micro-batch of b: its dense and mixture-of-experts layers."""
    out = stage.dense * _gemm_s(ctx, grid, b) if stage.dense else 0.0
    if stage.moe:
        out += stage.moe * _gemm_s(ctx, grid, b, moe=True)
    return out


class _Compute:
    """Compute seconds per sequence of one stage at any micro-batch.

    From the probe (b = 1): `base` the stage's compute per sequence without
    its per-layer pass overheads, `replay` what full recompute adds. A layer
    runs its forward GEMMs three times (forward, and twice that in the
    backward; timing.layer_times) and once more in a full replay, each at the
    rate of its own shape (efficiency.layer_gemm_seconds,
    moe_layer_gemm_seconds); the output layer at its bf16 rate
    (step_time.output_layer_times); with flash attention, attention and
    element-wise work are linear in b. So the stage's compute at b is the
    probe's with the GEMMs swapped for their time at b (exact). Without flash
    attention (attention at the GEMM rate of its shape) the bound scales the
    probe's by the most a GEMM's efficiency can grow, (r + T0 / b) / (r + T0)
    for its smallest GEMM of r rows (efficiency.gemm_efficiency).
    """

    __slots__ = ("ctx", "grid", "stage", "base", "replay", "exact", "gemm_1", "rows", "token_scale", "memo")

    def __init__(self, ctx, grid, base, replay, stage):
        self.ctx, self.grid, self.stage = ctx, grid, stage
        self.base, self.replay = base, replay
        self.memo = {}
        self.exact = ctx.flash
        if self.exact:
            self.gemm_1 = _stage_gemm_s(ctx, grid, stage, 1)
            logits = _logits_s(ctx, grid.tp, grid.cp, 1) if stage.output else (0.0, 0.0)
            self.base = base - 3.0 * self.gemm_1 - logits[0] - logits[1]
            self.replay = replay - self.gemm_1
        self.rows = _smallest_gemm_rows(ctx, grid)
        self.token_scale = cal.GEMM_TOKEN_SCALE[ctx.device.id]

    def per_sequence(self, b, full):
        """Seconds per sequence at micro-batch b, never above the model's."""
        if not self.exact:
            speedup = (self.rows + self.token_scale / b) / (self.rows + self.token_scale)
            return (self.base + (self.replay if full else 0.0)) * speedup
        found = self.memo.get((b, full))
        if found is None:
            gemm = self.gemm_1 if b == 1 else _stage_gemm_s(self.ctx, self.grid, self.stage, b) / b
            out = self.base + 3.0 * gemm
            if self.stage.output:
                logits = _logits_s(self.ctx, self.grid.tp, self.grid.cp, b)
                out += (logits[0] + logits[1]) / b
            if full:
                out += self.replay + gemm
            found = self.memo[(b, full)] = out * _ROUNDING
        return found


class _ExpertPlan:
    """The fields step_time.expert_alltoall_times reads from a plan."""

    __slots__ = ("tp", "cp", "ep", "micro_batch", "recompute")

    def __init__(self, grid, micro_batch, recompute):
        self.tp, self.cp, self.ep, self.micro_batch, self.recompute = grid.tp, grid.cp, grid.ep, micro_batch, recompute


def _expert_exchange_s(ctx, grid, b, recompute):
    """Exposed expert-parallel all-to-all seconds of one mixture-of-experts
    layer and micro-batch of b (step_time.expert_alltoall_times, the model's own;
    it reads only these fields of the plan, so it is remembered by them)."""
    if grid.ep == 1:
        return 0.0
    return _remember(ctx, ("exchange", grid.tp, grid.cp, grid.ep, b, recompute), _exchange_s, grid, b, recompute)


def _exchange_s(ctx, grid, b, recompute):
    return expert_alltoall_times(ctx, _ExpertPlan(grid, b, recompute))[1]


class _ContextParallel:
    """The context-parallel exchange of `layers` layers at any micro-batch.

    step_time.context_parallel_times: per layer, cp - 1 ring steps each send
    a block (2 b s/cp h r / t 16-bit values, forward; twice backward) behind
    an attention block; a step exposes max(0, send - attention), and the
    hidden part costs step_time.context_parallel_charge. A micro-batch of b
    sends b blocks at the bus bandwidth of that size (comms.size_efficiency)
    and its attention grows b-fold. One layer's exchange of one sequence
    (total and exposed seconds, micro-batch 1) gives the send and attention
    times; seconds(b) is then the model's figure.
    """

    __slots__ = ("layers", "steps", "send", "block", "attention", "contention")

    def __init__(self, ctx, grid, total, exposed, layers=1):
        cp = grid.cp
        self.layers = layers
        self.steps = 3.0 * (cp - 1)
        self.contention = context_parallel_charge(ctx)
        self.send = total / self.steps
        self.block = 2.0 * (ctx.seq_len / cp) * ctx.attention.kv_values_per_token() / grid.tp
        # A charge of 1 (the 2021 stack) exposes every step whatever the attention time.
        unhidden = (exposed - self.contention * total) / (1.0 - self.contention) if self.contention < 1.0 else 0.0
        # Exposed steps give the attention time; none exposed: at least the send (no exposure at any b).
        self.attention = self.send - unhidden / self.steps if unhidden > 0.0 else self.send

    def seconds(self, b):
        """Exposed seconds of one micro-batch of b sequences on the stage."""
        send = self.send * b * size_efficiency(self.block) / size_efficiency(self.block * b)
        attention = self.attention * b
        exposed = self.steps * (send - attention) if send > attention else 0.0
        return self.layers * ((1.0 - self.contention) * exposed + self.contention * self.steps * send)


class _Fsdp:
    """ZeRO-3 on the modern stack (sync.fsdp_times) at a given busy time.

    Per micro-batch the embedding unit and the first layer's gather are
    exposed; each later layer's gather hides behind the layer before's
    forward x, and its gather and gradient reduce-scatter behind its
    backward y; the last unit's reduce-scatter is exposed; the modern stack
    pays COMM_CONTENTION on what hides. A layer's x + y is its wall time
    (step_time.layer_windows), and a stage's layers' sum to at most the busy
    time of a micro-batch; a layer's exposure is convex and falling in its
    room, so the layers expose least with equal rooms, and the bound gives each
    the busy time over the stage's layers of its heavier kind (no more than
    its layers, so at least that). The least exposure for a room fills y first
    (its excess counts once per layer, x's once less). The stage with the
    fewest layers bounds them all (exposure grows with the layer count).
    """

    __slots__ = ("gather", "reduce", "gather_embedding", "reduce_embedding", "layers", "heavier_layers",
                 "contention", "total")

    def __init__(self, ctx, grid):
        """The grid's units (sync.fsdp_unit_times) over its dp x cp ranks, tensor
        parallelism innermost in a node (sync.modern_sync's placement)."""
        ranks = grid.dp * grid.cp
        per_node = group_per_node(ctx, grid.tp)
        self.gather, self.reduce, self.gather_embedding, self.reduce_embedding = fsdp_unit_times(
            ctx, grid.tp, grid.ep, ranks, min(per_node, ranks))
        kinds = grid_stages(ctx, grid)
        self.layers = min(stage.layers for stage in kinds)
        self.heavier_layers = min(stage.moe if stage.moe else stage.layers for stage in kinds)
        self.contention = cal.COMM_CONTENTION
        # One micro-batch's traffic: each layer's weights gathered twice, its gradients
        # reduce-scattered once, and the embedding unit.
        self.total = (2.0 * self.layers * self.gather + self.gather_embedding + self.layers * self.reduce
                      + self.reduce_embedding)

    def _exposed(self, B, m):
        """The least exposed ZeRO-3 seconds of one micro-batch at busy time B (see the class)."""
        g, r, L = self.gather, self.reduce, self.layers
        room = B / m / self.heavier_layers
        y = room if room < g + r else g + r
        x = room - y
        return (self.gather_embedding + g + (L - 1) * (g - x if g > x else 0.0) + L * (g + r - y)
                + self.reduce_embedding)

    def seconds(self, B, m):
        """Exposed ZeRO-3 seconds of a step of m micro-batches whose busy time is B."""
        return m * ((1.0 - self.contention) * self._exposed(B, m) + self.contention * self.total)

    def break_points(self, m):
        """Busy times where seconds() changes slope."""
        scale = m * self.heavier_layers
        return (scale * (self.gather + self.reduce), scale * (2.0 * self.gather + self.reduce))

    def with_experts(self, B, m, expert, widen):
        """seconds() with the routed experts' sync of `expert` seconds (_expert_sync_s) in the
        last micro-batch, whose compute, B / m x `widen` (an interleaved last group), hides
        it and that micro-batch's own per-layer traffic at most once (sync.Room): its
        exposure is at least seconds()'s and at least all that traffic beyond the window."""
        exposed = self._exposed(B, m)
        last = expert + self.total - B / m * widen
        if last < exposed:
            last = exposed
        return ((1.0 - self.contention) * ((m - 1) * exposed + last)
                + self.contention * (m * self.total + expert))

    def expert_break_points(self, m, expert, widen):
        """Busy times where with_experts() may change slope besides break_points(): where the
        last micro-batch's traffic beyond its window meets each line of seconds()'s exposure,
        E = a - b x room (room = B / (m x heavier layers)), the window being room x heavier
        layers x widen."""
        g, r, L, H = self.gather, self.reduce, self.layers, self.heavier_layers
        base = self.gather_embedding + g + self.reduce_embedding
        total = expert + self.total
        d = H * widen
        out = []
        for a, b in ((base + (L - 1) * g + L * (g + r), L), (base + (L - 1) * (2.0 * g + r), L - 1.0), (base, 0.0)):
            if d != b:
                room = (total - a) / (d - b)
                if room > 0.0:
                    out.append(room * m * H)
        return out


def shared_floor_applies(ctx):
    """Whether SharedFloor holds for the workload: flash attention (the
    attention and element-wise work of a layer grow linearly with the micro-batch)."""
    return ctx.flash


class _LayerFloor:
    """One kind of layer (dense or mixture of experts) of a (tp, cp, ep), per
    sequence at micro-batch 1 (step_time.layer_kinds): its compute without the
    forward GEMMs and the pass overheads, what a full replay adds beyond
    flash attention's, its TP traffic at asymptotic bus bandwidth and its
    context-parallel exchange."""

    __slots__ = ("moe", "compute_s", "replay_s", "tp_s_at_asymptote", "cp")

    def __init__(self, ctx, grid, kind, moe, tp_message_bytes):
        overhead = cal.LAYER_PASS_OVERHEAD_S
        gemm = _gemm_s(ctx, grid, 1, moe)
        times = kind.times
        self.moe = moe
        # The forward GEMMs run three times (forward, twice that in the backward; _Compute).
        self.compute_s = times.forward + times.backward + times.recompute - 2.0 * overhead - 3.0 * gemm
        replay = times.forward - times.recompute - overhead
        self.replay_s = (replay if replay > 0.0 else 0.0) - gemm
        self.tp_s_at_asymptote = (times.tp_comm * size_efficiency(tp_message_bytes) if grid.tp > 1 else 0.0)
        self.cp = (_ContextParallel(ctx, grid, kind.cp_total, kind.cp_exposed)
                   if grid.cp > 1 and kind.cp_total > 0.0 else None)


def _with_window(busy, bubble, traffic, room):
    """The least over busy times B >= busy of B x bubble plus the sync beyond its
    window on the modern stack (sync.modern_sync; StepBound._g): (1 - C) of
    `traffic` less B x room, the compute of one micro-batch (widened by an
    interleaved last group) that hides it, the shared weights' and the experts'
    syncs together (sync.Room; _beyond_window). Piecewise linear and convex in B: least at `busy`
    or where the window swallows the traffic."""
    step = busy * bubble + _beyond_window(traffic, busy * room)
    swallowed = traffic / room
    if swallowed > busy:
        at_swallowed = swallowed * bubble + cal.COMM_CONTENTION * traffic
        return at_swallowed if at_swallowed < step else step
    return step


def _with_fsdp(busy, bubble, m, fsdp, expert=0.0, room=1.0):
    """The least over busy times B >= busy of B x bubble plus ZeRO-3's exposed and
    contended seconds at B (_Fsdp.seconds), with the experts' sync in the last
    micro-batch's window, B x room, left by its own traffic (_Fsdp.with_experts):
    at `busy` or at a break point above it (convex and piecewise linear in B)."""
    points = [busy] + [point for point in fsdp.break_points(m) if point > busy]
    if expert:
        points += [point for point in fsdp.expert_break_points(m, expert, room * m) if point > busy]
    best = None
    for B in points:
        step = B * bubble + (fsdp.with_experts(B, m, expert, room * m) if expert else fsdp.seconds(B, m))
        if best is None or step < best:
            best = step
    return best


class SharedFloor:
    """A lower bound on the step of every plan of every grid with one tp, cp
    and ep, with flash attention (shared_floor_applies).

    A layer's times per sequence do not depend on pp, dp, the split or ZeRO:
    the model's own (step_time.layer_kinds, at micro-batch 1 with that tp,
    cp and ep) give, for a dense and a mixture-of-experts layer, the compute
    less the forward GEMMs (then at their rate for micro-batch b, as in
    _Compute), TP time and context-parallel exchange; a grid's stage of
    n_d dense and n_e expert layers then has n_d and n_e of each, plus the
    output layer on the last stage and each expert layer's all-to-all
    (_expert_exchange_s). Each stage's busy time is a lower bound for the
    slowest stage's, so the largest of them is one (floor(): least at the
    largest micro-batch, no bubble); least() adds each row's fill-and-drain
    bubble and the least exposed sync. It lets the search rule out a grid
    before evaluating any plan of it.
    """

    __slots__ = ("kinds", "tp_message_bytes", "tp_exposed_share", "parts", "busy", "stages", "sends", "syncs")

    def __init__(self, ctx, grid):
        plan = Parallelism(zero=0, recompute="none", sequence_parallel=grid.tp > 1, micro_batch=1, interleave=1,
                           **grid.parallelism_fields())
        dense, moe = layer_kinds(ctx, plan)
        self.tp_message_bytes = 2.0 * (ctx.seq_len / grid.cp) * ctx.hidden
        experts = ctx.shape.experts
        # A kind of layer the model does not have (no dense MLP when every layer routes) needs no floor.
        self.kinds = (_LayerFloor(ctx, grid, dense, False, self.tp_message_bytes)
                      if experts is None or experts.dense_layers else None,
                      _LayerFloor(ctx, grid, moe, True, self.tp_message_bytes) if moe is not None else None)
        self.tp_exposed_share = _tp_exposed_share(ctx, grid.tp)
        self.parts = {}
        self.busy = {}  # floor()'s busy time by (grid, micro-batch, recompute)
        self.stages = {}  # (dense layers, expert layers, holds the output layer) of each kind of stage, by grid
        self.sends = {}  # sends_at by (micro-batch, whether the stages share a node)
        self.syncs = {}  # least()'s sync terms by (grid, class of ZeRO stage, zero2) (_sync_terms)

    def _parts(self, ctx, grid, b, recompute):
        """What floor() needs at micro-batch b that no grid of the reference's (tp, cp, ep)
        changes: per kind of layer, (compute per sequence, TP seconds per sequence at the bus
        efficiency of a message of b sequences before the exposed share, exchange of one
        micro-batch), and the output layer per sequence (memoised by b and recompute)."""
        key = (b, recompute)
        found = self.parts.get(key)
        if found is None:
            forward, backward = _logits_s(ctx, grid.tp, grid.cp, b)
            tp_efficiency = size_efficiency(self.tp_message_bytes * b) if grid.tp > 1 else 1.0
            per_kind = []
            for kind in self.kinds:
                if kind is None:
                    per_kind.append(None)
                    continue
                gemm = _gemm_s(ctx, grid, b, kind.moe) / b
                compute = kind.compute_s + 3.0 * gemm
                if recompute == "full":
                    compute += kind.replay_s + gemm
                exchange = kind.cp.seconds(b) if kind.cp is not None else 0.0
                if kind.moe:
                    exchange += _expert_exchange_s(ctx, grid, b, recompute)
                per_kind.append((compute, kind.tp_s_at_asymptote / tp_efficiency * self.tp_exposed_share, exchange))
            found = self.parts[key] = (tuple(per_kind), (forward + backward) / b)
        return found

    def least(self, ctx, grid, rows, recompute="none", zero3=None, zero2=False):
        """Seconds no plan of `grid` beats, over its micro-batch rows
        [(b, largest interleave at b)] (ascending in b, search._interleave_rows):
        the least over b of the busy time plus
        the fill-and-drain bubble at the most interleaving, (p - 1) / (v m) of
        it (arXiv:2104.04473 Sec 2.2.2), raised to the steady pipeline sends
        when they are more, plus the fill and drain's sends (sends_at), the
        least optimizer step and the least exposed sync. A row (b, v, mode)
        bounds plans that recompute at least `mode` (floor() never falls with
        more recompute). zero3: the rows
        bound only plans at ZeRO-3 (True; its sync grows with the micro-batches,
        _sync_parts) or only below it (False), else every ZeRO stage (sync_floor).
        With a class of ZeRO stage on the modern stack a row also pays the sync
        its windows cannot hold (_with_window, _with_fsdp), as StepBound does. zero2: the rows
        bound only ZeRO-2's plans, which also pay COMM_CONTENTION of the reduce-scatter they
        repeat for every micro-batch but the last (_zero2_reduce_s), inside the slots, under
        the steady sends' max (sync.held_by_sends)."""
        best = None
        sequences = ctx.batch_sequences // grid.dp
        drain = grid.pp - 1.0
        # The fill and drain's slots of busy time (by interleaving) and of sends (pipeline.least_drain_slots).
        schedule = ctx.pipeline_schedule
        send_slots = drain if schedule == "1f1b" else least_drain_slots(grid.pp, 1, schedule)
        key = (grid, zero3, zero2)
        terms = self.syncs.get(key)
        if terms is None:
            terms = self.syncs[key] = self._sync_terms(ctx, grid, zero3, zero2)
        sync, per_micro_batch, traffic, fsdp, expert, repeat, optimizer, least_optimizer = terms
        # With stages, the stalls inside the slots are the slowest stage's, paid with its own
        # optimizer step (a lighter stage holds its own in its waits, sync.gradient_sync):
        # a row is at least that with the least optimizer step, and at least the step
        # without them with the optimizer step of the stage that holds the most.
        staged = grid.pp > 1 and (fsdp is not None or sync or repeat)
        # The busy time never rises with the micro-batch (floor()), so the largest row's
        # is below every row's: rows come by that bound on their step, and once it is no
        # better than the least step found, no later row can be less.
        busy_floor = self.busy_at(ctx, grid, rows[-1][0], "full" if recompute == "full" else "none")
        order = []
        for row in rows:
            m = sequences // row[0]
            # (p - 1)/(v m) under 1F1B written out: the search's hottest loop.
            bubble = (1.0 + drain / (row[1] * m) if schedule == "1f1b"
                      else 1.0 + least_drain_slots(grid.pp, row[1], schedule) / m)
            order.append((busy_floor * bubble + per_micro_batch * m + repeat * (m - 1), bubble, -row[0], row))
        order.sort()
        first = least_optimizer if staged else optimizer
        for lower, bubble, _, row in order:
            if best is not None and lower + first >= best:
                break
            b, v = row[0], row[1]
            m = sequences // b
            mode = row[2] if len(row) > 2 and recompute == "none" else recompute
            busy = self.busy_at(ctx, grid, b, mode)
            room = (1.0 + (v - 1.0) / v * drain) / m
            if staged:
                step = self._staged_row(ctx, grid, b, m, busy, bubble, room, send_slots, terms)
            else:
                if fsdp is not None:
                    step = _with_fsdp(busy, bubble, m, fsdp, expert, room)
                elif traffic:
                    step = _with_window(busy, bubble, traffic, room)
                else:
                    step = busy * bubble + per_micro_batch * m
                # ZeRO-2's repeated reduce-scatters cost their contention inside the slots, which
                # the slots' waits for their sends hold (sync.held_by_sends).
                step += repeat * (m - 1)
                if drain:
                    sends = self.sends_at(ctx, grid, b)
                    step = (step if step > m * sends else m * sends) + send_slots * sends
                step += optimizer + sync
            if best is None or step < best:
                best = step
        return best

    def _staged_row(self, ctx, grid, b, m, busy, bubble, room, send_slots, terms):
        """least()'s row of a pipelined grid whose sync stalls the slots (ZeRO-3's per-layer
        traffic, ZeRO-2's repeats) or may (sync_floor): the slowest stage pays those stalls with
        its own optimizer step, at least the least of the stages'; the stage whose GPUs hold the
        most, which may hold its stalls in its own waits (sync.gradient_sync), pays its sync at
        the step's end and its optimizer step. The row is at least either."""
        sync, _, traffic, fsdp, expert, repeat, optimizer, least_optimizer = terms
        plain = busy * bubble
        inside = (_with_fsdp(busy, bubble, m, fsdp, expert, room) if fsdp is not None else plain) + repeat * (m - 1)
        outside = _with_window(busy, bubble, traffic, room) if traffic else plain
        sends = self.sends_at(ctx, grid, b)
        inside = (inside if inside > m * sends else m * sends) + send_slots * sends + least_optimizer + sync
        outside = (outside if outside > m * sends else m * sends) + send_slots * sends + optimizer
        return inside if inside > outside else outside

    def _sync_terms(self, ctx, grid, zero3, zero2):
        """What least() adds for the grid's sync and optimizer step, by class of ZeRO stage (see
        there): (sync, per micro-batch, traffic behind the windows, _Fsdp or None, the experts'
        sync, zero2's repeat, optimizer step). The same grid's rows are bounded by class again
        and again (search._grid_floor): the model's figures are looked up once per class."""
        traffic, fsdp, expert = 0.0, None, 0.0
        if zero3 is None:
            sync, per_micro_batch = sync_floor(ctx, grid), 0.0
        else:
            below, fsdp = _sync_parts(ctx, grid)
            if zero3 and fsdp is not None:
                per_micro_batch, sync = cal.COMM_CONTENTION * fsdp.total, 0.0
                expert = _expert_sync_s(ctx, grid)
            else:
                fsdp, per_micro_batch = None, 0.0
                # Below ZeRO-3 _with_window charges the traffic itself.
                traffic, sync = (below, 0.0) if zero3 is False else (0.0, cal.COMM_CONTENTION * below)
        repeat = cal.COMM_CONTENTION * _zero2_reduce_s(ctx, grid) if zero2 else 0.0
        return (sync, per_micro_batch, traffic, fsdp, expert, repeat, self.optimizer_s(ctx, grid),
                _least_optimizer_s(ctx, grid, 1 if grid.shards else 0))

    def busy_at(self, ctx, grid, micro_batch, recompute):
        """floor() without the optimizer step: the busy time alone (memoised by grid, micro-batch
        and recompute; the search's most frequent question)."""
        busy = self.busy.get((grid, micro_batch, recompute))
        if busy is None:
            busy = self.busy[(grid, micro_batch, recompute)] = self._busy(ctx, grid, micro_batch, recompute)
        return busy

    def floor(self, ctx, grid, largest_micro_batch, recompute="none", optimizer=True):
        """Seconds no plan of `grid` with a micro-batch of at most
        `largest_micro_batch` (recomputing fully, with recompute="full") beats."""
        key = (grid, largest_micro_batch, recompute)
        busy = self.busy.get(key)
        if busy is None:
            busy = self.busy[key] = self._busy(ctx, grid, largest_micro_batch, recompute)
        if not optimizer:
            return busy
        return busy + self.optimizer_s(ctx, grid)

    def sends_at(self, ctx, grid, b):
        """One micro-batch's pipeline sends at micro-batch b without interleaving
        (step_time.pipeline_send_seconds; 0 without stages): a plan's steady slots last
        at least its m micro-batches' sends (step_time.pipeline_times: a slot is at least
        a micro-batch's sends), and its fill and drain carry p - 1 micro-batches' sends
        whatever the interleaving. A message's seconds grow with b, its seconds per
        sequence fall (comms.size_efficiency). Besides the reference's tp and cp and b,
        they depend on the grid only through whether its stages share a node
        (step_time.pipeline_link_rate), so grids share them."""
        if grid.pp == 1:
            return 0.0
        key = (b, pipeline_span(grid.tp, grid.cp, grid.dp, grid.pp) <= ctx.gpus_per_node)
        found = self.sends.get(key)
        if found is None:
            found = self.sends[key] = pipeline_send_seconds(ctx, grid.tp, grid.cp, grid.dp, grid.pp, b, 1)
        return found

    def with_sends(self, ctx, grid, step, sizes):
        """A floor of the busy time with its bubble, `step`, raised to the least the
        pipeline sends allow over the micro-batch sizes (sends_at)."""
        if grid.pp == 1:
            return step
        sequences = ctx.batch_sequences // grid.dp
        steady = sequences / sizes[-1] * self.sends_at(ctx, grid, sizes[-1])
        schedule = ctx.pipeline_schedule
        slots = grid.pp - 1.0 if schedule == "1f1b" else least_drain_slots(grid.pp, 1, schedule)
        return (step if step > steady else steady) + slots * self.sends_at(ctx, grid, sizes[0])

    @staticmethod
    def optimizer_s(ctx, grid):
        """The least optimizer step of the grid's plans (ZeRO-1 where it shards), on the stage
        whose GPUs hold the most."""
        return _optimizer_s(ctx, grid, 1 if grid.shards else 0)

    @staticmethod
    def least_optimizer_s(ctx, grid):
        """optimizer_s on the stage whose step is the least (_least_optimizer_s)."""
        return _least_optimizer_s(ctx, grid, 1 if grid.shards else 0)

    def _busy(self, ctx, grid, b, recompute):
        """floor()'s busy time: the most of any stage's at micro-batch b. A b above the
        replica's sequences (search._sketch's whole batch) counts the fraction of a
        micro-batch they are."""
        sequences = ctx.batch_sequences // grid.dp
        m = sequences / b
        (dense, moe), logits = self._parts(ctx, grid, b, recompute)
        overhead = 2.0 * cal.LAYER_PASS_OVERHEAD_S
        if recompute == "full":
            overhead += cal.LAYER_PASS_OVERHEAD_S
        busy = 0.0
        stages = self.stages.get(grid)
        if stages is None:
            stages = self.stages[grid] = tuple((stage.dense, stage.moe, stage.output)
                                               for stage in grid_stages(ctx, grid))
        for n_dense, n_moe, output in stages:
            compute = logits if output else 0.0
            stage_busy = m * (n_dense + n_moe) * overhead
            # Unrolled over the two kinds of layer: a per-stage tuple to loop over costs Pyodide
            # 2-3% of the heaviest searches.
            if n_dense:
                compute += n_dense * dense[0]
                stage_busy += n_dense * (sequences * dense[1] + m * dense[2])
            if n_moe:
                compute += n_moe * moe[0]
                stage_busy += n_moe * (sequences * moe[1] + m * moe[2])
            stage_busy += sequences * compute * _ROUNDING
            if stage_busy > busy:
                busy = stage_busy
        return busy


class StepBound:
    """Lower bound on step time for any plan of one grid.

    Built from one evaluated probe of the grid (micro-batch 1, no recompute,
    no interleaving, ZeRO-1 when the grid has ranks to shard over). The
    model's step time is
      m x max(busy, sends) + (p - 1)/v x (busy + sends) + exposed DP
      + exposed ZeRO-3 + optimizer
    (arXiv:2104.04473 Sec 2.2 for the bubble), with busy the slowest stage's.
    The bound follows the probe's slowest stage S: every plan's slowest stage
    is at least as busy as S, and the parts below are monotone in it.
    Compute per sequence is at least the probe's scaled by the most its GEMM
    efficiency can grow at micro-batch b (efficiency.gemm_efficiency; the
    smallest GEMM of the layer bounds the gain), plus a fixed per-layer
    overhead per micro-batch; TP and pipeline messages
    grow with b and reach a higher fraction of bus bandwidth
    (comms.size_efficiency); overlapped TP exposes at least one ring step of
    t plus the contention of the rest (_tp_exposed_share); recompute adds time to every micro-batch; the context-parallel
    exchange is the model's (_ContextParallel), and so is the expert-parallel
    all-to-all (_expert_exchange_s). Exposed DP time (ZeRO 0-2) is at
    least the collective minus the window of one micro-batch, which is at
    most the busy time per micro-batch (twice that with experts on the
    modern stack: the shared and the expert gradients each hide behind it),
    and on the modern stack the hidden rest costs COMM_CONTENTION
    (sync.modern_sync).
    Exposed ZeRO-3 time follows the modern stack's per-layer prefetch
    (_Fsdp); on the 2021 stack it is at least the gathers that are never
    hidden plus the rest minus DP_OVERLAP_FRACTION of the compute. step()
    combines these with the busy time at its least (see there).
    """

    __slots__ = ("sequences_per_replica", "pp", "schedule_slots", "syncs", "modern", "tp_exposed_share", "overhead_s_per_micro_batch",
                 "compute", "forward_overhead_s", "cp", "ctx", "grid", "moe_layers", "tp_message_bytes", "send_message_bytes", "tp_comm_s_at_asymptote",
                 "sends_s_at_asymptote", "optimizer_s_replicated", "optimizer_s_sharded", "dp_collective_s", "sync_floor",
                 "fsdp", "expert_sync_s", "zero3_unhidden_s", "zero3_rest_s", "steps", "busy",
                 "zero2_repeat_s", "optimizer_s_least", "outside_s")

    def __init__(self, ctx, grid, probe):
        """probe: the Report of the grid at micro-batch 1, no recompute, no
        interleaving, ZeRO-1 when the grid shards (ZeRO-0 otherwise), sequence
        parallelism on when tp > 1."""
        tp, pp, dp, cp = grid.tp, grid.pp, grid.dp, grid.cp
        sequences = ctx.batch_sequences // dp
        kind = probe.bottleneck_stage
        # The probe's slowest stage, its multi-token-prediction layers included.
        stage = next(k for k in grid_stages(ctx, grid) if k.kind == kind)
        layer_overhead = stage.layers * cal.LAYER_PASS_OVERHEAD_S
        self.sequences_per_replica = sequences
        # step() and _busy() by their arguments: the search asks for the same ones again.
        self.steps, self.busy = {}, {}
        self.pp = pp
        # The bidirectional schedules' fill-and-drain slots (pipeline.least_drain_slots; they run v = 1);
        # None under 1F1B, whose (p - 1)/v step() writes out.
        self.schedule_slots = (None if ctx.pipeline_schedule == "1f1b" or pp == 1
                               else least_drain_slots(pp, 1, ctx.pipeline_schedule))
        self.syncs = grid.shards
        self.modern = ctx.modern
        self.tp_exposed_share = _tp_exposed_share(ctx, tp)
        # Fixed per-layer pass overheads of one micro-batch: forward and backward.
        self.forward_overhead_s = layer_overhead
        self.overhead_s_per_micro_batch = 2.0 * layer_overhead
        # Per-sequence time (GEMMs, element-wise, logits, flash recompute) of
        # the probe's stage, and what a full replay of each layer's forward
        # (not the logits) adds instead of flash attention's attention-only replay.
        per_sequence = (probe.forward_s + probe.backward_s + probe.recompute_s) / sequences - 2.0 * layer_overhead
        logits_forward = _logits_s(ctx, tp, cp, 1)[0] if stage.output else 0.0
        replay = (probe.forward_s - probe.recompute_s) / sequences - layer_overhead - logits_forward
        self.compute = _Compute(ctx, grid, per_sequence, replay if replay > 0.0 else 0.0, stage)
        self.ctx, self.grid, self.moe_layers = ctx, grid, stage.moe if grid.ep > 1 else 0
        layers = stage.layers
        self.cp = (_ContextParallel(ctx, grid, probe.cp_comm_total_s / (sequences * layers),
                                    probe.cp_comm_s / (sequences * layers), layers)
                   if cp > 1 and probe.cp_comm_total_s > 0.0 else None)
        # Message sizes of one sequence (s / cp tokens per GPU); a micro-batch of b sends b times as much.
        tokens = ctx.seq_len / cp
        self.tp_message_bytes = 2.0 * tokens * ctx.hidden
        self.send_message_bytes = 2.0 * tokens * ctx.hidden / tp
        # The probe's traffic for the whole replica batch as if at asymptotic bus bandwidth.
        self.tp_comm_s_at_asymptote = (probe.tp_comm_total_s * size_efficiency(self.tp_message_bytes)
                                       if tp > 1 else 0.0)
        self.sends_s_at_asymptote = (probe.pp_p2p_total_s * size_efficiency(self.send_message_bytes)
                                     if pp > 1 else 0.0)
        self.optimizer_s_replicated = _optimizer_s(ctx, grid, 0)
        self.optimizer_s_sharded = _optimizer_s(ctx, grid, 1) if self.syncs else self.optimizer_s_replicated
        # The least of the stages' (sharded) optimizer steps, which the slowest stage's stalls
        # inside its slots come with (_least_optimizer_s).
        self.optimizer_s_least = (_least_optimizer_s(ctx, grid, 1) if self.syncs
                                  else self.optimizer_s_replicated)
        self.dp_collective_s = probe.dp_comm_total_s
        self.sync_floor = sync_floor(ctx, grid)
        self.outside_s = outside_floor(self.optimizer_s_sharded, self.optimizer_s_least, self.sync_floor)
        # What each of ZeRO-2's repeated reduce-scatters costs at least: hidden, its contention
        # (the slowest stage's, at least the least stage's: _zero2_reduce_s).
        self.zero2_repeat_s = cal.COMM_CONTENTION * _zero2_reduce_s(ctx, grid)
        ranks = dp * cp
        self.fsdp, self.expert_sync_s = None, 0.0
        if ranks > 1 and ctx.modern:
            self.fsdp = _Fsdp(ctx, grid)
            self.expert_sync_s = _expert_sync_s(ctx, grid)
            self.zero3_unhidden_s = self.zero3_rest_s = 0.0
        elif ranks > 1:
            z3 = zero3_times(ctx, tp, pp, ranks, grid.ep)
            # The first gather of the forward and of the backward pass is never hidden.
            self.zero3_unhidden_s = 2.0 * z3.layer_gather
            self.zero3_rest_s = 2.0 * z3.gather + z3.reduce - self.zero3_unhidden_s
        else:
            self.zero3_unhidden_s = self.zero3_rest_s = 0.0

    def step(self, micro_batch, interleave, zero, recompute, sequence_parallel=True):
        """Seconds; never above evaluate()'s step_s for the same plan.

        zero=None bounds every ZeRO stage at once (the least of them).
        Sequence parallelism off (the probe had it on when t > 1) only adds
        compute, and exposes the whole TP time.

        How the parts combine: let B be the true busy time of the step on the
        slowest stage (B >= the lower bound `busy`). The step is at least
        g(B) = max(B, sends) + bubble(B) + exposed sync(B), where the sync
        hides behind the compute of one micro-batch, at most B / m. g is
        piecewise linear in B, so its least value over B >= busy is at busy
        or at a break point (where B reaches the sends, or where the window
        swallows the sync): the bound is the least g over those.
        """
        key = (micro_batch, interleave, zero, recompute, sequence_parallel)
        found = self.steps.get(key)
        if found is None:
            found = self.steps[key] = self._step(micro_batch, interleave, zero, recompute, sequence_parallel)
        return found

    def _step(self, micro_batch, interleave, zero, recompute, sequence_parallel):
        b, v = micro_batch, interleave
        m = self.sequences_per_replica // b
        busy = self._busy(b, recompute, sequence_parallel)
        sends = (v * self.sends_s_at_asymptote / size_efficiency(self.send_message_bytes * b)
                 if self.sends_s_at_asymptote else 0.0)
        # Fill and drain: (p - 1)/v slots of one micro-batch's busy time and sends under 1F1B
        # (pipeline.least_drain_slots: the fewest of the bidirectional schedules).
        drain = ((self.pp - 1.0) / v if self.schedule_slots is None else self.schedule_slots) / m
        if not self.syncs:
            best = (busy if busy >= sends else sends) + drain * (busy + sends) + self.optimizer_s_replicated
        else:
            best = None
            if zero is None or zero < 3:
                best = self._least(busy, sends, drain, m, v, False)
                if zero == 0:
                    best += self.optimizer_s_replicated - self.optimizer_s_sharded
            if zero is None or zero == 3:
                z3 = self._least(busy, sends, drain, m, v, True)
                best = z3 if best is None or z3 < best else best
        # Every plan exposes at least the least sync (sync_floor), which the bounds above
        # leave out where they model no sync (a grid without sharded ranks, ZeRO-3 there).
        least = busy * (1.0 + drain) + self.outside_s
        best = best if best > least else least
        if zero == 2:
            # ZeRO-1's sync bounds ZeRO-2's; it also reduce-scatters every micro-batch but the
            # last, and what hides of those costs COMM_CONTENTION (sync.earlier_syncs) inside
            # the slots, where a step whose sends outlast its busy time holds it
            # (sync.held_by_sends): at most sends - busy of it, the most any B >= busy leaves.
            repeat = (m - 1) * self.zero2_repeat_s - (sends - busy if sends > busy else 0.0)
            if repeat > 0.0 and self.pp == 1:
                best += repeat
            elif repeat > 0.0:
                # With stages the repeats stall the slowest stage's slots, which pays them with
                # its own optimizer step; a lighter stage may hold its own in its waits.
                stalled = ((busy if busy >= sends else sends) + drain * (busy + sends) + repeat
                           + self.optimizer_s_least)
                best = best if best > stalled else stalled
        return best

    def _busy(self, b, recompute, sequence_parallel):
        """Lower bound on the busy time of a step at micro-batch b: compute, TP, CP."""
        key = (b, recompute, sequence_parallel)
        found = self.busy.get(key)
        if found is None:
            found = self.busy[key] = self._busy_at(b, recompute, sequence_parallel)
        return found

    def _busy_at(self, b, recompute, sequence_parallel):
        sequences = self.sequences_per_replica
        m = sequences // b
        tp = 0.0
        if self.tp_comm_s_at_asymptote:
            tp = self.tp_comm_s_at_asymptote / size_efficiency(self.tp_message_bytes * b)
            if sequence_parallel:
                tp *= self.tp_exposed_share
        overhead = self.overhead_s_per_micro_batch
        if recompute == "full":
            overhead += self.forward_overhead_s
        busy = sequences * self.compute.per_sequence(b, recompute == "full") + m * overhead + tp
        if self.cp is not None:
            busy += m * self.cp.seconds(b)
        if self.moe_layers:
            busy += m * self.moe_layers * _expert_exchange_s(self.ctx, self.grid, b, recompute)
        return busy

    def floor(self, largest_micro_batch, recompute="none"):
        """Lower bound on the step of every plan of the grid whose micro-batch
        is at most `largest_micro_batch` (and, with recompute="full", that
        recomputes fully): each part of the busy time is least at the largest
        micro-batch (GEMM rates and message sizes grow with b, fixed
        per-micro-batch costs fall), with sequence parallelism on, no bubble,
        plus the optimizer step and the least exposed sync (sync_floor) as
        outside_floor pairs them."""
        return self._busy(largest_micro_batch, recompute, True) + self.outside_s

    def row_floor(self, micro_batch, interleave):
        """Lower bound on step() at this micro-batch for every interleaving up to
        `interleave`, ZeRO stage and recompute: floor()'s busy time plus the
        fill-and-drain bubble at the most interleaving, (p - 1) / (v m) of it
        (the step is at least max(B, sends) + bubble(B) + the optimizer step and
        the least exposed sync as outside_floor pairs them, B >= busy)."""
        m = self.sequences_per_replica // micro_batch
        busy = self._busy(micro_batch, "none", True)
        slots = (self.pp - 1.0) / interleave if self.schedule_slots is None else self.schedule_slots
        return (busy * (1.0 + slots / m) + self.outside_s) * _ROUNDING

    def _g(self, B, sends, drain, m, v, zero3):
        """The step bound at busy time B (see step)."""
        bubble = drain * (B + sends)
        window = B / m
        if zero3:
            # ZeRO-3's exposed traffic stalls compute inside the slots, so a slot's wait for its
            # sends can hold it (sync.held_by_sends): max(B + traffic, sends) is at most the
            # model's max(B + exposed, sends) + the contention and syncs outside the slots.
            # With stages these are the slowest stage's, with its own optimizer step and its
            # experts' sync (a lighter stage holds its stalls in its own waits): the least of
            # the stages' here (_least_optimizer_s, _expert_sync_s), the rest in _least.
            if self.fsdp is not None:
                if self.expert_sync_s:
                    # The experts' sync behind what the last micro-batch's own traffic leaves of it.
                    traffic = self.fsdp.with_experts(B, m, self.expert_sync_s, 1.0 + (v - 1.0) / v * (self.pp - 1.0))
                else:
                    traffic = self.fsdp.seconds(B, m)
            else:
                # 2021 stack: the gathers after the first compete for DP_OVERLAP_FRACTION of the compute.
                rest = self.zero3_rest_s - cal.DP_OVERLAP_FRACTION * window
                traffic = m * (self.zero3_unhidden_s + (rest if rest > 0.0 else 0.0))
            slots = B + traffic
            return (slots if slots >= sends else sends) + bubble + self.optimizer_s_least
        out = (B if B >= sends else sends) + bubble + self.optimizer_s_sharded
        if self.modern:
            # sync.modern_sync: one micro-batch, widened by the interleaved last group; what
            # hides costs COMM_CONTENTION, so exposed + C (total - exposed) = (1 - C) exposed + C total.
            return out + _beyond_window(self.dp_collective_s, window * (1.0 + (v - 1.0) / v * (self.pp - 1.0)))
        # The 2021 stack hides DP_OVERLAP_FRACTION of it plus (v - 1)/v of the drain bubble.
        window = window * cal.DP_OVERLAP_FRACTION + (v - 1.0) / v * bubble
        exposed = self.dp_collective_s - window
        return out + (exposed if exposed > 0.0 else 0.0)

    def _least(self, busy, sends, drain, m, v, zero3):
        """The least g(B) over B >= busy: at busy or at a break point above it."""
        points = [busy, sends]
        if zero3:
            if self.fsdp is not None:
                points.extend(self.fsdp.break_points(m))
                if self.expert_sync_s:
                    points.extend(self.fsdp.expert_break_points(m, self.expert_sync_s,
                                                                1.0 + (v - 1.0) / v * (self.pp - 1.0)))
            else:
                points.append(m * self.zero3_rest_s / cal.DP_OVERLAP_FRACTION)
        elif self.modern:
            points.append(m * self.dp_collective_s / (1.0 + (v - 1.0) / v * (self.pp - 1.0)))
        else:
            k = (v - 1.0) / v * drain * m
            points.append((self.dp_collective_s * m - k * sends) / (cal.DP_OVERLAP_FRACTION + k))
        best = None
        for B in points:
            if B >= busy:
                g = self._g(B, sends, drain, m, v, zero3)
                if best is None or g < best:
                    best = g
        if zero3 and self.pp > 1:
            # The stage whose optimizer step is the most pays it whatever it holds: at least the
            # step without ZeRO-3's stalls (least at B = busy, where it is least).
            plain = (busy if busy >= sends else sends) + drain * (busy + sends) + self.optimizer_s_sharded
            best = best if best > plain else plain
        return best
