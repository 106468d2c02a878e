"""recommend(workload) -> Plan: what system to build, and why.

Steps: pick the GPU count a layout can use (space.py); search the plan space
(search.py); derive the stage the workload forces and the shape of the
chosen plan (stage.py), meters (meters.py), decisions
(decisions.py), diagram (diagram.py), the checkpoint interval against
Young/Daly (lab_core.failures), the alternatives of other stages and, when
nothing fits, the overflow and the smallest GPU count that would fit
(nofit.py). Never raises for a valid Workload.
"""
import dataclasses

from ..errors import LabInputError
from ..context import context_for
from ..workload import Workload
from .assumptions import MAX_GPUS_SEARCHED, MEMORY_SAFETY_MARGIN, TIE_TOLERANCE
from .bounds import floor_memory, most_loaded, plan_memory, stage_activation_bytes, stage_state_bytes
from .decisions import decisions, layout_dims
from .diagram import diagram
from .memory_table import release_retired
from .meters import meters
from .nofit import largest_fitting, smallest_fitting_steps
from .plan import Plan
from . import reuse
from .pins import parse_pins, pinned_recompute_layers
from .search import Choices, search_steps
from .steps import finish
from .trim import chunk_layers, fewest_fitting, recompute_layers
from .space import Grid, space_for
from .stage import STAGES, workload_stage
from .warm_start import warm_tiers


class _Context:
    """Everything the decision and diagram builders read."""

    __slots__ = ("workload", "wctx", "parallelism", "report", "fits", "gpus_used", "usable",
                 "activations_without_recompute", "room_without_recompute", "activations_without_cp", "checkpoint",
                 "meters", "best_replica", "goodput_tokens_per_s", "no_fit", "chunk_layers", "full_recompute_step_s")


def _with_gpus(workload, gpus):
    return workload if gpus == workload.gpus else dataclasses.replace(workload, gpus=gpus)


def _gpus_to_use(workload, space, usable, pins, floor, hint=None):
    """(GPU count, whether a grid of it fits): the reader's count if a grid uses
    it and one fits; else the most GPUs a fitting grid uses; else the most any
    grid uses (with pins: grids that carry them). hint: the plan on screen
    (warm_start.py), whose own layout is looked at first (a quick answer's usual
    case: it still fits)."""
    n = workload.gpus
    wctx = context_for(workload)
    if pins is None:
        known = reuse.known_smallest_fitting(workload, None)
        if known is not None and (known[0] is None or known[0][0] > n):
            # No grid of at most n GPUs fits when the fewest that fit are more (same floors).
            return space.largest_usable(n), False
        grids = space.layouts(n)
        if hint and any(floor(wctx, grid) <= usable for tier in warm_tiers(grids, hint, n) for grid in tier):
            # The grids the quick search tries first, before a scan of all of them.
            return n, True
        if any(floor(wctx, grid) <= usable for grid in grids):
            return n, True
        fitting = largest_fitting(wctx, space, usable, n)
        return (fitting, True) if fitting is not None else (space.largest_usable(n), False)
    counts = pins.gpu_counts(space, n)
    for count in counts:
        if any(floor(wctx, grid) <= usable for grid in pins.grids(space, count)):
            return count, True
    return next(count for count in counts if pins.grids(space, count)), False


def _checkpoint(report, gpus, failures):
    """The checkpoint mode and interval next to Young/Daly (bounded by the
    background work), what moving to the optimum would gain, the breakdown of
    lost time, and every mode's goodput at its own optimum
    (failures.FailureFigures.mode_goodput) for the checkpointing decision."""
    train = report.train_time_s
    at_optimal = train / report.goodput_at_optimal if report.goodput_at_optimal > 0.0 else None
    now = report.train_time_with_failures_s
    saved = (now - at_optimal) if (now is not None and at_optimal is not None) else None
    modes, costs, mode = failures.mode_goodput, failures.mode_costs, report.checkpoint_mode
    # Blocking writes are kept for the old runs; the planner never proposes them.
    candidates = [m for m in modes if m != "blocking" or m == mode]
    best = max(candidates, key=lambda m: (modes[m], m == mode))
    return {
        "mode": report.checkpoint_mode,
        "interval_s": report.checkpoint_interval_s,
        "optimal_interval_s": report.optimal_interval_s,
        "interval_bound": report.interval_bound,
        "daly_interval_s": report.daly_interval_s,
        "young_interval_s": report.young_interval_s,
        "checkpoint_write_s": report.checkpoint_write_s,
        "checkpoint_bytes": report.checkpoint_bytes,
        "checkpoint_bytes_per_gpu": report.checkpoint_bytes_per_gpu,
        "checkpoint_snapshot_s": report.checkpoint_snapshot_s,
        "checkpoint_pause_s": costs[mode].stall_s,
        "checkpoint_stall_s": report.checkpoint_stall_s,
        "checkpoint_background_s": report.checkpoint_background_s,
        "checkpoint_load_s": report.checkpoint_load_s,
        "recovery_source": report.recovery_source,
        "recovery_s": report.recovery_s,
        "mean_time_to_interrupt_s": report.mtti_s,
        "interruptions_per_day": report.interruptions_per_day,
        "goodput": report.goodput,
        "goodput_at_optimal": report.goodput_at_optimal,
        "goodput_gain": report.goodput_at_optimal - report.goodput,
        "lost_work_share": report.lost_work_share,
        "checkpoint_stall_share": report.checkpoint_stall_share,
        "recovery_share": report.recovery_share,
        "blocking_goodput": modes["blocking"],
        "async_goodput": modes["async"],
        "in_memory_goodput": modes["in_memory"],
        "blocking_pause_s": costs["blocking"].stall_s,
        "replicate_s": costs["in_memory"].replicate_s,
        "in_memory_load_s": costs["in_memory"].load_s,
        "best_mode": best,
        "best_goodput": modes[best],
        "best_pause_s": costs[best].stall_s,
        "best_interval_s": failures.mode_interval[best],
        "mode_gain": modes[best] - report.goodput_at_optimal,
        "train_time_with_failures_s": now,
        "train_time_at_optimal_s": at_optimal,
        "time_saved_s": saved,
        "gpu_hours_saved": None if saved is None else saved * gpus / 3600.0,
    }


def _no_fit(workload, closest, found, usable, searching=False):
    """How far the closest plan is from fitting, and the fewest GPUs (and their grid) that
    would fit; searching: a quick answer's, whose fewest GPUs the full search finds."""
    r = closest.report
    return {
        "min_gpus_searching": searching,
        "closest_parallelism": closest.parallelism.to_dict(),
        "memory_bytes": r.memory_bytes,
        "usable_bytes": usable,
        "device_bytes": r.device_bytes,
        "overflow_bytes": r.memory_bytes - usable,
        "overflow_ratio": r.memory_bytes / usable,
        "min_gpus": None if found is None else found[0],
        "min_gpus_layout": None if found is None else found[1].parallelism_fields(),
        "min_gpus_stage": None if found is None else _stage_at(workload, found[0], usable),
        "gpus_searched": MAX_GPUS_SEARCHED,
    }


def _no_fit_steps(workload, pins, closest, usable, budget, smallest):
    """_no_fit, as steps. A quick answer (budget) does not wait for the smallest GPU
    count that fits (`smallest`: a scan of every layout up to MAX_GPUS_SEARCHED) unless
    it is known: it says it is searching, and the full request finds it."""
    if budget is not None and reuse.known_smallest_fitting(workload, pins) is None:
        return _no_fit(workload, closest, None, usable, searching=True)
    found = yield from reuse.smallest_fitting_steps(workload, pins, smallest)
    return _no_fit(workload, closest, found, usable)


def _stage_at(workload, gpus, usable):
    """The stage the workload forces on ``gpus`` GPUs (for the no-fit hint);
    None past the largest GPU count a workload may have."""
    try:
        w = _with_gpus(workload, gpus)
    except LabInputError:
        return None
    return workload_stage(w, usable, context_for(w).failures.interruptions_per_day)


def layout_id(par):
    """What a plan uses, named by its parts: "tp_pp_dp", "dp", "single" …, then
    "_cp" / "_ep" for context and expert parallelism, "_zeroN" when it shards
    state and "_full" / "_selective" for recompute.
    The page labels alternatives with it, so a label always matches its layout."""
    out = layout_dims(par)
    # Context and expert parallelism go after the dimensions, before any ZeRO part.
    extra = "".join("_" + name for name in ("cp", "ep") if getattr(par, name) > 1 and name != out)
    if extra:
        dims, zero = (out.rsplit("_", 1) + [""])[:2] if "_zero" in out else (out, "")
        out = dims + extra + ("_" + zero if zero else "")
    if par.recompute != "none":
        out += "_" + par.recompute
    return out


def _alternatives(result, chosen, chosen_shape):
    """The best plan of each other shape and why it lost. A plan that is
    faster but within TIE_TOLERANCE lost the tie-break to the simpler winner:
    its reason says so (it never reads as beating the winner silently)."""
    out = []
    for stage in STAGES:
        cand = result.stage_best.get(stage)
        if cand is None or stage == chosen_shape:
            continue
        r = cand.report
        rel = cand.score / chosen.score
        if rel > 1.0:
            reason = "faster_within_tie"
        elif rel >= 1.0 - TIE_TOLERANCE:
            reason = "more_complex_near_tie"
        elif cand.report.step_s > chosen.report.step_s:
            reason = "slower_step"
        else:
            reason = "lower_goodput"
        out.append({
            "stage": stage,
            "layout": layout_id(cand.parallelism),
            "parallelism": cand.parallelism.to_dict(),
            "reason": reason,
            "goodput_tokens_per_s": cand.goodput_tokens_per_s,
            "relative_score": rel,
            "tie_tolerance": TIE_TOLERANCE,
            "step_s": r.step_s,
            "chosen_step_s": chosen.report.step_s,
            "memory_bytes": r.memory_bytes,
            "chosen_memory_bytes": chosen.report.memory_bytes,
            "memory_ratio": r.memory_ratio,
            "mfu": r.mfu,
        })
    return out


def _unfit_stages(wctx, grids, gpus, usable, seen):
    """Shapes no fitting plan reached: their least memory ("memory"), or
    "no_layout" when no grid of these GPUs has that shape
    (e.g. replicas only, when the GPU count does not divide the batch).
    Steps (steps.py): yields after each grid, so a refine can be dropped."""
    reachable = ("single_gpu",) if gpus == 1 else ("data_parallel", "zero_sharded", "tensor_pipeline", "full_3d")
    # Only shapes no fitting plan reached are reported, so only they need their least memory
    # (on most answers every shape was reached and no grid is visited).
    wanted = {stage for stage in reachable if stage not in seen}
    least = {}
    for grid in grids if wanted else ():
        yield
        zmax = 3 if grid.shards else 0
        if grid.gpus == 1:
            shapes = (("single_gpu", 0, "full"),)
        elif grid.tp * grid.cp * grid.pp * grid.ep == 1:
            shapes = (("data_parallel", 0, "full"), ("zero_sharded", zmax, "full"))
        else:
            shapes = (("tensor_pipeline", zmax, "selective"), ("full_3d", zmax, "full"))
        for stage, z, mode in shapes:
            if stage not in wanted:
                continue
            need = plan_memory(wctx, grid, z, mode, 1, 1)
            if stage not in least or need < least[stage]:
                least[stage] = need
    out = []
    for stage in STAGES:
        if stage not in reachable or stage in seen:
            continue
        if stage not in least:
            out.append({"stage": stage, "reason": "no_layout", "least_memory_bytes": None,
                        "usable_bytes": usable, "shortfall_bytes": None})
        elif least[stage] > usable:
            out.append({"stage": stage, "reason": "memory", "least_memory_bytes": least[stage],
                        "usable_bytes": usable, "shortfall_bytes": least[stage] - usable})
    return out


def _plan_unfit_stages(plan, wctx, w, pinned, result):
    """_unfit_stages of the plan's grids (steps); none for a provisional plan: which
    shapes cannot fit is the full search's to say (a quick search reaches few)."""
    if plan.provisional:
        return []
    grids = space_for(w).layouts(plan.gpus_used) if pinned is None else pinned.grids(space_for(w), plan.gpus_used)
    return (yield from _unfit_stages(wctx, grids, plan.gpus_used, plan.usable_bytes, result.stage_best))


def _decision_context(w, wctx, cand, result, plan, usable):
    """The _Context the decisions and the diagram read, of the plan `cand` the search `result` led to."""
    par, report, used = cand.parallelism, cand.report, plan.gpus_used
    ctx = _Context()
    ctx.workload, ctx.wctx, ctx.parallelism, ctx.report = w, wctx, par, report
    ctx.fits, ctx.gpus_used, ctx.usable = plan.fits, used, usable
    grid = Grid.of(par)
    # The GPU that would be most loaded without recompute: its activations and the room its own
    # state leaves them. The largest activations of any stage against the room on the report's
    # GPU mixed two stages, and a plan that keeps every activation (DeepSeek-V3's: 48.9 GB on the
    # first stage, 47.9 GB of room on the last) read "recompute brings them to 47.7 GB".
    states = stage_state_bytes(wctx, grid, par.zero)
    kept = stage_activation_bytes(wctx, grid, "none", par.micro_batch, par.interleave, par.sequence_parallel)
    worst = most_loaded(states, kept)
    ctx.activations_without_recompute = kept[worst]
    ctx.room_without_recompute = usable - states[worst]
    # The same plan with each sequence whole on a GPU (the CP sentence's "without it";
    # same micro-batches in flight, so only the sequence share changes), on the GPU that
    # would then be the most loaded, as the sentence says.
    ctx.activations_without_cp = None
    if par.cp > 1:
        whole = stage_activation_bytes(wctx, grid._replace(cp=1), par.recompute, par.micro_batch, par.interleave,
                                       par.sequence_parallel)
        ctx.activations_without_cp = whole[most_loaded(states, whole)]
    ctx.goodput_tokens_per_s = cand.goodput_tokens_per_s
    # A plan that recomputes only some layers: its largest chunk, and its step with every layer recomputed.
    ctx.chunk_layers = chunk_layers(w, par)[1]
    ctx.full_recompute_step_s = result.chosen.report.step_s if par.recompute_layers and result.chosen else None
    replicas = [result.stage_best[s].goodput_tokens_per_s for s in ("data_parallel", "zero_sharded")
                if s in result.stage_best]
    ctx.best_replica = max(replicas) if replicas else None
    ctx.checkpoint = _checkpoint(report, used, wctx.failures)
    ctx.meters = meters(report, usable, plan.fits)
    return ctx


def recommend(workload, pins=None, budget=None, hint=None):
    """The plan with the best goodput throughput that fits (ARCHITECTURE.md "Plan").

    pins: None, or a dict of Parallelism fields the plan must have (pins.py:
    tp, pp, dp, cp, ep, zero, recompute, micro_batch, interleave,
    sequence_parallel, first_stage_layers, last_stage_layers, recompute_layers); the search
    keeps only plans that match every pin. An invalid pin raises
    LabInputError naming the field, the value and the nearest valid values.
    When nothing with the pins fits, the plan says so and its closest plan
    has the pins.

    budget: a quick answer (the lab's first answer to a slider move): the
    search stops after this many evaluated plans once one fits; the Plan is
    then `provisional` (the best plan found so far, which fits) and the full
    search gives the final one. A finished search, or one reused, is final.
    hint: with a budget, the plan on screen as Plan.to_dict()["parallelism"]:
    the quick search tries it, carried to this workload, first (warm_start.py).
    """
    return finish(recommend_steps(workload, pins, budget, hint))


def recommend_steps(workload, pins=None, budget=None, hint=None):
    """recommend() as steps (steps.py): yields while it searches, returns the Plan."""
    if not isinstance(workload, Workload):
        raise LabInputError("workload", repr(workload), "a lab_core.Workload", "not_a_workload")
    if pins is not None and not isinstance(pins, dict):
        return (yield from _recommend(workload, pins, None, None))  # parse_pins names the problem
    if budget is None:
        release_retired()  # the tables quick answers dropped, freed off their path
    key = reuse.workload_key(workload, pins)
    plan = reuse.PLANS.get(key)
    if plan is None:
        plan = yield from _recommend(workload, pins, budget, hint)
        if not plan.provisional:
            reuse.PLANS.put(key, plan)
    return plan


def _recommend(workload, pins, budget, hint):
    requested = context_for(workload)
    usable = requested.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
    space = space_for(workload)
    pinned = parse_pins(workload, pins, space)
    floor = floor_memory if pinned is None else Choices(requested, pinned).floor_memory
    key = reuse.search_key(workload, pins)
    earlier = reuse.SEARCHES.get(key)
    if earlier is not None:
        used = earlier.gpus_used
        w = _with_gpus(workload, used)
        result = reuse.retarget(earlier, w)
    else:
        hint = hint if isinstance(hint, dict) and budget is not None else None
        used, some_fit = _gpus_to_use(workload, space, usable, pinned, floor, hint)
        w = _with_gpus(workload, used)
        result = yield from search_steps(w, pinned, budget, hint, none_fit=not some_fit)
        if result.complete:
            reuse.SEARCHES.put(key, result)
    wctx = context_for(w)
    plan = Plan()
    plan.gpus_requested = workload.gpus
    plan.gpus_used = used
    plan.usable_bytes = usable
    plan.no_fit = None
    plan.provisional = not result.complete
    cand = result.chosen
    layers_pin = pinned_recompute_layers(pins)
    if cand is not None:
        cand = recompute_layers(w, cand, usable, layers_pin)
    if cand is not None and cand.fits:
        plan.fits = True
    elif cand is not None:
        # Only a pinned count of recompute layers makes the search's fitting plan overflow: say how many would fit.
        plan.fits = False
        plan.no_fit = _no_fit(workload, cand, None, usable)
        plan.no_fit["fewest_recompute_layers"] = fewest_fitting(w, cand.parallelism, usable)
    else:
        # The closest plan as the reader pinned it: with their count of recompute layers (the search
        # weighs every layer recomputed, the least memory).
        cand = recompute_layers(w, result.closest, usable, layers_pin) if layers_pin else result.closest
        plan.fits = False
        plan.no_fit = yield from _no_fit_steps(workload, pins, cand, usable, budget, lambda: smallest_fitting_steps(
            requested, space, usable, floor=floor, accept=None if pinned is None else pinned.allows_grid))
        # A quick answer leaves the shapes that cannot fit (a least-memory scan of every grid:
        # nothing fits, so no shape was reached) to the full request; the view's core does not show them.
        plan.provisional = plan.provisional or budget is not None
    par, report = cand.parallelism, cand.report
    plan.parallelism = par
    plan.report = report
    plan.goodput_tokens_per_s = cand.goodput_tokens_per_s
    plan.stage = workload_stage(workload, usable, requested.failures.interruptions_per_day)
    plan.shape = cand.stage

    ctx = _decision_context(w, wctx, cand, result, plan, usable)
    ctx.no_fit = plan.no_fit
    plan.meters = ctx.meters
    plan.checkpoint = ctx.checkpoint
    plan.decisions = decisions(ctx)
    plan.diagram = diagram(ctx)
    plan.alternatives = _alternatives(result, cand, cand.stage) if plan.fits else []
    plan.unfit_stages = yield from _plan_unfit_stages(plan, wctx, w, pinned, result)
    plan.pins = {} if pinned is None else pinned.to_dict()
    if layers_pin is not None:
        plan.pins["recompute_layers"] = layers_pin
    plan.search = {
        "plans_evaluated": result.evaluated,
        "plans_considered": result.considered,
        "layouts": result.layouts,
        "best_goodput_tokens_per_s": result.best.goodput_tokens_per_s if result.best else None,
        "reused": earlier is not None,
        "complete": result.complete,
    }
    return plan
