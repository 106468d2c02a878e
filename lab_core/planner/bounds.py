"""Cheap predictions the search uses to skip layouts without evaluating them.

Memory comes from the model's own per-GPU functions (lab_core.gpu_memory),
so the planner's memory prediction is evaluate()'s figure by construction.
The step-time bound (StepBound) is extrapolated from one evaluated probe of
each layout, so the planner can rule a candidate out in about a microsecond.
Bounds only ever *skip* work: every plan the planner returns comes from
evaluate(). tests/planner/test_planner_bounds.py checks that the time bound
never exceeds evaluate()'s step time, so a model change that breaks it shows up there.
"""
from .. import calibration as cal
from ..comms import size_efficiency
from ..gpu_memory import stage_activations, stage_params, stages, state_parts
from ..sync import fsdp_unhidden_gathers, zero3_times
from ..step_time import output_layer_times

__all__ = ("StepBound", "activation_bytes", "fits", "plan_memory", "stage_activation_bytes", "stage_state_bytes",
           "state_bytes")


def _even_stages(ctx, pp):
    per_stage = ctx.layers // pp
    experts = ctx.shape.experts
    return stages(pp, per_stage, per_stage, per_stage, None if experts is None else experts.dense_layers)


def stage_state_bytes(ctx, tp, pp, dp, zero, ep=1):
    """Training state of each kind of stage of an even split (gpu_memory.stages order)."""
    out = []
    for stage in _even_stages(ctx, pp):
        shared, expert = stage_params(ctx, tp, stage, pp, ep)
        weights, grads, optimizer = state_parts(ctx, tp, shared, dp, zero, expert, tp * dp // ep, ep)
        out.append(weights + grads + optimizer)
    return tuple(out)


def stage_activation_bytes(ctx, tp, pp, dp, recompute, micro_batch, interleave, sequence_parallel=None):
    """Activations of each kind of stage (gpu_memory.stage_activations) of a plan
    with micro-batch b on dp replicas. Sequence parallelism is on whenever
    tp > 1 unless sequence_parallel says otherwise (the planner's rule, see search.py)."""
    micro_batches = ctx.batch_sequences // dp // micro_batch
    sp = tp > 1 if sequence_parallel is None else sequence_parallel
    return tuple(stage_activations(ctx, tp, 1, pp, stage, recompute, sp, micro_batch, micro_batches, interleave)[1]
                 for stage in _even_stages(ctx, pp))


def fits(states, activations):
    """The most loaded GPU's bytes: the largest state + activations of any stage."""
    return max(a + b for a, b in zip(states, activations))


def plan_memory(ctx, tp, pp, dp, zero, recompute, micro_batch, interleave, sequence_parallel=None):
    """evaluate()'s memory_bytes of an even-split plan, without evaluating it."""
    return fits(stage_state_bytes(ctx, tp, pp, dp, zero),
                stage_activation_bytes(ctx, tp, pp, dp, recompute, micro_batch, interleave, sequence_parallel))


def state_bytes(ctx, tp, pp, dp, zero):
    """The largest training state of any stage (for the page's numbers)."""
    return max(stage_state_bytes(ctx, tp, pp, dp, zero))


def activation_bytes(ctx, tp, pp, dp, recompute, micro_batch, interleave, sequence_parallel=None):
    """The largest activations of any stage (for the page's numbers)."""
    return max(stage_activation_bytes(ctx, tp, pp, dp, recompute, micro_batch, interleave, sequence_parallel))


class StepBound:
    """Lower bound on step time for any plan of one (tp, pp, dp) layout.

    Built from one evaluated probe of the layout (micro-batch 1, no recompute,
    no interleaving, ZeRO-1 when dp > 1). The model's step time is
      m x max(micro, sends) + (p - 1)/v x (micro + sends) + exposed DP
      + exposed ZeRO-3 + optimizer
    (arXiv:2104.04473 Sec 2.2 for the bubble). Compute per sequence is at
    least the probe's scaled by its GEMM efficiency over the asymptotic one
    (efficiency.gemm_efficiency only grows with the micro-batch), plus a fixed
    per-layer overhead per micro-batch; TP and pipeline messages grow with b
    and reach a higher fraction of bus bandwidth (comms.size_efficiency);
    overlapped TP exposes at least one ring step of t; recompute adds time to
    every micro-batch. Exposed DP time (ZeRO 0-2) is at least the collective
    minus the largest window any plan could give it: computed with the
    probe's per-sequence time, an upper bound on any micro-batch's. That
    mixes bounds soundly because a second of compute adds m >= 1 seconds to
    the steps and hides at most one (the 2021 stack hides DP_OVERLAP_FRACTION
    < 1). Exposed ZeRO-3 time is at least the gathers that are never hidden
    (2021 stack: plus the rest minus DP_OVERLAP_FRACTION of the compute).
    """

    __slots__ = ("sequences_per_replica", "pp", "dp", "modern", "tp_overlap_steps", "overhead_s_per_micro_batch",
                 "compute_s_per_sequence", "compute_s_per_sequence_high", "forward_overhead_s",
                 "full_recompute_s_per_sequence", "tp_message_bytes", "send_message_bytes", "tp_comm_s_at_asymptote",
                 "sends_s_at_asymptote", "optimizer_s_replicated", "optimizer_s_sharded", "dp_collective_s",
                 "zero3_unhidden_s", "zero3_rest_s")

    def __init__(self, ctx, tp, pp, dp, probe):
        sequences = ctx.batch_sequences // dp
        layer_overhead = ctx.layers / pp * cal.LAYER_PASS_OVERHEAD_S
        self.sequences_per_replica = sequences
        self.pp = pp
        self.dp = dp
        self.modern = ctx.modern
        self.tp_overlap_steps = tp if ctx.tp_overlap and tp > 1 else 1
        # Fixed per-layer pass overheads of one micro-batch: forward and backward.
        self.forward_overhead_s = layer_overhead
        self.overhead_s_per_micro_batch = 2.0 * layer_overhead
        # Per-sequence time (GEMMs, element-wise, logits, flash recompute) at the
        # probe's micro-batch of one, the slowest any micro-batch runs, and
        # scaled to the asymptotic GEMM efficiency, the fastest.
        speedup_limit = 1.0 / (1.0 + cal.GEMM_TOKEN_SCALE[ctx.device.id] / ctx.seq_len)
        per_sequence = (probe.forward_s + probe.backward_s + probe.recompute_s) / sequences - 2.0 * layer_overhead
        self.compute_s_per_sequence_high = per_sequence
        self.compute_s_per_sequence = per_sequence * speedup_limit
        # Full recompute replays each layer's forward (not the logits) instead
        # of flash attention's attention-only replay.
        logits_forward = output_layer_times(ctx, tp, 1, 1)[0]
        replay = (probe.forward_s - probe.recompute_s) / sequences - layer_overhead - logits_forward
        self.full_recompute_s_per_sequence = (replay if replay > 0.0 else 0.0) * speedup_limit
        # Message sizes of one sequence; a micro-batch of b sends b times as much.
        self.tp_message_bytes = 2.0 * ctx.seq_len * ctx.hidden
        self.send_message_bytes = 2.0 * ctx.seq_len * ctx.hidden / tp
        # The probe's traffic for the whole replica batch as if at asymptotic bus bandwidth.
        self.tp_comm_s_at_asymptote = (probe.tp_comm_total_s * size_efficiency(self.tp_message_bytes)
                                       if tp > 1 else 0.0)
        self.sends_s_at_asymptote = (probe.pp_p2p_total_s * size_efficiency(self.send_message_bytes)
                                     if pp > 1 else 0.0)
        zero = probe.parallelism.zero
        self.optimizer_s_replicated = probe.optimizer_s * (dp if zero >= 1 else 1)
        self.optimizer_s_sharded = self.optimizer_s_replicated / dp
        self.dp_collective_s = probe.dp_comm_total_s
        if dp > 1 and ctx.modern:
            self.zero3_unhidden_s = fsdp_unhidden_gathers(ctx, tp, dp)
            self.zero3_rest_s = 0.0
        elif dp > 1:
            z3 = zero3_times(ctx, tp, pp, dp)
            # The first gather of the forward and of the backward pass is never hidden.
            self.zero3_unhidden_s = 2.0 * z3.layer_gather
            self.zero3_rest_s = 2.0 * z3.gather + z3.reduce - self.zero3_unhidden_s
        else:
            self.zero3_unhidden_s = self.zero3_rest_s = 0.0

    def step(self, micro_batch, interleave, zero, recompute, sequence_parallel=True):
        """Seconds; never above evaluate()'s step_s for the same plan.

        zero=None bounds every ZeRO stage at once (the least of them). The
        probe had sequence parallelism on (when t > 1); without it compute
        only grows, but so does the DP overlap window, so the exposed-DP term
        is dropped from the bound for such plans.
        """
        b, v = micro_batch, interleave
        sequences = self.sequences_per_replica
        m = sequences // b
        tp = 0.0
        if self.tp_comm_s_at_asymptote:
            tp = self.tp_comm_s_at_asymptote / size_efficiency(self.tp_message_bytes * b)
            if sequence_parallel:
                tp /= self.tp_overlap_steps
        sends = (v * self.sends_s_at_asymptote / size_efficiency(self.send_message_bytes * b)
                 if self.sends_s_at_asymptote else 0.0)
        compute = sequences * self.compute_s_per_sequence + m * self.overhead_s_per_micro_batch
        window = b * self.compute_s_per_sequence_high + self.overhead_s_per_micro_batch
        if recompute == "full":
            extra = sequences * self.full_recompute_s_per_sequence + m * self.forward_overhead_s
            compute += extra
            window += extra / m
        busy = compute + tp
        # Sends hide behind compute in the steady phase, not in fill and drain.
        bubble = (self.pp - 1.0) / v * (busy + sends) / m
        step = (busy if busy >= sends else sends) + bubble
        if self.dp == 1:
            return step + self.optimizer_s_replicated
        # ZeRO 0-2: the window of one micro-batch (the 2021 stack hides
        # DP_OVERLAP_FRACTION of it), plus (v - 1)/v of the drain bubble. The
        # step grows with the bubble even after the wider window (slope 1/v > 0),
        # so the lower-bound bubble keeps the sum a lower bound.
        if self.modern:
            # sync.modern_sync: one micro-batch, widened by the interleaved last group.
            window *= 1.0 + (v - 1.0) / v * (self.pp - 1.0)
        else:
            window = window * cal.DP_OVERLAP_FRACTION + (v - 1.0) / v * bubble
        dp_step = step + self.optimizer_s_sharded
        if self.dp_collective_s > window and sequence_parallel:
            dp_step += self.dp_collective_s - window
        if zero is not None and zero < 3:
            return dp_step if zero >= 1 else dp_step - self.optimizer_s_sharded + self.optimizer_s_replicated
        rest = self.zero3_rest_s - cal.DP_OVERLAP_FRACTION * compute / m
        z3_step = step + self.optimizer_s_sharded + m * (self.zero3_unhidden_s + (rest if rest > 0.0 else 0.0))
        if zero is None:
            return z3_step if z3_step < dp_step else dp_step
        return z3_step
