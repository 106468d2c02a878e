"""Failures and checkpoints: Llama 3 405B's published run (scenarios/llama3-405b.yaml:
126 layers on 16,384 H100s) with the lab's default checkpoint settings, against the
failure rate of its Table 5 (arXiv:2407.21783); Young's interval derived with the
blocking pause, Daly's refinement, the goodput charts clipped at the mean time to
interrupt where the first-order model stops holding; blocking, async and in-memory
checkpoints, recovery parts and where the time goes (lab_core.checkpoint_modes,
lab_core.recovery); the paper's effective training time; stragglers."""
import lab_core
from lab_core import calibration as cal, failures
from lab_core.context import context_for

from ..validation import llama3_effective_time, load_facts
from ..validation.recovery import LLAMA3_WORKLOAD
from .common import Chapter, case, chapter, default, evaluate, exercise
from .scenario_runs import branch, published_run, run_name

CHECKPOINT_MODES = lab_core.checkpoint_modes.CHECKPOINT_MODES
#: Intervals of the goodput charts, minutes; each curve stops at its mean time to interrupt.
CHART_INTERVALS = (1, 2, 5, 10, 20, 30, 60, 120, 240, 480, 1440)
#: Cluster sizes of the per-cluster goodput chart and the rate section.
CHART_GPUS = (1024, 4096, 16384)
#: Aggregate storage write bandwidths of the Young/Daly table, GB/s.
STORAGE_SWEEP = (1000, 100, 10, 1)
#: Storage ten times slower than the lab's default: the persist bound holds.
SLOW_STORAGE_FACTOR = 0.1
#: A restart brought down to one minute (detection, restart, set-up and load together).
FAST_RESTART_S = 60.0
#: A straggler running at this fraction of its peers' speed, and a larger cluster for the rate section.
STRAGGLER_SPEED = 0.9
LARGE_GPUS = 32768
HOURS_PER_YEAR = 24 * 365.25
#: Where the failure of the timeline figure strikes, as a share of the interval (on average, half way).
FAILURE_AT = 0.5
#: The checkpoint settings the chapter's example leaves at the lab's defaults (the scenario pins Meta's).
CHECKPOINT_INPUTS = ("checkpoint_storage_gbps", "checkpoint_mode", "checkpoint_interval_min")


def _example():
    """Llama 3 405B's workload with the lab's default checkpointing and a one-hour interval."""
    workload, layout = published_run("llama3-405b")
    example = {k: v for k, v in workload.items() if k not in CHECKPOINT_INPUTS}
    example["checkpoint_interval_min"] = 60
    return example, layout


def _mtti_s(gpus):
    return 3600.0 / failures.interruptions_per_hour(gpus, cal.GPU_FAILURES_PER_HOUR)


def _mode_figures(example, mode, **changes):
    """The failure figures of the chapter's workload checkpointed in ``mode``."""
    return context_for(lab_core.Workload(**dict(example, checkpoint_mode=mode, **changes))).failures


def _at_optimum(example, mode, **changes):
    """The failure figures with the interval set to the mode's optimum."""
    optimum = _mode_figures(example, mode, **changes).optimal_s
    return _mode_figures(example, mode, checkpoint_interval_min=optimum / 60.0, **changes)


def _causes():
    """Llama 3's Table 5 counts by category, and of the largest components."""
    by_category, by_component = {}, {}
    for component, category, count in cal.LLAMA3_INTERRUPTIONS_BY_COMPONENT:
        by_category[category] = by_category.get(category, 0) + count
        by_component[component] = count
    return by_category, by_component


def _rate_values(w, f):
    by_category, by_component = _causes()
    total = cal.LLAMA3_UNEXPECTED_INTERRUPTIONS
    return {
        "llama": (run_name("llama3-405b"), "text"),
        "params": (w.shape.params, "params"), "layers": (w.shape.layers, "count"), "gpus": (w.gpus, "count"),
        "llama_interruptions": (total, "count"),
        "llama_days": (cal.LLAMA3_WINDOW_HOURS / 24.0, "count"),
        "llama_gpus": (cal.LLAMA3_GPUS, "count"),
        "rate": (cal.GPU_FAILURES_PER_HOUR, "sci"),
        "gpu_years": (1.0 / cal.GPU_FAILURES_PER_HOUR / HOURS_PER_YEAR, "plain"),
        "per_day": (f.interruptions_per_day, "plain"),
        "mtti": (f.mtti_s, "duration"),
        "small_gpus": (CHART_GPUS[0], "count"), "small_mtti": (_mtti_s(CHART_GPUS[0]), "duration"),
        "large_gpus": (LARGE_GPUS, "count"), "large_mtti": (_mtti_s(LARGE_GPUS), "duration"),
        "gpu_causes": (by_category["gpu"], "count"),
        "gpu_share": (by_category["gpu"] / total, "percent"),
        "faulty_gpu": (by_component["faulty_gpu"], "count"),
        "hbm": (by_component["gpu_hbm3"], "count"),
        "sdc": (by_component["silent_data_corruption"], "count"),
        "software": (by_category["dependency"], "count"),
        "network": (by_category["network"], "count"),
        "host_maintenance": (by_category["unplanned_maintenance"], "count"),
        "host": (by_category["host"], "count"),
        "unknown": (by_category["unknown"], "count"),
        "gpu_mtti": (f.mtti_s * total / by_category["gpu"], "duration"),
        "network_mtti": (f.mtti_s * total / by_category["network"], "duration"),
    }


def _young_values(w, f):
    """Young's interval for the blocking pause (the classic form the derivation uses)."""
    delta, mtti = f.mode_costs["blocking"].stall_s, f.mtti_s
    tau = failures.young_interval(delta, mtti)
    return {
        "ckpt_bytes_per_param": (cal.CHECKPOINT_BYTES_PER_PARAM, "count"),
        "ckpt": (f.checkpoint_bytes, "bytes"),
        "per_gpu": (f.bytes_per_gpu, "bytes"),
        "storage": (w.checkpoint_storage_gbps * 1e9, "bytes_per_s"),
        "read": (w.storage_read_gbps * 1e9, "bytes_per_s"),
        "blocking_pause": (delta, "duration"),
        "young": (tau, "duration"),
        "young_waste": ((2.0 * delta / mtti) ** 0.5, "percent"),
        "young_ckpt_share": (delta / tau, "percent"),
        "young_lost_share": (tau / (2.0 * mtti), "percent"),
    }


def _daly_table(f):
    """Young against Daly as the blocking pause grows against the mean time to interrupt."""
    mtti, recovery = f.mtti_s, f.recovery.total_s
    values, gaps = {"mtti_table": (mtti, "duration")}, []
    for index, gbps in enumerate(STORAGE_SWEEP):
        delta = f.checkpoint_bytes / (gbps * 1e9)
        young, daly = failures.young_interval(delta, mtti), failures.daly_interval(delta, mtti)
        key = f"d{index}"
        values[f"{key}_storage"] = (gbps * 1e9, "bytes_per_s")
        values[f"{key}_write"] = (delta, "duration")
        values[f"{key}_ratio"] = (delta / mtti, "percent")
        values[f"{key}_young"] = (young, "duration")
        values[f"{key}_daly"] = (daly, "duration")
        values[f"{key}_goodput_young"] = (failures.goodput(young, delta, recovery, mtti), "percent")
        values[f"{key}_goodput_daly"] = (failures.goodput(daly, delta, recovery, mtti), "percent")
        gaps.append(abs(daly / young - 1.0))
    values["daly_gap_small"] = (gaps[1], "percent")
    values["daly_gap_large"] = (gaps[-1], "percent")
    values["daly_verdict"] = branch(gaps[-1] > gaps[1], "grows", "flat")
    slowest = f.checkpoint_bytes / (STORAGE_SWEEP[-1] * 1e9)
    values["young_past_mtti"] = branch(failures.young_interval(slowest, mtti) > mtti, "past", "within")
    return values


def _mode_values(w, f):
    """The three modes' costs for the chapter's checkpoint, and a measured pause (ByteCheckpoint)."""
    measured = load_facts()["bytecheckpoint.table8"]
    costs = f.mode_costs
    return {
        "snapshot": (f.snapshot_s, "duration"),
        "write": (f.checkpoint_write_s, "duration"),
        "replicate": (costs["in_memory"].replicate_s, "duration"),
        "memory_load": (costs["in_memory"].load_s, "duration"),
        "storage_load": (costs["async"].load_s, "duration"),
        "persist_every": (cal.IN_MEMORY_PERSIST_EVERY, "count"),
        "bc_model": (measured["inputs"]["text_405b"]["params"], "params"),
        "bc_gpus": (measured["inputs"]["text_405b"]["gpus"], "count"),
        "bc_pause": (measured["published"]["text_405b"]["blocking_s"], "duration"),
    }


def _recovery_values(w, f):
    parts = f.recovery
    return {
        "detection": (parts.detection_s, "duration"),
        "job_restart": (parts.job_restart_s, "duration"),
        "init": (parts.comm_init_s, "duration"),
        "recovery": (parts.total_s, "duration"),
        "init_small": (lab_core.recovery.comm_init_s(1024), "duration"),
    }


def _interval_values(example, f):
    """Young/Daly with each mode's pause, the bound that holds, goodput at the
    reader's interval and at each optimum. The prose says which bound holds in
    each example: the build stops if the model disagrees."""
    best = {mode: _at_optimum(example, mode) for mode in CHECKPOINT_MODES}
    slow_storage = default("checkpoint_storage_gbps") * SLOW_STORAGE_FACTOR
    slow = _mode_figures(example, "async", checkpoint_storage_gbps=slow_storage)
    return {
        "bound": case(f.interval_bound, "young_daly", "persist", "replicate"),
        "slow_bound": case(slow.interval_bound, "young_daly", "persist", "replicate"),
        "young_async": (f.young_s, "duration"),
        "daly_async": (f.daly_s, "duration"),
        "daly_blocking": (f.mode_interval["blocking"], "duration"),
        "interval": (f.interval_s, "duration"),
        "lost": (f.lost_per_interruption_s, "duration"),
        "lost_day": (f.lost_per_day_s, "duration"),
        "goodput": (f.goodput, "percent"),
        "goodput_blocking_default": (_mode_figures(example, "blocking").goodput, "percent"),
        "goodput_async_opt": (best["async"].goodput, "percent"),
        "goodput_blocking_opt": (best["blocking"].goodput, "percent"),
        "goodput_memory_opt": (best["in_memory"].goodput, "percent"),
        "memory_opt": (best["in_memory"].interval_s, "duration"),
        "slow_storage": (slow_storage * 1e9, "bytes_per_s"),
        "slow_write": (slow.checkpoint_write_s, "duration"),
        "slow_optimal": (slow.optimal_s, "duration"),
        "slow_interval": (240 * 60.0, "duration"),
        "slow_goodput": (_mode_figures(example, "async", checkpoint_interval_min=240).goodput, "percent"),
        "slow_interval_verdict": branch(240 * 60.0 > f.mtti_s, "past", "within"),
    }, best


def _breakdown_values(best):
    a = best["async"]
    return {
        "lost_share": (a.lost_work_share, "percent"),
        "stall_share": (a.stall_share, "percent"),
        "recovery_share": (a.recovery_share, "percent"),
        "detection_share": (a.part_share(a.recovery.detection_s), "percent"),
        "restart_share": (a.part_share(a.recovery.job_restart_s), "percent"),
        "init_share": (a.part_share(a.recovery.comm_init_s), "percent"),
        "load_share": (a.part_share(a.recovery.load_s), "percent"),
        "fast_restart": (FAST_RESTART_S, "duration"),
        "fast_goodput": (_at_optimum(_example()[0], "async", restart_min=FAST_RESTART_S / 60.0).goodput,
                         "percent"),
    }


def _llama_values():
    facts = load_facts()
    published = facts["run.llama3_405b.effective_training_time"]["published"]
    as_run, with_async = llama3_effective_time(facts), llama3_effective_time(facts, "async")
    return {
        "llama_params": (LLAMA3_WORKLOAD["params"], "params"),
        "llama_published": (published["effective_training_time_percent"] / 100.0, "percent"),
        "llama_storage": (published["storage_sustained_TBps"] * 1e12, "bytes_per_s"),
        "llama_planned": (published["planned_interruptions"], "count"),
        "llama_interval": (as_run.interval_s, "duration"),
        "llama_lab": (as_run.effective, "percent"),
        "llama_async": (with_async.effective, "percent"),
    }


def _mode_chart(example, f):
    """Goodput against the interval for each mode, up to the mean time to interrupt."""
    minutes = [m for m in CHART_INTERVALS if m * 60.0 < f.mtti_s] + [f.mtti_s / 60.0]
    series = [{"key": mode, "dashed": mode == "blocking",
               "points": [(m, 100.0 * _mode_figures(example, mode, checkpoint_interval_min=m).goodput)
                          for m in minutes]} for mode in CHECKPOINT_MODES]
    text_values = {"params": (f.checkpoint_bytes / cal.CHECKPOINT_BYTES_PER_PARAM, "params"),
                   "gpus": (example["gpus"], "count"), "per_day": (f.interruptions_per_day, "plain"),
                   "mtti": (f.mtti_s, "duration")}
    return {"type": "line", "id": "failures", "series": series, "x_log": True, "text_values": text_values}


def _breakdown_chart(example, f, best):
    """Where the time goes at each mode's optimum."""
    parts = {"lost_work": [], "pauses": [], "detection": [], "restart": [], "init": [], "load": []}
    for mode in CHECKPOINT_MODES:
        b = best[mode]
        for key, share in (("lost_work", b.lost_work_share), ("pauses", b.stall_share),
                           ("detection", b.part_share(b.recovery.detection_s)),
                           ("restart", b.part_share(b.recovery.job_restart_s)),
                           ("init", b.part_share(b.recovery.comm_init_s)), ("load", b.part_share(b.recovery.load_s))):
            parts[key].append(100.0 * share)
    text_values = {"params": (f.checkpoint_bytes / cal.CHECKPOINT_BYTES_PER_PARAM, "params"),
                   "gpus": (example["gpus"], "count")}
    return {"type": "stacked", "id": "failure_breakdown", "categories": [(mode, {}) for mode in CHECKPOINT_MODES],
            "segments": list(parts.items()), "text_values": text_values}


def _scale_chart(w, f):
    """Goodput against the interval at three cluster sizes (blocking writes), each up to its own
    mean time to interrupt."""
    delta, recovery = f.mode_costs["blocking"].stall_s, f.recovery.total_s
    series = []
    for gpus in CHART_GPUS:
        mtti = _mtti_s(gpus)
        minutes = [m for m in CHART_INTERVALS if m * 60.0 < mtti] + [mtti / 60.0]
        points = [(m, 100.0 * failures.goodput(m * 60.0, delta, recovery, mtti)) for m in minutes]
        series.append({"key": "gpus", "points": points, "label_values": {"gpus": (gpus, "count"),
                                                                          "mtti": (mtti, "duration")}})
    return {"type": "line", "id": "failures_scale", "series": series, "x_log": True,
            "text_values": {"params": (w.shape.params, "params"), "write": (delta, "duration"),
                            "restart": (recovery, "duration")}}


def _straggler_values(w, r):
    return {
        "straggler_speed": (STRAGGLER_SPEED, "percent"),
        "straggler_step": (r.step_s / STRAGGLER_SPEED, "duration"),
        "step": (r.step_s, "duration"),
        "straggler_loss": (1.0 / STRAGGLER_SPEED - 1.0, "percent"),
        "straggler_gpus": (w.gpus * (1.0 - STRAGGLER_SPEED), "count"),
    }


def _exercise_values(r):
    """What the lab shows at each exercise's link: its checkpoint figures and goodput."""
    values = {}
    for key, name in (("small", "smaller-cluster"), ("slow", "slow-storage"), ("long", "four-hours")):
        state = exercise("failures", name)
        er = state.report
        values.update({
            f"ex_{key}_gpus": (state.workload.gpus, "count"),
            f"ex_{key}_mtti": (er.mtti_s, "duration"),
            f"ex_{key}_write": (er.checkpoint_write_s, "duration"),
            f"ex_{key}_pause": (er.checkpoint_stall_s, "duration"),
            f"ex_{key}_young": (er.young_interval_s, "duration"),
            f"ex_{key}_daly": (er.daly_interval_s, "duration"),
            f"ex_{key}_optimal": (er.optimal_interval_s, "duration"),
            f"ex_{key}_bound": case(er.interval_bound, "young_daly", "persist", "replicate"),
            f"ex_{key}_interval": (er.checkpoint_interval_s, "duration"),
            f"ex_{key}_goodput": (er.goodput, "percent"),
            f"ex_{key}_goodput_optimal": (er.goodput_at_optimal, "percent"),
            f"ex_{key}_storage": (state.workload.checkpoint_storage_gbps * 1e9, "bytes_per_s"),
        })
    small = exercise("failures", "smaller-cluster").report
    values["ex_small_mtti_ratio"] = (small.mtti_s / r.mtti_s, "plain")
    values["ex_small_young_ratio"] = (small.young_interval_s / r.young_interval_s, "plain")
    slow = exercise("failures", "slow-storage").report
    values["ex_slow_write_ratio"] = (slow.checkpoint_write_s / r.checkpoint_write_s, "plain")
    values["goodput_optimal"] = (r.goodput_at_optimal, "percent")
    long = exercise("failures", "four-hours").report
    values["ex_long_loss"] = (long.goodput_at_optimal - long.goodput, "percent")
    values["ex_long_past_mtti"] = branch(long.checkpoint_interval_s > long.mtti_s, "past", "within")
    return values


@chapter("failures")
def failures_chapter():
    example, layout = _example()
    w, r = evaluate(example, **layout)
    f = context_for(w).failures
    intervals, best = _interval_values(example, f)
    values = {}
    for part in (_rate_values(w, f), _young_values(w, f), _daly_table(f), _mode_values(w, f),
                 _recovery_values(w, f), intervals, _breakdown_values(best), _llama_values(),
                 _straggler_values(w, r), _exercise_values(r)):
        values.update(part)
    young = failures.young_interval(f.mode_costs["blocking"].stall_s, f.mtti_s)
    figures = {"timeline": {"interval_s": young, "write_s": f.mode_costs["blocking"].stall_s,
                            "restart_s": f.recovery.total_s, "failure_at": FAILURE_AT}}
    values["fig_lost"] = (FAILURE_AT * young, "duration")
    values["restart"] = (f.recovery.total_s, "duration")
    return Chapter(values, example, [_scale_chart(w, f), _mode_chart(example, f), _breakdown_chart(example, f, best)],
                   figures)
