"""Branch-and-bound search for the plan with the best goodput throughput.

Space (ARCHITECTURE.md "Plan"): tp (divisors of GPUs per node), pp (divisors of the
layers), dp, ZeRO 0-3, recompute none/selective/full, micro-batch (divisors of
the per-replica batch), interleaving (divisors of the layers per stage), with
sequence parallelism on whenever tp > 1.

What is skipped, and why it is safe (the model's own structure):
- sequence parallelism off with tp > 1: it never uses less memory or time
  (arXiv:2205.05198 Table 2 and Table 4: same ring volume, activations and
  element-wise work split t ways);
- selective recompute with flash attention on: identical to none in the model
  (both drop only the 5as/h term and replay the attention core);
- for one layout, micro-batch, interleave and ZeRO stage, every recompute mode
  above the least one that fits: recompute adds m x its time to the step and
  hides at most DP_OVERLAP_FRACTION (< 1) x its time of communication, since
  lab_core.evaluate has one overlap window for all DP and ZeRO-3 traffic, so
  it never pays off (the same holds for sequence parallelism off);
- ZeRO-2 when ZeRO-1 fits with the same recompute: same time, more sharding;
- a whole layout whose memory floor (ZeRO-3, full recompute, micro-batch 1)
  exceeds the usable memory: nothing of it fits;
- any candidate whose step-time lower bound (bounds.StepBound) makes it slower
  than the tie band of the best plan found so far *and* than the best plan of
  its own shape (kept as an alternative); the check runs per layout, per
  micro-batch (over all interleavings), per interleaving, then per plan, and
  layouts and micro-batches are visited best bound first so the incumbent is
  strong early.
Everything not skipped is evaluated with lab_core.evaluate. Plans are ranked
by goodput throughput (tokens/s x goodput of the failure model); among plans
within TIE_TOLERANCE of the best the simplest wins (simplicity_key).
tests/planner/test_planner_search_exact.py checks optimum, tie-break and per-shape
bests against an exhaustive search.
"""
from ..context import context_for
from ..evaluate import evaluate
from ..parallelism import RECOMPUTE_MODES, Parallelism
from .bounds import StepBound, fits, plan_memory, stage_activation_bytes, stage_state_bytes, state_bytes
from .assumptions import MEMORY_SAFETY_MARGIN, TIE_TOLERANCE
from .space import Space, divisors
from .stage import shape_stage, shape_stage_parts


class Candidate:
    """One evaluated plan with the numbers the planner ranks it by."""

    __slots__ = ("parallelism", "report", "goodput_tokens_per_s", "score", "stage", "fits")

    def __init__(self, parallelism, report, goodput, usable, replica_state):
        self.parallelism = parallelism
        self.report = report
        self.goodput_tokens_per_s = report.tokens_per_s * goodput
        # What plans are ranked by: goodput throughput; when failures outpace
        # progress (goodput 0, the same for every plan) plain throughput.
        self.score = report.tokens_per_s * _weight(goodput)
        self.fits = report.memory_bytes <= usable
        needs_sharding = replica_state + report.activations_bytes > usable
        self.stage = shape_stage(parallelism, needs_sharding)


def _weight(goodput):
    return goodput if goodput > 0.0 else 1.0


def simplicity_key(par):
    """Fewer parallel dimensions, lower ZeRO stage, less recompute, then
    smaller model-parallel degree and fewer interleaved chunks (ARCHITECTURE.md "Plan")."""
    return _simplicity(par.tp, par.pp, par.dp, par.zero, par.recompute, par.interleave)


def _simplicity(t, p, d, zero, recompute, v):
    dims = (t > 1) + (p > 1) + (d > 1)
    return (dims, zero, _RECOMPUTE_RANK[recompute], t * p, p, v)


_RECOMPUTE_RANK = {mode: rank for rank, mode in enumerate(RECOMPUTE_MODES)}


def ranking_key(cand):
    """Deterministic order among near-ties: simplest, then fastest, then smallest numbers."""
    par = cand.parallelism
    return simplicity_key(par) + (-cand.score, par.tp, par.pp, par.micro_batch, par.interleave)


class SearchResult:
    """What recommend() needs from the search."""

    __slots__ = ("workload", "gpus_used", "chosen", "best", "candidates", "stage_best",
                 "closest", "usable_bytes", "evaluated", "layouts", "layouts_feasible", "considered")


class _Search:
    def __init__(self, workload):
        self.w = workload
        self.ctx = context_for(workload)
        self.usable = self.ctx.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
        self.goodput = self.ctx.failures.goodput
        self.tokens = self.ctx.tokens_per_step
        self.goodput_per_step = self.tokens * _weight(self.goodput)
        self.replica_state = 0.0
        self.evaluated = 0
        self.considered = 0
        self.fitting = []
        self.best = 0.0
        self.stage_best = {}
        self.class_best = {}
        self.seen = {}

    def run_eval(self, par):
        key = (par.tp, par.pp, par.dp, par.zero, par.recompute, par.sequence_parallel, par.micro_batch,
               par.interleave)
        cand = self.seen.get(key)
        if cand is None:
            self.evaluated += 1
            cand = Candidate(par, evaluate(self.w, par), self.goodput, self.usable, self.replica_state)
            self.seen[key] = cand
            if cand.fits:
                self.fitting.append(cand)
                g = cand.score
                if g > self.best:
                    self.best = g
                if g > self.stage_best.get(cand.stage, -1.0):
                    self.stage_best[cand.stage] = g
                key = simplicity_key(par) + (cand.stage,)
                if g > self.class_best.get(key, -1.0):
                    self.class_best[key] = g
        return cand

    def worth_any(self, bound_goodput, stages):
        if bound_goodput >= self.best * (1.0 - TIE_TOLERANCE):
            return True
        for stage in stages:
            if bound_goodput > self.stage_best.get(stage, -1.0):
                return True
        return False

    def worth(self, bound_goodput, stage, key):
        """Could a plan with this optimistic score still matter? It must beat the
        best of its own shape (an alternative), or reach the tie band and beat
        the evaluated plans exactly as simple (key: simplicity_key + stage)."""
        if bound_goodput > self.stage_best.get(stage, -1.0):
            return True
        return bound_goodput >= self.best * (1.0 - TIE_TOLERANCE) and bound_goodput > self.class_best.get(key, -1.0)


def _recompute_modes(flash):
    """Least to most recompute; selective equals none with flash attention (see above)."""
    return tuple(mode for mode in RECOMPUTE_MODES if not (flash and mode == "selective"))


def search(workload):
    """Search `workload` (whose gpus is already a count some layout uses)."""
    run = _Search(workload)
    ctx = run.ctx
    space = Space(workload)
    layouts = space.layouts(workload.gpus)
    modes = _recompute_modes(ctx.flash)
    usable = run.usable
    # ZeRO-0 state of a whole replica: a replicate-only plan that would not
    # fit with it shards to fit, i.e. is zero_sharded in shape (stage.py).
    run.replica_state = state_bytes(ctx, 1, 1, 1, 0)
    floors = []
    live = []
    for t, p, d in layouts:
        zmax = 3 if d > 1 else 0
        floor = plan_memory(ctx, t, p, d, zmax, "full", 1, 1)
        floors.append((floor, t, p, d))
        if floor > usable:
            continue
        probe = run.run_eval(Parallelism(tp=t, pp=p, dp=d, zero=1 if d > 1 else 0, recompute="none",
                                       sequence_parallel=t > 1, micro_batch=1, interleave=1))
        layout = _Layout(run, t, p, d, StepBound(ctx, t, p, d, probe.report), modes)
        if layout.rows:
            live.append(layout)
    # Most promising layouts first, so later ones meet a strong incumbent.
    live.sort(key=lambda lay: (lay.lower_bound, lay.t, lay.p))
    for layout in live:
        if run.worth_any(run.goodput_per_step / layout.lower_bound, layout.stages):
            _search_layout(run, layout, modes)
    result = SearchResult()
    result.workload = workload
    result.gpus_used = workload.gpus
    result.usable_bytes = usable
    result.evaluated = run.evaluated
    result.considered = run.considered
    result.layouts = len(layouts)
    result.layouts_feasible = len(live)
    result.candidates = run.fitting
    fastest = sorted(run.fitting, key=lambda k: (-k.score,) + ranking_key(k))
    result.best = fastest[0] if fastest else None
    result.stage_best = {}
    for cand in fastest:
        result.stage_best.setdefault(cand.stage, cand)
    if run.fitting:
        band = run.best * (1.0 - TIE_TOLERANCE)
        result.chosen = min((k for k in run.fitting if k.score >= band), key=ranking_key)
        result.closest = None
    else:
        result.chosen = None
        result.closest = _closest(run, floors)
    return result


class _Layout:
    """One (tp, pp, dp) layout with its micro-batch rows and optimistic bounds."""

    __slots__ = ("t", "p", "d", "bound", "zeros", "states", "rows", "lower_bound", "stages")

    def __init__(self, run, t, p, d, bound, modes):
        ctx = run.ctx
        self.t, self.p, self.d, self.bound = t, p, d, bound
        self.zeros = (0, 1, 2, 3) if d > 1 else (0,)
        self.states = [stage_state_bytes(ctx, t, p, d, z) for z in self.zeros]
        self.stages = ("single_gpu",) if t * p * d == 1 else (
            ("data_parallel", "zero_sharded") if t == p == 1 else ("tensor_pipeline", "full_3d"))
        R = ctx.batch_sequences // d
        per_stage = ctx.layers // p
        rows = []
        for b in divisors(R):
            # Memory grows with b: stop once even ZeRO-max + full recompute overflows.
            if fits(self.states[-1], stage_activation_bytes(ctx, t, p, d, "full", b, 1)) > run.usable:
                break
            m = R // b
            vs = (1,)
            if p > 1 and m % p == 0:
                vs = tuple(divisors(per_stage))
            # zero=None: the bound of the fastest ZeRO stage.
            v = _best_v(bound, b, vs, None, "none", True)
            rows.append((bound.step(b, v, None, "none", True), b, vs, True))
        rows.sort()
        self.rows = rows
        self.lower_bound = rows[0][0] if rows else None


def _best_v(bound, b, vs, z, recompute, sp):
    """Interleaving that minimises the bound: convex in v (bubble (p-1)/v against
    v-fold pipeline sends, arXiv:2104.04473 Sec 2.2.2), so scan until it rises."""
    best_v, best = vs[0], bound.step(b, vs[0], z, recompute, sp)
    for v in vs[1:]:
        step = bound.step(b, v, z, recompute, sp)
        if step >= best:
            break
        best_v, best = v, step
    return best_v


def _search_layout(run, lay, modes):
    ctx = run.ctx
    t, p, d, bound = lay.t, lay.p, lay.d, lay.bound
    usable = run.usable
    goodput_per_step = run.goodput_per_step
    sp = t > 1
    replica = t == 1 and p == 1
    for row_bound, b, vs, sp_bound in lay.rows:
        if not run.worth_any(goodput_per_step / row_bound, lay.stages):
            continue
        for v in vs:
            # The bound of the fastest ZeRO stage without recompute is below every plan of this (b, v).
            if v > 1 and not run.worth_any(goodput_per_step / bound.step(b, v, None, "none", sp_bound), lay.stages):
                continue
            acts = [stage_activation_bytes(ctx, t, p, d, r, b, v) for r in modes]
            if fits(lay.states[-1], acts[-1]) > usable:
                continue
            previous_r = None
            for zi, z in enumerate(lay.zeros):
                ri = 0
                while ri < len(modes) and fits(lay.states[zi], acts[ri]) > usable:
                    ri += 1
                if ri == len(modes):
                    continue
                r = modes[ri]
                if z == 2 and previous_r == r:
                    continue  # same time as ZeRO-1 with the same recompute, more sharding
                previous_r = r
                variants = ((ri, sp),)
                for rj, sp_on in variants:
                    run.considered += 1
                    needs_sharding = replica and run.replica_state + max(acts[rj]) > usable
                    stage = shape_stage_parts(t, p, d, z, modes[rj], needs_sharding)
                    key = _simplicity(t, p, d, z, modes[rj], v) + (stage,)
                    if run.worth(goodput_per_step / bound.step(b, v, z, modes[rj], sp_on or t == 1), stage, key):
                        run.run_eval(Parallelism(tp=t, pp=p, dp=d, zero=z, recompute=modes[rj],
                                               sequence_parallel=sp_on, micro_batch=b, interleave=v))


def _closest(run, floors):
    """No layout fits: the one with the least memory, evaluated as it would run."""
    if not floors:
        return None
    floor, t, p, d = min(floors)
    return run.run_eval(Parallelism(tp=t, pp=p, dp=d, zero=3 if d > 1 else 0, recompute="full",
                                  sequence_parallel=t > 1, micro_batch=1, interleave=1))
