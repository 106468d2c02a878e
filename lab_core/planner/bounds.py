"""Cheap predictions the search uses to skip layouts without evaluating them.

Both functions restate, term by term, what lab_core.evaluate computes (they
call the model's own formula functions), so the planner can rule a candidate
out in about a microsecond. They only ever *skip* work: every plan the planner
returns comes from evaluate(). tests/planner/test_bounds.py checks that the
memory prediction equals evaluate()'s figure and that the time bound never
exceeds it, so a change in the model that breaks either shows up there.
"""
from .. import calibration as cal
from ..activations import extra_bytes, first_stage_bytes, per_layer_bytes
from ..comms import size_efficiency
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
    """Activations of the first stage (arXiv:2205.05198 Table 2, Eq 5; as lab_core.evaluate).

    Sequence parallelism: on whenever t > 1 unless sp says otherwise (the
    planner's rule, see search.py).
    """
    m = c.batch // d // b
    layer = per_layer_bytes(c.s, b, c.h, c.a, t, t > 1 if sp is None else (sp and t > 1), recompute,
                            c.flash, c.f)
    return first_stage_bytes(layer, c.L, p, m, v) + extra_bytes(c.s, b, c.h, c.V, t, p, m)


def memory_bytes(c, t, p, d, zero, recompute, b, v):
    """Predicted Report.memory_bytes of one plan."""
    return state_bytes(c, t, p, d, zero) + activation_bytes(c, t, p, d, recompute, b, v)


class StepBound:
    """Lower bound on step time for any plan of one (tp, pp, dp) layout.

    Built from one evaluated probe of the layout (micro-batch 1, no recompute,
    no interleaving, ZeRO-1 when dp > 1). The model's step time is
      m x micro + (p - 1)/v x micro + exposed DP + exposed ZeRO-3 + optimizer
    (arXiv:2104.04473 Sec 2.2 for the bubble); forward/backward are linear in
    the micro-batch b plus a fixed per-layer overhead; TP and pipeline messages
    grow with b and reach a higher fraction of bus bandwidth (comms.
    size_efficiency); recompute adds time to every micro-batch. Exposed DP
    time is at least the collective minus the largest window any recompute
    mode could open; exposed ZeRO-3 time is at least 0.
    """

    __slots__ = ("R", "c0", "c1", "full_extra1", "lp_ovh", "tp1", "p2p1", "s_tp", "s_p2p", "p",
                 "opt_sharded", "opt_full", "dp_allreduce")

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
        self.p2p1 = probe.pp_p2p_s * size_efficiency(self.s_p2p) if p > 1 else 0.0
        zero = probe.parallelism.zero
        self.opt_full = probe.optimizer_s * (d if zero >= 1 else 1)
        self.opt_sharded = self.opt_full / d
        self.dp_allreduce = probe.dp_comm_total_s

    def step(self, b, v, zero, recompute, sequence_parallel=True):
        """Seconds; never above evaluate()'s step_s for the same plan.

        The probe had sequence parallelism on (when t > 1); without it compute
        only grows, but so does the overlap window, so the exposed-DP term is
        dropped from the bound for such plans.
        """
        R = self.R
        m = R // b
        comm = 0.0
        if self.tp1:
            comm += self.tp1 / size_efficiency(self.s_tp * b)
        if self.p2p1:
            comm += v * self.p2p1 / size_efficiency(self.s_p2p * b)
        work = R * self.c1 + m * self.c0 + comm
        if recompute == "full":
            work += R * self.full_extra1 + m * self.lp_ovh
        micro = work / m
        step = work + (self.p - 1.0) / v * micro
        # The largest overlap window: backward + full recompute of one micro-batch.
        window = cal.DP_OVERLAP_FRACTION * (b * self.c1 + self.c0)
        dp = self.dp_allreduce * (0.5 if zero >= 3 else 1.0)
        if dp > window and sequence_parallel:
            step += dp - window
        return step + (self.opt_sharded if zero >= 1 else self.opt_full)
