"""Cheap predictions the search uses to skip layouts without evaluating them.

Both functions restate, term by term, what lab_core.evaluate computes (they
call the model's own formula functions), so the planner can rule a candidate
out in about a microsecond. They only ever *skip* work: every plan the planner
returns comes from evaluate(). tests/planner/test_bounds.py checks that the
memory prediction equals evaluate()'s figure and that the time bound never
exceeds it, so a change in the model that breaks either shows up there.
"""
from .. import calibration as cal
from ..activations import extra_bytes, first_stage_bytes, per_layer_bytes, working_bytes
from ..comms import size_efficiency
from ..evaluate import zero3_times
from ..memory import model_state_parts
from ..timing import logits_times

RECOMPUTE_ORDER = ("none", "selective", "full")


def params_per_gpu(c, t, p):
    """Parameters on a first-stage GPU (as lab_core.evaluate: L/p layers / t + embeddings)."""
    return (c.L / p) * c.layer_params / t + c.V * c.h / t + c.s * c.h


def state_bytes(c, t, p, d, zero):
    """Weights + gradients + optimizer state on the most loaded GPU.

    ZeRO sharding: arXiv:1910.02054 Sec 5 (lab_core.memory.model_state_parts);
    ZeRO-3 adds the gathered weights in flight exactly as lab_core.evaluate does.
    """
    params = params_per_gpu(c, t, p)
    w, g, o = model_state_parts(params, c.state_bytes, d, zero)
    if zero >= 3 and d > 1:
        w += min(4.0 * c.layer_params / t, 2.0 * params - w)
    return w + g + o


def activation_bytes(c, t, p, d, recompute, b, v, sp=None):
    """Activations of the first stage (arXiv:2205.05198 Table 2, Eq 5, plus the
    recompute working set of arXiv:1604.06174; as lab_core.evaluate).

    Sequence parallelism: on whenever t > 1 unless sp says otherwise (the
    planner's rule, see search.py).
    """
    m = c.batch // d // b
    sp_on = t > 1 if sp is None else (sp and t > 1)
    layer = per_layer_bytes(c.s, b, c.h, c.a, t, sp_on, recompute, c.flash, c.f, c.r, c.dropout)
    return (first_stage_bytes(layer, c.L, p, m, v) + extra_bytes(c.s, b, c.h, c.V, t, p, m, c.dropout)
            + working_bytes(c.s, b, c.h, c.a, t, sp_on, recompute, c.flash, c.f, c.r, c.dropout))


def memory_bytes(c, t, p, d, zero, recompute, b, v):
    """Predicted Report.memory_bytes of one plan."""
    return state_bytes(c, t, p, d, zero) + activation_bytes(c, t, p, d, recompute, b, v)


class StepBound:
    """Lower bound on step time for any plan of one (tp, pp, dp) layout.

    Built from one evaluated probe of the layout (micro-batch 1, no recompute,
    no interleaving, ZeRO-1 when dp > 1). The model's step time is
      m x max(micro, sends) + (p - 1)/v x (micro + sends) + exposed DP
      + exposed ZeRO-3 + optimizer
    (arXiv:2104.04473 Sec 2.2 for the bubble); forward/backward are linear in
    the micro-batch b plus a fixed per-layer overhead; TP and pipeline messages
    grow with b and reach a higher fraction of bus bandwidth (comms.
    size_efficiency); recompute adds time to every micro-batch. Exposed DP
    time (ZeRO 0-2) is at least the collective minus the largest window any
    recompute mode could open. Exposed ZeRO-3 time per micro-batch is at least
    the two unhidden first-layer gathers plus the rest of its traffic minus
    DP_OVERLAP_FRACTION of the whole micro-batch's compute (evaluate splits
    that window into forward and backward, which can only expose more); since
    a second of compute adds at least m seconds and hides at most
    m x DP_OVERLAP_FRACTION, using the lower-bound compute keeps the sum a
    lower bound.
    """

    __slots__ = ("R", "c0", "c1", "full_extra1", "lp_ovh", "tp1", "p2p1", "s_tp", "s_p2p", "p", "d",
                 "opt_sharded", "opt_full", "dp_allreduce", "z3_fill", "z3_rest")

    def __init__(self, c, t, p, d, probe):
        R = c.batch // d
        lp = c.L / p
        ovh = cal.LAYER_PASS_OVERHEAD_S
        self.R = R
        self.p = p
        self.lp_ovh = lp * ovh
        self.c0 = 2.0 * lp * ovh
        # Per-sequence time linear in b (GEMMs, element-wise, logits, flash recompute).
        self.c1 = (probe.forward_s + probe.backward_s + probe.recompute_s) / R - self.c0
        # Full recompute replays each layer's forward (not the logits) instead
        # of flash attention's attention-only replay.
        logits_fwd = logits_times(c.s, 1, c.h, c.V, t, c.flops_rate, c.hbm_rate)[0]
        self.full_extra1 = (probe.forward_s - probe.recompute_s) / R - self.lp_ovh - logits_fwd
        self.s_tp = 2.0 * c.s * c.h
        self.s_p2p = 2.0 * c.s * c.h / t
        self.tp1 = probe.tp_comm_s * size_efficiency(self.s_tp) if t > 1 else 0.0
        self.p2p1 = probe.pp_p2p_total_s * size_efficiency(self.s_p2p) if p > 1 else 0.0
        zero = probe.parallelism.zero
        self.opt_full = probe.optimizer_s * (d if zero >= 1 else 1)
        self.opt_sharded = self.opt_full / d
        self.dp_allreduce = probe.dp_comm_total_s
        self.d = d
        if d > 1:
            z3 = zero3_times(c, t, p, d)
            self.z3_fill = 2.0 * z3.layer_gather
            self.z3_rest = 2.0 * z3.gather + z3.reduce - self.z3_fill
        else:
            self.z3_fill = self.z3_rest = 0.0

    def step(self, b, v, zero, recompute, sequence_parallel=True):
        """Seconds; never above evaluate()'s step_s for the same plan.

        zero=None bounds every ZeRO stage at once (the least of them). The
        probe had sequence parallelism on (when t > 1); without it compute
        only grows, but so does the DP overlap window, so the exposed-DP term
        is dropped from the bound for such plans.
        """
        R = self.R
        m = R // b
        tp = self.tp1 / size_efficiency(self.s_tp * b) if self.tp1 else 0.0
        sends = v * self.p2p1 / size_efficiency(self.s_p2p * b) if self.p2p1 else 0.0
        compute = R * self.c1 + m * self.c0
        if recompute == "full":
            compute += R * self.full_extra1 + m * self.lp_ovh
        busy = compute + tp
        # Sends hide behind compute in the steady phase, not in fill and drain.
        bubble = (self.p - 1.0) / v * (busy + sends) / m
        step = (busy if busy >= sends else sends) + bubble
        if self.d == 1:
            return step + self.opt_full
        overlap = cal.DP_OVERLAP_FRACTION
        # ZeRO 0-2: the largest overlap window is backward + full recompute of
        # one micro-batch, plus (v - 1)/v of the drain bubble. The step grows
        # with the bubble even after the wider window (slope 1/v > 0), so the
        # lower-bound bubble keeps the sum a lower bound.
        dp_step = step + self.opt_sharded
        window = overlap * (b * self.c1 + self.c0) + (v - 1.0) / v * bubble
        if self.dp_allreduce > window and sequence_parallel:
            dp_step += self.dp_allreduce - window
        if zero is not None and zero < 3:
            return dp_step if zero >= 1 else dp_step - self.opt_sharded + self.opt_full
        rest = self.z3_rest - overlap * compute / m
        z3_step = step + self.opt_sharded + m * (self.z3_fill + (rest if rest > 0.0 else 0.0))
        if zero is None:
            return z3_step if z3_step < dp_step else dp_step
        return z3_step
