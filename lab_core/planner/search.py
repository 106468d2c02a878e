"""Branch-and-bound search for the plan with the best goodput throughput.

Space (ARCHITECTURE.md "Plan"): grids (space.py: tp, cp, pp with its split,
dp, ep), ZeRO 0-3, recompute none/selective/full, micro-batch (divisors of
the per-replica batch), interleaving (divisors of the layers of a (middle)
stage), with sequence parallelism on whenever tp > 1. Pins (pins.py) fix any
of these; the search then runs over the plans that match every pin.

What is skipped, and why it is safe (the model's own structure):
- sequence parallelism off with tp > 1: it never uses less memory or time
  (arXiv:2205.05198 Table 2 and Table 4: same ring volume, activations and
  element-wise work split t ways); the one exception in the model, per-op
  selective checkpointing at t = 2 (it saves the two reduce-scatter outputs
  only with sequence parallelism, activations.per_op_selective_bytes), is a
  layout torchtitan never runs: it applies sequence parallelism with every
  tensor-parallel plan;
- selective recompute with flash attention on: identical to none in the model
  (both drop only the 5as/h term and replay the attention core), except on a
  stack whose selective recompute is per-op checkpointing (stack.py MEMORY)
  or with recompute modules beyond the attention core (recompute_modules.py),
  which keep less than none;
- for one grid, micro-batch, interleave and ZeRO stage, every recompute mode
  above the least one that fits: recompute adds m x its time to the step and
  hides at most its time of communication once (lab_core.sync), so it never
  pays off (the same holds for sequence parallelism off). In a pipeline whose
  sends outlast a slot's compute the replay fills the wait, where the syncs
  that stall each micro-batch run too (sync.held_by_sends, which closed
  the 1.2% the properties once found there); the last micro-batch's window
  (sync.Room) still counts compute, not the wait, so a replay could widen it
  by what the drain leaves (test_planner_search_exact.py compares the skip
  with an exhaustive search that tries every recompute mode);
- ZeRO-2 when ZeRO-1 fits with the same recompute: never faster (its gradient
  reduce-scatter repeats for every micro-batch, sync.earlier_syncs)
  and less simple;
- a whole grid whose memory floor (the most ZeRO sharding, full recompute,
  micro-batch 1) exceeds the usable memory: nothing of it fits;
- any candidate whose step-time lower bound (bounds.StepBound) makes it slower
  than the tie band of the best plan found so far *and* than the best plan of
  its own shape (kept as an alternative); the check runs per grid, per
  micro-batch (over all interleavings), per interleaving, then per plan, and
  grids and micro-batches are visited best bound first so the incumbent is
  strong early. A grid or micro-batch waits in line with a looser bound below
  its own (_by_floor, _Layout.rows_in_order) and gets the tighter one only when
  it comes first, so the order is the tighter bounds' and one the looser bound
  already rules out is never bounded further. A grid, micro-batch or interleaving that cannot produce a
  full_3d plan (shapes.possible_classes: no plan of it needs full recompute)
  need not beat the best full_3d plan. Two passes: the first finds the tie band
  and every shape's best but full_3d's; the second, full_3d's best alone, visits
  the grids by their full-recompute bounds (tighter, as every full_3d plan
  recomputes fully) and stops at the first that cannot beat it;
- in the tie band, a candidate whose bound does not beat a strictly simpler
  plan already ranked (staircase.Staircase): that plan would be chosen first.
A pinned field is never skipped: the rules above apply to the fields left free.
Everything not skipped is evaluated with lab_core.evaluate. Plans are ranked
by goodput throughput (tokens/s x goodput of the failure model); among plans
within TIE_TOLERANCE of the best the simplest wins (simplicity_key).
tests/planner/test_planner_search_exact.py checks optimum, tie-break and per-shape
bests against an exhaustive search; test_planner_pruning.py that recommend()
gives the same plan with every bound-based skip off (the bench's cases).
"""
import heapq

from ..context import context_for
from ..evaluate import evaluate
from ..parallelism import RECOMPUTE_MODES, Parallelism, schedule_allows, zero_stages
from ..pipeline import least_drain_slots
from .assumptions import MEMORY_SAFETY_MARGIN, TIE_TOLERANCE
from .bounds import (SharedFloor, StepBound, fits, shared_floor_applies, floor_memory, plan_memory,
                     outside_floor, stage_activation_bytes, stage_state_bytes, sync_floor)
from .shapes import leanest_classes, needs_full, possible_classes, shape_classes
from .memory_table import table_for
from .space import Grid, divisors, space_for
from .staircase import Staircase
from .stage import shape_stage, shape_stage_parts
from .steps import finish
from .warm_start import warm_plans, warm_tiers


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
    smaller model-parallel degree, fewer stages, less expert parallelism and
    fewer interleaved chunks (ARCHITECTURE.md "Plan")."""
    return _simplicity(par.tp, par.cp, par.pp, par.dp, par.ep, par.zero, par.recompute, par.interleave)


def _simplicity(t, c, p, d, e, zero, recompute, v):
    dims = (t > 1) + (c > 1) + (p > 1) + (d > 1) + (e > 1)
    return (dims, zero, _RECOMPUTE_RANK[recompute], t * c * p, p, e, v)


_RECOMPUTE_RANK = {mode: rank for rank, mode in enumerate(RECOMPUTE_MODES)}


def ranking_key(cand):
    """Deterministic order among near-ties: simplest, then fastest, then smallest numbers."""
    par = cand.parallelism
    return simplicity_key(par) + (-cand.score, par.tp, par.cp, par.pp, par.micro_batch, par.interleave,
                                  par.first_stage_layers)


def plan_key(par):
    """The fields that tell two searched plans apart."""
    return (par.tp, par.cp, par.pp, par.dp, par.ep, par.first_stage_layers, par.last_stage_layers, par.zero,
            par.recompute, par.sequence_parallel, par.micro_batch, par.interleave)


def make_parallelism(grid, zero, recompute, sequence_parallel, micro_batch, interleave):
    return Parallelism(zero=zero, recompute=recompute, sequence_parallel=sequence_parallel,
                       micro_batch=micro_batch, interleave=interleave, **grid.parallelism_fields())


# One whole replica on one GPU (for the replica-state test of stage.py).
SINGLE_GPU = Grid(1, 1, 1, 1, 1, 0, 0)


class SearchResult:
    """What recommend() needs from the search, and no more: results stay in
    reuse.SEARCHES, and every plan kept there is one more object the cycle
    collector walks on each full pass (lab_view/heap.py has the measured pauses)."""

    __slots__ = ("workload", "gpus_used", "chosen", "best", "stage_best",
                 "closest", "usable_bytes", "evaluated", "layouts",
                 "considered", "complete")


class _OutOfBudget(Exception):
    """The search's evaluation budget ran out (search(budget=...))."""


class _Search:
    def __init__(self, workload, pins, budget=None):
        self.w = workload
        self.ctx = context_for(workload)
        self.pins = pins
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
        self.simpler = Staircase()
        self.seen = {}
        self.bounds = {}
        self.row_modes = {}
        self.budget = budget
        self.floors = []
        self.layouts = 0  # grids of the search (kept for a search the budget stops)
        self.classes = {}  # grid: its shapes as its leanest plan tells them (_leanest_classes)
        self.full_possible = {}  # (grid, micro-batch): whether a plan of it may be full_3d (_may_be_full_3d)
        self.possible = {}  # (grid, largest micro-batch): its possible_classes (_possible_classes)
        self.least_recompute = {}  # grid: the recompute every plan of it needs (_least_recompute)
        self.tightest = {}  # grid: (floor, grid, largest, shared, kind of floor) as the first pass left it (_by_floor)
        # False: the first pass (the tie band and every shape's best but full_3d's);
        # True: the second (full_3d's best only; _run).
        self.hunting_full = False

    def run_eval(self, par, candidate=True):
        """evaluate() once per plan; a candidate (a plan that matches the pins) that fits is ranked."""
        key = plan_key(par)
        cand = self.seen.get(key)
        if cand is None:
            if self.budget is not None and self.evaluated >= self.budget and self.fitting:
                raise _OutOfBudget
            self.evaluated += 1
            cand = Candidate(par, evaluate(self.w, par), self.goodput, self.usable, self.replica_state)
            self.seen[key] = cand
            if candidate and cand.fits:
                self._rank(cand)
        return cand

    def probe(self, grid):
        """The grid's probe (micro-batch 1, no recompute, no interleaving, ZeRO-1
        when it shards), evaluated once; a plan like any other when it matches the pins."""
        par = make_parallelism(grid, 1 if grid.shards else 0, "none", grid.tp > 1, 1, 1)
        return self.run_eval(par, candidate=self.pins is None or self.pins.match(par))

    def bound(self, grid):
        """The grid's StepBound (from its probe), built once."""
        found = self.bounds.get(grid)
        if found is None:
            found = self.bounds[grid] = StepBound(self.ctx, grid, self.probe(grid).report)
        return found

    def _rank(self, cand):
        self.fitting.append(cand)
        g = cand.score
        if g > self.best:
            self.best = g
        if g > self.stage_best.get(cand.stage, -1.0):
            self.stage_best[cand.stage] = g
        simplicity = simplicity_key(cand.parallelism)
        key = simplicity + (cand.stage,)
        if g > self.class_best.get(key, -1.0):
            self.class_best[key] = g
        self.simpler.add(simplicity, g)

    def worth_any(self, bound_goodput, stages, full_goodput=None, simplest=None):
        """Could any plan of these shapes with this optimistic score still matter
        (the tie band, or the best of a shape)? full_goodput: a tighter optimistic
        score for full_3d, whose plans all recompute fully. simplest: a
        simplicity_key no plan of them is simpler than; in the tie band they
        must still outscore every ranked plan strictly simpler (Staircase).
        The first pass asks for every shape's best but full_3d's, the second
        for full_3d's alone (hunting_full)."""
        return self.in_tie_band(bound_goodput, simplest) or self.beats_a_shape_best(bound_goodput, stages, full_goodput)

    def beats_a_shape_best(self, bound_goodput, stages, full_goodput=None):
        """worth_any's second half: does this optimistic score beat the best plan so far of
        one of these shapes, among those the pass hunts?"""
        for stage in stages:
            if (stage == "full_3d") != self.hunting_full:
                continue
            score = full_goodput if stage == "full_3d" and full_goodput is not None else bound_goodput
            if score > self.stage_best.get(stage, -1.0):
                return True
        return False

    def in_tie_band(self, bound_goodput, simplest=None):
        """In the first pass, could a plan with this optimistic score (none simpler than
        `simplest`) be chosen: reach the tie band and outscore every strictly simpler one?"""
        return not self.hunting_full and bound_goodput >= self.best * (1.0 - TIE_TOLERANCE) and (
            simplest is None or bound_goodput > self.simpler.best_below(simplest))

    def worth(self, bound_goodput, stage, key):
        """Could a plan with this optimistic score still matter? It must beat the
        best of its own shape (an alternative), or reach the tie band and beat
        the evaluated plans exactly as simple (key: simplicity_key + stage);
        in the pass that hunts its shape's best (worth_any)."""
        if (stage == "full_3d") == self.hunting_full and bound_goodput > self.stage_best.get(stage, -1.0):
            return True
        return (not self.hunting_full and bound_goodput >= self.best * (1.0 - TIE_TOLERANCE)
                and bound_goodput > self.class_best.get(key, -1.0)
                and bound_goodput > self.simpler.best_below(key[:-1]))


def recompute_modes(flash, selective_differs=False):
    """Least to most recompute; selective equals none with flash attention unless
    it keeps less (per-op checkpointing, or recompute modules beyond the attention
    core: WorkloadContext.selective_differs; see above)."""
    return tuple(mode for mode in RECOMPUTE_MODES if not (flash and mode == "selective" and not selective_differs))


class Choices:
    """The values searched for the fields a grid leaves open, after the pins."""

    __slots__ = ("modes", "recompute_pinned", "zero", "sequence_parallel", "micro_batch", "interleave", "_stages",
                 "_divisors", "schedule")

    def __init__(self, ctx, pins):
        get = pins.get if pins is not None else {}.get
        pinned_mode = get("recompute")
        self.recompute_pinned = pinned_mode is not None
        self.modes = (pinned_mode,) if self.recompute_pinned else recompute_modes(ctx.flash, ctx.selective_differs)
        self.zero = get("zero")
        self.sequence_parallel = get("sequence_parallel")
        self.micro_batch = get("micro_batch")
        self.interleave = get("interleave")
        self._stages = (zero_stages(ctx.stack, 1, True), zero_stages(ctx.stack, 2, True))
        self.schedule = ctx.pipeline_schedule
        self._divisors = {}  # the search asks for the same few counts' divisors again and again

    def _divisors_of(self, n):
        found = self._divisors.get(n)
        if found is None:
            found = self._divisors[n] = tuple(divisors(n))
        return found

    def zeros(self, grid):
        # zero_stages' answers, looked up: the search asks for every row of every grid.
        zeros = self._stages[grid.pp > 1] if grid.shards else (0,)
        if self.zero is None:
            return zeros
        return (self.zero,) if self.zero in zeros else ()

    def sp(self, grid):
        if self.sequence_parallel is None:
            return grid.tp > 1
        return self.sequence_parallel

    def micro_batches(self, replica_batch):
        if self.micro_batch is None:
            return self._divisors_of(replica_batch)
        return [self.micro_batch] if replica_batch % self.micro_batch == 0 else []

    def interleaves(self, grid, layers, micro_batches):
        """The interleavings a row of the grid with this many micro-batches can run (none when the
        pipeline schedule cannot run them: parallelism.schedule_allows, which allows only 1)."""
        if self.schedule != "1f1b":
            vs = (1,) if schedule_allows(self.schedule, grid.pp, micro_batches) else ()
        elif grid.pp > 1 and micro_batches % grid.pp == 0:
            vs = self._divisors_of(grid.interleave_layers(layers))
        else:
            vs = (1,)
        if self.interleave is None:
            return vs
        return (self.interleave,) if self.interleave in vs else ()

    def floor(self, grid):
        """(zero, recompute, micro_batch, interleave, sequence_parallel) of the least
        memory a plan of the grid can use within the pins."""
        zeros = self.zeros(grid)
        return (zeros[-1] if zeros else 0, self.modes[-1], self.micro_batch or 1, self.interleave or 1,
                self.sp(grid))

    def floor_memory(self, ctx, grid):
        """bounds.floor_memory within the pins."""
        return plan_memory(ctx, grid, *self.floor(grid))


def search(workload, pins=None, budget=None, hint=None):
    """Search `workload` (whose gpus is already a count some grid uses) over the
    plans that match `pins` (a pins.Pins, or None for the whole space).

    budget: stop after this many evaluated plans once one fits (the result's
    `complete` is then False and its chosen plan the best found so far).
    hint: with a budget, the plan on screen (warm_start.py): its layout carried
    to this workload is tried first, and the search stops there if it fits."""
    return finish(search_steps(workload, pins, budget, hint))


def search_steps(workload, pins=None, budget=None, hint=None, none_fit=False):
    """search() as steps (steps.py): yields between grids, between the tightenings of
    their bounds and between a grid's micro-batch x interleave rows; returns the SearchResult.
    none_fit: the caller found no grid's floor plan fits (recommend._gpus_to_use), so every
    grid's memory is tested at once (they were just computed) and none waits with a sketch."""
    run = _Search(workload, pins, budget)
    complete = True
    try:
        yield from _run(run, pins, hint, none_fit)
    except _OutOfBudget:
        complete = False
    result = SearchResult()
    result.complete = complete
    result.workload = workload
    result.gpus_used = workload.gpus
    result.usable_bytes = run.usable
    result.evaluated = run.evaluated
    result.considered = run.considered
    result.layouts = run.layouts
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
        result.closest = _closest(run, run.floors)
    return result


def _warm_start(run, grids, choices, hint):
    """Evaluate the plan on screen carried to this workload's nearest grids
    (warm_start.py); when one fits, the quick search answers with it, else it
    runs as it would without the plan (its budget counts from there)."""
    ctx = run.ctx
    for tier in warm_tiers(grids, hint, run.w.gpus):
        for grid in tier:
            for zero, mode, sp, b, v in warm_plans(grid, hint, choices, ctx.batch_sequences, ctx.layers):
                par = make_parallelism(grid, zero, mode, sp, b, v)
                if run.run_eval(par, candidate=run.pins is None or run.pins.match(par)).fits:
                    break
        if run.fitting:
            raise _OutOfBudget
    # None fits: the quick search follows with its whole budget, as without the plan on screen.
    run.budget += run.evaluated


def _run(run, pins, hint=None, none_fit=False):
    """The search itself, in steps (search_steps); fills `run`."""
    workload = run.w
    ctx = run.ctx
    space = space_for(workload)
    grids = space.layouts(workload.gpus) if pins is None else pins.grids(space, workload.gpus)
    run.layouts = len(grids)
    choices = Choices(ctx, pins)
    # ZeRO-0 state of a whole replica: a replicate-only plan that would not
    # fit with it shards to fit, i.e. is zero_sharded in shape (stage.py).
    run.replica_state = max(stage_state_bytes(ctx, SINGLE_GPU, 0))
    if run.budget is not None and hint:
        _warm_start(run, grids, choices, hint)
    live = yield from _live_grids(run, grids, choices, defer_memory=not none_fit)
    # Two passes: the tie band and the best of every shape but full_3d; then full_3d's best,
    # whose plans all recompute fully, with the grids in the order of their full-recompute
    # floors (tighter than the first pass's, which hold for any recompute). Every plan the
    # second pass finds is below the tie band (the first pass leaves none there unseen),
    # so the chosen plan and the best are the first pass's.
    yield from _expand(run, _by_floor(run, ctx, live, choices), choices)
    run.hunting_full = True
    yield from _expand(run, _by_floor(run, ctx, _full_floors(run, live, choices), choices, "full"), choices)


def _full_floors(run, live, choices):
    """The live grids of shapes that include full_3d, each with the tightest floor the first
    pass gave it (below full recompute's: _by_floor tightens it when its turn comes); not
    those the first pass found no plan of fits (_fits_at_all), which it left out. Each
    starts from the kind of floor the first pass left it at (_carried_level)."""
    out = []
    for item in live:
        left = run.tightest.get(item[1])
        if left is not None and "full_3d" in shape_classes(item[1]):
            out.append(left[:4] + (_carried_level(run, left[1], choices, left[3], left[4]),))
    return out


def _carried_level(run, grid, choices, shared, level):
    """The level the second pass starts a grid at, from the one the first pass left it at.
    A floor at the grid's largest size or over its rows was at full recompute already when
    every plan of the grid needs it (_least_recompute): the second pass's own is the same
    number, so the grid starts past it. A floor at the largest size at less recompute is
    tighter than full recompute's sketch: the grid starts past the sketch (_SKETCH: its next
    floor is at its largest size). Else from the start (_ANY_RECOMPUTE)."""
    if shared is None or level not in (_AT_LARGEST, _ROWS):
        return _ANY_RECOMPUTE
    if _least_recompute(run, grid, choices) == "full":
        return level
    return _SKETCH if level == _AT_LARGEST else _ANY_RECOMPUTE


def _expand(run, items, choices):
    """The grids _by_floor yields, each ruled out or expanded into its plans (_search_layout), in steps."""
    per_step = run.goodput_per_step
    for item in items:
        yield
        if item is None:
            continue  # _by_floor tightened a grid's bound: a step of its own
        floor_s, grid, largest, shared_rows = item
        simplest = _simplest(grid, choices, choices.interleave or 1)
        classes = _possible_classes(run, grid, choices, largest)
        if shared_rows is not None:
            # floor_s is already the bound by class of ZeRO stage (_grid_floor); the shapes the grid
            # can have, and full recompute's own bound for full_3d, may rule it out before it is probed.
            reference, rows = shared_rows
            # In the second pass floor_s is already full recompute's (_by_floor).
            full = (lambda: per_step / floor_s) if run.hunting_full else \
                (lambda: per_step / _grid_floor(run, grid, choices, reference, rows, "full"))
            if not _worth_any_then_full(run, per_step / floor_s, classes, full, simplest):
                continue
        elif not run.worth_any(per_step / floor_s, classes, per_step / run.bound(grid).floor(largest, "full"),
                               simplest):
            continue
        bound = run.bound(grid)
        full_s = bound.floor(largest, "full")
        if not run.worth_any(per_step / bound.floor(largest), classes, per_step / full_s, simplest):
            continue
        layout = _Layout(run, grid, bound, choices, classes, largest)
        # The least row floor first (below the rows' bounds): a grid it rules out has none of them bounded.
        if not layout.rows or not run.worth_any(per_step / layout.rows[0][0], layout.stages, per_step / full_s,
                                                simplest):
            continue
        if run.worth_any(per_step / layout.lower_bound(), layout.stages, per_step / full_s, simplest):
            yield from _search_layout(run, layout, choices)


def _live_grids(run, grids, choices, defer_memory=True):
    """[(floor, grid, largest micro-batch, (SharedFloor, rows) or None, kind of floor)] of
    the grids some plan of which may fit, in steps (one per grid); their floor plans (the
    least memory: choices.floor) go to run.floors for _closest. A floor is below every plan
    of its grid; _by_floor orders and tightens them. A grid that waits with its sketch has
    its memory floor tested when it comes first with its floor at its largest size
    (_fits_at_all), so a grid those floors rule out never has it computed; unless
    defer_memory is False (no grid fits: the memory test rules every grid out at once)."""
    ctx, floors = run.ctx, run.floors
    live = []
    shared = {}
    shared_floor = shared_floor_applies(ctx)

    def reference(grid):
        # One floor per (tp, cp, ep), from the model's layer times, bounds every grid of it (bounds.SharedFloor).
        found = shared.get((grid.tp, grid.cp, grid.ep))
        if found is None:
            found = shared[(grid.tp, grid.cp, grid.ep)] = SharedFloor(ctx, grid)
        return found

    for grid in grids:
        yield
        floor_plan = choices.floor(grid)
        if not choices.zeros(grid) or (floor_plan[4] and grid.tp == 1):
            continue
        replica = ctx.batch_sequences // grid.dp
        if replica % floor_plan[2] or floor_plan[3] not in choices.interleaves(grid, ctx.layers,
                                                                                replica // floor_plan[2]):
            # A pinned micro-batch this grid's replicas cannot split into, or a pinned interleaving (or a
            # schedule) its floor plan's micro-batches (the most there are) cannot run: nor can any plan of it.
            continue
        floors.append((grid, floor_plan))
        if shared_floor and choices.interleave is None and defer_memory:
            sizes = choices.micro_batches(ctx.batch_sequences // grid.dp)
            if sizes:
                # The grid waits with its sketch floor; whether its floor plan fits (then its micro-batch,
                # the least size, does, and b = 1 has v = 1: a row), its floor at its largest size, the
                # largest that fits and the bound over its rows come when its turn comes (_by_floor).
                ref = reference(grid)
                live.append((_sketch_busy(ctx, grid, choices, ref, sizes), grid, None, (ref, None), _BUSY))
            continue
        if not _fits_at_all(run, grid, choices):
            continue
        largest = _largest_micro_batch(run, grid, choices)
        if largest is None:
            continue
        if shared_floor:
            ref = reference(grid)
            rows = _interleave_rows(ctx, grid, choices, largest)
            if rows:
                live.append((_grid_floor(run, grid, choices, ref, rows), grid, largest, (ref, rows), _FINAL))
        else:
            live.append((run.bound(grid).floor(largest), grid, largest, None, _FINAL))
    return live


def _worth_any_then_full(run, bound_goodput, stages, full_goodput, simplest):
    """run.worth_any(bound_goodput, stages, full_goodput(), simplest), asking
    full_goodput() (the full_3d plans' score) only when the other shapes and the
    tie band do not decide."""
    rest = tuple(stage for stage in stages if stage != "full_3d")
    if run.worth_any(bound_goodput, rest, None, simplest):
        return True
    return len(rest) < len(stages) and run.worth_any(bound_goodput, ("full_3d",), full_goodput(), simplest)


def _by_floor(run, ctx, live, choices, recompute="none"):
    """The live grids (floor, grid, largest, shared, kind of floor) in increasing order
    of their floor (then grid), so later ones meet a strong incumbent; a grid whose floor
    cannot matter is never probed nor expanded into its rows; None between
    tightenings (a step for search_steps' caller). With a shared floor
    (bounds.SharedFloor) a grid comes with its sketch's busy part (_sketch_busy); then with
    its sketch floor (_sketch: every rate at the
    whole batch's size, times the least bubble, plus the least sync); then with its floor
    at its largest micro-batch size (largest None), which no row's bound is below (_at_largest:
    SharedFloor.floor is least at the largest micro-batch); then with the bound over its
    rows up to the largest micro-batch that fits, at the least recompute every plan of it
    needs (_least_recompute) and any ZeRO stage (SharedFloor.least); then with the bound
    over those rows by class of ZeRO stage,
    each row at the least recompute that fits (_grid_floor). Each tighter bound is
    computed when that grid comes first, and the grid goes back in its place. So the
    order is that of the tightest bounds, and a grid that a looser floor already rules
    out (the incumbent only gets stronger) never gets the tighter ones.

    recompute "full": the bounds of plans that recompute fully (the second pass, _run),
    each grid starting from the floor the first pass left it (run.tightest, at the level
    _carried_level says); there one threshold holds for every grid, so the first grid ruled
    out ends the pass."""
    heap = list(live)
    heapq.heapify(heap)
    per_step = run.goodput_per_step
    while heap:
        floor_s, grid, largest, shared, level = heapq.heappop(heap)
        worth = _grid_worth(run, grid, choices, per_step / floor_s)
        if level == _FINAL or not worth:
            run.tightest[grid] = (floor_s, grid, largest, shared, level)
        if not worth:
            if run.hunting_full:
                return  # one threshold (full_3d's best) for every grid, and the rest have higher floors
            continue
        if level == _FINAL:
            yield floor_s, grid, largest, shared
            continue
        if recompute == "full" and not _may_be_full_3d(run, grid, choices, largest, level):
            continue
        yield None
        reference, rows = shared if shared is not None else (None, None)
        if level == _ANY_RECOMPUTE:
            # The first pass's floor, below full recompute's: now full recompute's own, as _live_grids' kinds.
            if shared is None:
                floor_s, level = run.bound(grid).floor(largest, "full"), _FINAL
            elif rows is None:
                # Full recompute's sketch first, its busy part alone as in the first pass: no memory
                # (nor sync) is computed for a grid it rules out.
                sizes = choices.micro_batches(ctx.batch_sequences // grid.dp)
                floor_s, level = _sketch_busy(ctx, grid, choices, reference, sizes, "full"), _BUSY
            else:
                # Over its rows at full recompute and any ZeRO stage, then by class of ZeRO stage.
                floor_s, level = reference.least(ctx, grid, rows, "full"), _ROWS
        elif level == _BUSY:
            # The sketch's busy part was below: its optimizer step and least sync now (_sketch).
            floor_s, level = floor_s + _outside_compute(ctx, grid, reference), _SKETCH
        elif level == _SKETCH and (recompute == "full" or _least_recompute(run, grid, choices) == "full"):
            if recompute == "full" and not _fits_at_all(run, grid, choices):
                continue  # (the first pass tests a grid's memory floor at its next level)
            sizes = choices.micro_batches(ctx.batch_sequences // grid.dp)
            floor_s, level = _at_largest(run, grid, choices, reference, sizes, recompute), _AT_LARGEST
        elif level in (_SKETCH, _AT_LARGEST):
            # From its floor at its largest micro-batch size to its bound over the rows up to the
            # largest micro-batch that fits, at the least recompute every plan of the grid needs and any
            # ZeRO stage; then by class of ZeRO stage. A grid whose floor plan does not fit drops out
            # here (its floor at its largest size is below its plans all the same). In the first pass
            # a grid whose plans need not all recompute fully comes here from its sketch: its floor at
            # its largest size, at no recompute, seldom rules out what its sketch did not.
            if not _fits_at_all(run, grid, choices):
                continue  # (in the second pass a grid may start here: _carried_level)
            largest = _largest_micro_batch(run, grid, choices)
            rows = _interleave_rows(ctx, grid, choices, largest)
            floor_s, level = reference.least(ctx, grid, rows, _least_recompute(run, grid, choices, recompute)), _ROWS
        else:
            floor_s, level = _grid_floor(run, grid, choices, reference, rows, recompute), _FINAL
        heapq.heappush(heap, (floor_s, grid, largest, (reference, rows) if reference is not None else None, level))


# _by_floor's kinds of floor, loosest first: the first pass's (second pass only); the sketch's busy part
# (_BUSY: _sketch_busy); the sketch; at the largest micro-batch size; over the rows, at the recompute the
# grid needs and any ZeRO stage; by class of ZeRO stage (_grid_floor), or StepBound's. (The numbers only
# name the kinds: the heap never compares them, a grid being in it once.)
_ANY_RECOMPUTE, _SKETCH, _AT_LARGEST, _ROWS, _FINAL, _BUSY = 0, 1, 2, 3, 4, 5


def _grid_worth(run, grid, choices, bound_goodput):
    """run.worth_any for a grid _by_floor pops: any shape of it (shape_classes) may still
    matter. In the first pass, a grid worth it for tensor_pipeline's best alone is not when
    its leanest plan recomputes fully: it has no such plan (shapes.leanest_classes)."""
    if not run.fitting and not run.hunting_full and bound_goodput >= 0.0:
        # Nothing ranked yet (in_tie_band's threshold is 0 and no plan is simpler): every grid is in the band.
        return True
    # The tie band's threshold first: most grids popped late are below it, and need no simplicity key.
    if (not run.hunting_full and bound_goodput >= run.best * (1.0 - TIE_TOLERANCE)
            and run.in_tie_band(bound_goodput, _simplest(grid, choices, choices.interleave or 1))):
        return True
    classes = shape_classes(grid)
    if not run.beats_a_shape_best(bound_goodput, classes):
        return False
    return run.hunting_full or "tensor_pipeline" not in classes or _leanest_classes(run, grid, choices) == classes


def _may_be_full_3d(run, grid, choices, largest, level):
    """The second pass's memory test of a grid it pops: False when no plan of the grid needs
    full recompute, so it has no full_3d plan (possible_classes; at the largest size when the
    largest that fits is not known yet: if the mode before full fits there, it fits at every
    smaller one). Without its largest micro-batch a grid is tested once its sketch's busy part
    has not ruled it out (cheaper, and it rules most grids out), before its sync and its floor
    at its largest size are computed. Asked once per grid and size (run.full_possible)."""
    if largest is None and level not in (_BUSY, _AT_LARGEST, _ROWS):
        return True
    key = (grid, largest if largest is not None else choices.micro_batches(run.ctx.batch_sequences // grid.dp)[-1])
    found = run.full_possible.get(key)
    if found is None:
        found = run.full_possible[key] = "full_3d" in _possible_classes(run, grid, choices, key[1])
    return found


def _possible_classes(run, grid, choices, largest):
    """shapes.possible_classes of the grid up to micro-batch `largest`, once per search (run.possible):
    both passes and _may_be_full_3d ask it of the same grids."""
    key = (grid, largest)
    found = run.possible.get(key)
    if found is None:
        found = run.possible[key] = possible_classes(run, grid, choices, largest)
    return found


def _leanest_classes(run, grid, choices):
    """shapes.leanest_classes of the grid, once per grid (run.classes)."""
    found = run.classes.get(grid)
    if found is None:
        found = run.classes[grid] = leanest_classes(run, grid, choices)
    return found


def _fits_at_all(run, grid, choices):
    """Whether the grid's floor plan (choices.floor: the most sharded ZeRO stage, the most
    recompute, the least micro-batch and interleaving) fits: if not, no plan of it does."""
    return choices.floor_memory(run.ctx, grid) <= run.usable


def _least_recompute(run, grid, choices, recompute="none"):
    """The recompute a SharedFloor bound of the grid may assume: "full" in the second pass or
    when the least recompute that fits at the smallest micro-batch (the most sharded ZeRO
    stage, the least interleaving: the least memory) is full, so every plan of the grid
    recomputes fully (_row_modes: the least mode never falls as the micro-batch grows)."""
    if recompute == "full" or choices.modes[0] == "full":
        return "full"
    if choices.modes[-1] != "full":
        return recompute
    # Asked at several of a grid's floors in both passes: once per grid (recompute is "none" here).
    found = run.least_recompute.get(grid)
    if found is None:
        sizes = choices.micro_batches(run.ctx.batch_sequences // grid.dp)
        found = run.least_recompute[grid] = ("full" if sizes and _row_mode(run, grid, choices, sizes[0]) == "full"
                                             else recompute)
    return found


def _at_largest(run, grid, choices, reference, sizes, recompute="none"):
    """A grid's floor before its largest micro-batch that fits is searched for: its busy
    time at its largest size (below every size's, SharedFloor.floor) times the least
    bubble (_least_bubble), plus the optimizer step and the least sync (bounds.sync_floor,
    as in _sketch); at full recompute when every plan of the grid needs it
    (_least_recompute). The bubble sets a deep pipeline over a few sequences per replica
    apart, and memory forces a large model to recompute."""
    ctx = run.ctx
    recompute = _least_recompute(run, grid, choices, recompute)
    busy = reference.busy_at(ctx, grid, sizes[-1], recompute)
    return (reference.with_sends(ctx, grid, busy * _least_bubble(ctx, grid, choices, sizes), sizes)
            + _outside_compute(ctx, grid, reference))


def _least_bubble(ctx, grid, choices, sizes):
    """The least fill-and-drain factor of any micro-batch size of the grid,
    1 + (p - 1) / (v m) at the most interleaving v of m micro-batches
    (SharedFloor.least's factor; pipeline.least_drain_slots / m for the
    bidirectional schedules). It is that of the smallest size: its m is the
    most and every other size's m divides it, so if p divides any m it divides
    that one, which then allows every interleaving any size does (the divisors
    of a stage's layers; the bidirectional schedules allow the most m most)."""
    if grid.pp == 1:
        return 1.0
    m = ctx.batch_sequences // grid.dp // sizes[0]
    vs = choices.interleaves(grid, ctx.layers, m)
    if not vs:
        return 1.0
    if choices.schedule == "1f1b":
        return 1.0 + (grid.pp - 1.0) / (vs[-1] * m)
    return 1.0 + least_drain_slots(grid.pp, vs[-1], choices.schedule) / m


def _sketch(ctx, grid, choices, reference, sizes, recompute="none"):
    """A grid's first floor, before anything of its own is computed: the busy time
    with every GEMM, TP message, logit and exchange at the rate of the whole global
    batch in one micro-batch (no grid's micro-batch is larger, and none runs them
    slower per sequence; SharedFloor.floor, once per (tp, cp, ep)), times the least
    bubble (_least_bubble), plus the least optimizer step and the least sync
    (bounds.sync_floor; both shared by the grids that differ only in cp). Its
    per-micro-batch costs (pass overheads, the context-parallel and expert exchanges)
    count R / B micro-batches, R of the replica's B sequences: a fraction of one,
    below the whole replica batch's cost (an exchange's seconds per sequence never
    rise with the micro-batch). Most grids of a large GPU count wait here until the
    incumbent rules them out; the sync sets apart the shallow pipelines whose replicas
    each hold a large part of a large model. recompute "full": the same for plans
    that recompute fully (the second pass)."""
    return _sketch_busy(ctx, grid, choices, reference, sizes, recompute) + _outside_compute(ctx, grid, reference)


def _outside_compute(ctx, grid, reference):
    """What every plan of the grid adds to its busy time: its optimizer step and the least
    sync (bounds.outside_floor, bounds.sync_floor), the part of _sketch and _at_largest
    besides compute."""
    return outside_floor(reference.optimizer_s(ctx, grid), reference.least_optimizer_s(ctx, grid),
                         sync_floor(ctx, grid))


def _sketch_busy(ctx, grid, choices, reference, sizes, recompute="none"):
    """_sketch without its optimizer step and sync: a grid's first floor in each pass
    (_live_grids, _by_floor), so a grid it rules out never has its sync computed (one of the
    model's collectives per grid: most grids of a large GPU count end here)."""
    busy = reference.busy_at(ctx, grid, ctx.batch_sequences, recompute)
    return reference.with_sends(ctx, grid, busy * _least_bubble(ctx, grid, choices, sizes), sizes)


def _interleave_rows(ctx, grid, choices, largest):
    """[(b, the most interleaving at b)] for the micro-batches up to `largest`."""
    rows = []
    replica = ctx.batch_sequences // grid.dp
    for b in choices.micro_batches(replica):
        if b > largest:
            break
        vs = choices.interleaves(grid, ctx.layers, replica // b)
        if vs:
            rows.append((b, vs[-1]))
    return rows


def _largest_micro_batch(run, grid, choices):
    """The largest micro-batch of the grid whose leanest plan fits (memory grows
    with the micro-batch, so a binary search), or None when none fits."""
    sizes = choices.micro_batches(run.ctx.batch_sequences // grid.dp)
    zeros = choices.zeros(grid)
    if not sizes or not zeros:
        return None
    state = stage_state_bytes(run.ctx, grid, zeros[-1])
    lo = _fitting_end(run, grid, state, choices.modes[-1], sizes, 0, choices.interleave or 1, choices.sp(grid))
    return sizes[lo - 1] if lo else None


def _fitting_end(run, grid, state, mode, sizes, start, v, sp):
    """The end of the run of `sizes` from `start` on (ascending micro-batches) that fit
    with this training state and recompute mode: memory grows with the micro-batch,
    so a binary search."""
    usable = run.usable
    # bounds.stage_activation_bytes, its table fetched once for the search's probes.
    activations, sp = table_for(run.ctx).activations, sp and grid.tp > 1
    lo, hi = start, len(sizes)
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(state, activations(grid, mode, sizes[mid], v, sp)) <= usable:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _simplest(grid, choices, v, mode=None):
    """A simplicity_key no plan of the grid at interleave v or more (and with at
    least `mode` of recompute) is simpler than: its least ZeRO stage and least recompute."""
    return _simplicity(grid.tp, grid.cp, grid.pp, grid.dp, grid.ep, choices.zeros(grid)[0],
                       mode or choices.modes[0], v)


class _Layout:
    """One grid with its micro-batch rows and optimistic bounds.

    A row's bound (the step bound at its best interleaving, _best_v) is
    computed when the row is next in line (rows_in_order): until then the row
    waits with its floor (StepBound.row_floor: the least busy time and bubble,
    no exposed sync), which is below it. So rows come in the
    order of their bounds, and a row whose floor already cannot matter is never
    bounded."""

    __slots__ = ("grid", "bound", "zeros", "states", "rows", "stages", "sp", "zero_bound", "run",
                 "choices", "below_zero3")

    # A row: (bound, b, interleaves, least recompute mode any of its plans can use, bounded).

    def __init__(self, run, grid, bound, choices, stages, largest):
        ctx = run.ctx
        self.grid, self.bound = grid, bound
        self.zeros = choices.zeros(grid)
        self.states = [stage_state_bytes(ctx, grid, z) for z in self.zeros]
        self.stages = stages
        self.sp = choices.sp(grid) or grid.tp == 1
        self.zero_bound = choices.zero  # None: the bound of the fastest ZeRO stage
        self.run, self.choices = run, choices
        # With ZeRO-3 and a stage below it free, a row is bounded by class (_bounded): the most
        # sharded stage below ZeRO-3, at its own least recompute, and ZeRO-3 at the row's.
        self.below_zero3 = (self.zeros[-2] if choices.zero is None and len(self.zeros) > 1 and self.zeros[-1] == 3
                            else None)
        R = ctx.batch_sequences // grid.dp
        rows = []
        # Memory grows with b: none above `largest` fits even at ZeRO-max and the most recompute.
        sizes = [b for b in choices.micro_batches(R) if b <= largest]
        for b, mode in zip(sizes, _row_modes(run, grid, choices, sizes)):
            vs = choices.interleaves(grid, ctx.layers, R // b)
            if not vs:
                continue
            rows.append((bound.row_floor(b, vs[-1]), b, vs, mode, False))
        heapq.heapify(rows)
        self.rows = rows

    def lower_bound(self):
        """The least bound of any row (rows bounded until the least is one with its own)."""
        return self._first()[0]

    def _bounded(self, row):
        """The row with its own bound (at the interleaving that minimises it). The row's
        recompute is the least that fits at the most sharded ZeRO stage; a stage below
        ZeRO-3 holds more state and may need more (_row_mode at it, v = 1: the least
        memory), so the bound is the lesser of the two classes' (StepBound.step by stage)."""
        _, b, vs, mode, _ = row
        bound, sp = self.bound, self.sp
        if self.below_zero3 is None:
            zero = self.zero_bound
            return bound.step(b, _best_v(bound, b, vs, zero, mode, sp), zero, mode, sp), b, vs, mode, True
        best = bound.step(b, _best_v(bound, b, vs, 3, mode, sp), 3, mode, sp)
        # Below ZeRO-3, ZeRO-2 (its reduce-scatter repeated per micro-batch, at its least
        # recompute) and ZeRO-1 (at its own, no less): ZeRO-0 is never faster than ZeRO-1 and
        # needs at least its recompute.
        for zero in ((2, 1) if self.below_zero3 == 2 else (self.below_zero3,)):
            least = _row_mode(self.run, self.grid, self.choices, b, zero)
            if least is not None:
                step = bound.step(b, _best_v(bound, b, vs, zero, least, sp), zero, least, sp)
                best = step if step < best else best
        return best, b, vs, mode, True

    def _first(self):
        """The row with the least bound, bounding rows until it is one that has its own."""
        rows = self.rows
        while not rows[0][4]:
            heapq.heapreplace(rows, self._bounded(rows[0]))
        return rows[0]

    def rows_in_order(self, still_worth):
        """(bound, b, interleaves, mode) of the rows, least bound first; a row whose
        floor fails still_worth(floor, b, mode) is dropped unbounded (its bound, no lower,
        would fail it too: the incumbent only gets stronger)."""
        rows = self.rows
        while rows:
            row = heapq.heappop(rows)
            if row[4]:
                yield row[:4]
            elif still_worth(row[0], row[1], row[3]):
                heapq.heappush(rows, self._bounded(row))


def _row_mode(run, grid, choices, b, zero=None):
    """_least_mode at ZeRO stage `zero` (default: the most sharded) and the least
    interleaving (the pinned one, or 1) of micro-batch b on the grid, once per search."""
    zero = choices.zeros(grid)[-1] if zero is None else zero
    key = (grid, b, zero)
    found = run.row_modes.get(key, False)
    if found is False:
        state = stage_state_bytes(run.ctx, grid, zero)
        found = run.row_modes[key] = _least_mode(run, grid, choices, state, b, choices.interleave or 1)
    return found


def _row_modes(run, grid, choices, sizes, zero=None):
    """_row_mode of each micro-batch of `sizes` (ascending; None where no mode
    fits). Memory grows with the micro-batch at every recompute mode (as
    _largest_micro_batch uses), so the least mode that fits never falls as b
    grows: each mode's last fitting size is found by a binary search."""
    zero = choices.zeros(grid)[-1] if zero is None else zero
    known = [run.row_modes.get((grid, b, zero), False) for b in sizes]
    if len(sizes) < 4 or False not in known:
        return [mode if mode is not False else _row_mode(run, grid, choices, b, zero)
                for b, mode in zip(sizes, known)]
    state = stage_state_bytes(run.ctx, grid, zero)
    v, sp = choices.interleave or 1, choices.sp(grid)
    out = [None] * len(sizes)
    start = 0  # sizes before `start` have a lesser mode already
    for mode in choices.modes:
        end = _fitting_end(run, grid, state, mode, sizes, start, v, sp)
        out[start:end] = [mode] * (end - start)
        start = end
    for b, mode in zip(sizes, out):
        run.row_modes[(grid, b, zero)] = mode
    return out


def _zero_classes(choices, grid):
    """(zero3, ZeRO stage) of the classes of plans a grid floor bounds apart: ZeRO-1
    (one sync per step, but more state, so more recompute), ZeRO-2 (less state, its
    reduce-scatter repeated for every micro-batch), ZeRO-3 (its sync grows with the
    micro-batches; its state is the least), those the grid allows. ZeRO-0 is in ZeRO-1's
    class where the grid allows both (never faster, never less recompute)."""
    zeros = choices.zeros(grid)
    below = [z for z in zeros if z in (1, 2)] or [z for z in zeros if z < 3]
    return tuple((False, z) for z in below) + (((True, 3),) if zeros[-1] == 3 else ())


def _grid_floor(run, grid, choices, reference, rows, recompute="none"):
    """reference.least (bounds.SharedFloor) over the rows [(b, v)] of each class of
    ZeRO stage (_zero_classes), each row at the least recompute that fits that
    class's state (a row that fits none of it is left out), the least of them:
    below every plan of the grid. None when no row fits any class. A class is
    skipped when its rows, all at the least recompute (no search for the row
    modes), do not beat the floor of the classes before it."""
    ctx = run.ctx
    sizes = [row[0] for row in rows]
    best = None
    for zero3, zero in _zero_classes(choices, grid):
        if best is not None and reference.least(ctx, grid, rows, recompute, zero3, zero == 2) >= best:
            continue
        fitting = [(b, v, mode) for (b, v), mode in zip(rows, _row_modes(run, grid, choices, sizes, zero))
                   if mode is not None]
        if fitting:
            floor_s = reference.least(ctx, grid, fitting, recompute, zero3, zero == 2)
            best = floor_s if best is None or floor_s < best else best
    return best


def _least_mode(run, grid, choices, state, b, v):
    """The least recompute mode that fits with this training state (the most
    sharded ZeRO stage's) at micro-batch b and interleave v, or None.
    Why it bounds every plan of the row from below at v = 1: the interleaved
    schedule keeps 1 + (p - 1) / (p v) times the activations of v = 1 in flight
    (activations.interleave_multiplier), never fewer; and StepBound.step never
    falls with more recompute (the busy time only grows, and the step bound is
    its least over busy times at least that large)."""
    for mode in choices.modes:
        if fits(state, stage_activation_bytes(run.ctx, grid, mode, b, v, choices.sp(grid))) <= run.usable:
            return mode
    return None


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


def _search_layout(run, lay, choices):
    ctx = run.ctx
    grid, bound = lay.grid, lay.bound
    t, c, p, d, e = grid.tp, grid.cp, grid.pp, grid.dp, grid.ep
    usable = run.usable
    goodput_per_step = run.goodput_per_step
    sp = choices.sp(grid)
    sp_bound = sp or t == 1
    modes = choices.modes
    replica = t * c * p * e == 1
    may_be_full = "full_3d" in lay.stages
    hunting_full = run.hunting_full
    v_most = choices.interleave or (2 if p > 1 else 1)
    def row_stages(b):
        # As possible_classes, at this micro-batch.
        return lay.stages if not may_be_full or needs_full(run, grid, choices, lay.states[0], b, v_most) \
            else ("tensor_pipeline",)

    def row_worth(row_bound, b, row_mode, stages):
        # Only full_3d plans need the full-recompute bound, and only the second pass asks for it (worth_any).
        full = bound.floor(b, "full") if hunting_full and "full_3d" in stages else row_bound
        return run.worth_any(goodput_per_step / row_bound, stages,
                             goodput_per_step / (full if full > row_bound else row_bound),
                             _simplest(grid, choices, choices.interleave or 1, row_mode))

    # A row's floor is below its bound: a row it rules out is not bounded (_Layout.rows_in_order).
    for row_bound, b, vs, row_mode in lay.rows_in_order(lambda floor_s, b, mode: row_worth(floor_s, b, mode,
                                                                                           row_stages(b))):
        stages = row_stages(b)
        full_bound_b = hunting_full and "full_3d" in stages
        if not row_worth(row_bound, b, row_mode, stages):
            continue
        if len(vs) > 1:
            # The interleavings by their bound (full recompute's when only full_3d's best is
            # sought), least first: the first plan found is most often the row's best, and the
            # rest fall to it unless they are in its tie band (where a less interleaved plan is simpler).
            mode_v = "full" if hunting_full else row_mode
            vs = sorted(vs, key=lambda v: (bound.step(b, v, choices.zero, mode_v, sp_bound), v))
        for v in vs:
            # The bound of the fastest ZeRO stage with the row's least recompute is below every plan of this (b, v).
            fastest = goodput_per_step / bound.step(b, v, choices.zero, row_mode, sp_bound)
            full_v = goodput_per_step / bound.step(b, v, choices.zero, "full", sp_bound) if full_bound_b else fastest
            if not run.worth_any(fastest, stages, full_v, _simplest(grid, choices, v, row_mode)):
                continue
            acts = [stage_activation_bytes(ctx, grid, r, b, v, sp) for r in modes]
            if fits(lay.states[-1], acts[-1]) > usable:
                continue
            # The least recompute that fits at this v (at the most sharded ZeRO stage), and
            # full_3d only when the mode before full overflows at the lowest one (needs_full).
            least = 0
            while fits(lay.states[-1], acts[least]) > usable:
                least += 1
            stages_v = stages
            if may_be_full and len(stages) > 1 and len(modes) > 1 and fits(lay.states[0], acts[-2]) <= usable:
                stages_v = ("tensor_pipeline",)
            if (least > 0 or stages_v is not stages) and not run.worth_any(
                    goodput_per_step / bound.step(b, v, choices.zero, modes[least], sp_bound), stages_v, full_v,
                    _simplest(grid, choices, v, modes[least])):
                continue
            yield  # each (b, v) that reaches the ZeRO stages is a step: a reader's move waits for one
            previous_r = None
            for zi, z in enumerate(lay.zeros):
                ri = 0
                while ri < len(modes) and fits(lay.states[zi], acts[ri]) > usable:
                    ri += 1
                if ri == len(modes):
                    continue
                if z == 2 and previous_r == ri and choices.zero is None:
                    continue  # never faster than ZeRO-1 with the same recompute, and less simple
                previous_r = ri
                run.considered += 1
                mode = modes[ri]
                needs_sharding = replica and run.replica_state + max(acts[ri]) > usable
                stage = shape_stage_parts(t, p, d, z, mode, needs_sharding, c, e)
                key = _simplicity(t, c, p, d, e, z, mode, v) + (stage,)
                if run.worth(goodput_per_step / bound.step(b, v, z, mode, sp_bound), stage, key):
                    run.run_eval(make_parallelism(grid, z, mode, sp, b, v))


def _closest(run, floors):
    """No plan fits: the grid with the least memory (floors: (grid, floor plan)), evaluated
    as it would run at its floor."""
    if not floors:
        return None
    _, grid, plan = min((plan_memory(run.ctx, grid, *plan), grid, plan) for grid, plan in floors)
    zero, mode, b, v, sp = plan
    return run.run_eval(make_parallelism(grid, zero, mode, sp, b, v))
