"""Chapter Failures and checkpoints: its numbers, every one computed by lab_core."""
import lab_core
from lab_core import failures, calibration as cal
from lab_core.context import context_for

from ..validation import llama3_effective_time, load_facts
from ..validation.recovery import LLAMA3_WORKLOAD
from .common import Chapter, GB, chapter, default, evaluate


CHECKPOINT_MODES = lab_core.checkpoint_modes.CHECKPOINT_MODES
#: Intervals of the goodput chart, minutes.
CHART_INTERVALS = (1, 2, 5, 10, 20, 30, 60, 120, 240)
#: Storage ten times slower than the lab's default: the persist bound holds.
SLOW_STORAGE_FACTOR = 0.1
#: A restart brought down to one minute (detection, restart, set-up and load together).
FAST_RESTART_S = 60.0


def _mode_figures(example, mode, **changes):
    """The failure figures of the chapter's workload checkpointed in ``mode``."""
    return context_for(lab_core.Workload(**dict(example, checkpoint_mode=mode, **changes))).failures


def _at_optimum(example, mode, **changes):
    """The failure figures with the interval set to the mode's optimum."""
    optimum = _mode_figures(example, mode, **changes).optimal_s
    return _mode_figures(example, mode, checkpoint_interval_min=optimum / 60.0, **changes)


def _causes():
    """Llama 3's Table 5 counts by category, and of the two largest components."""
    by_category, by_component = {}, {}
    for component, category, count in cal.LLAMA3_INTERRUPTIONS_BY_COMPONENT:
        by_category[category] = by_category.get(category, 0) + count
        by_component[component] = count
    return by_category, by_component


def _failure_rate_values(w, f):
    by_category, by_component = _causes()
    total = cal.LLAMA3_UNEXPECTED_INTERRUPTIONS
    return {
        "llama_interruptions": (total, "count"),
        "llama_days": (cal.LLAMA3_WINDOW_HOURS / 24.0, "count"),
        "llama_gpus": (cal.LLAMA3_GPUS, "count"),
        "rate": (cal.GPU_FAILURES_PER_HOUR, "sci"),
        "per_day": (f.interruptions_per_day, "plain"),
        "mtti": (f.mtti_s, "duration"),
        "small_gpus": (1024, "count"),
        "small_mtti": (3600.0 / failures.interruptions_per_hour(1024, cal.GPU_FAILURES_PER_HOUR), "duration"),
        "gpu_causes": (by_category["gpu"], "count"),
        "gpu_share": (by_category["gpu"] / total, "percent"),
        "faulty_gpu": (by_component["faulty_gpu"], "count"),
        "hbm": (by_component["gpu_hbm3"], "count"),
        "software": (by_category["dependency"], "count"),
        "network": (by_category["network"], "count"),
        "host_maintenance": (by_category["unplanned_maintenance"], "count"),
        "host": (by_category["host"], "count"),
        "unknown": (by_category["unknown"], "count"),
        "gpu_mtti": (f.mtti_s * total / by_category["gpu"], "duration"),
        "network_mtti": (f.mtti_s * total / by_category["network"], "duration"),
    }


def _mode_values(w, f):
    """The three modes' costs for the chapter's checkpoint, and a measured pause (ByteCheckpoint)."""
    measured = load_facts()["bytecheckpoint.table8"]
    costs = f.mode_costs
    return {
        "ckpt_bytes_per_param": (cal.CHECKPOINT_BYTES_PER_PARAM, "count"),
        "ckpt": (f.checkpoint_bytes, "bytes"),
        "per_gpu": (f.bytes_per_gpu, "bytes"),
        "storage": (w.checkpoint_storage_gbps * 1e9, "bytes"),
        "read": (w.storage_read_gbps * 1e9, "bytes"),
        "blocking_pause": (costs["blocking"].stall_s, "duration"),
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
    slow_storage = _DEFAULT_STORAGE * SLOW_STORAGE_FACTOR
    slow = _mode_figures(example, "async", checkpoint_storage_gbps=slow_storage)
    if f.interval_bound != "young_daly" or slow.interval_bound != "persist":
        raise ValueError(f"chapter 8 says Young/Daly holds at the default storage and the persist bound at "
                         f"{slow_storage} GB/s; the model says {f.interval_bound} and {slow.interval_bound}")
    return {
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
        "slow_storage": (slow_storage * 1e9, "bytes"),
        "slow_write": (slow.checkpoint_write_s, "duration"),
        "slow_optimal": (slow.optimal_s, "duration"),
        "slow_interval": (240 * 60.0, "duration"),
        "slow_goodput": (_mode_figures(example, "async", checkpoint_interval_min=240).goodput, "percent"),
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
        "fast_goodput": (_at_optimum(_CHAPTER8_EXAMPLE, "async", restart_min=FAST_RESTART_S / 60.0).goodput,
                         "percent"),
    }


def _llama_values():
    facts = load_facts()
    published = facts["run.llama3_405b.effective_training_time"]["published"]
    as_run, with_async = llama3_effective_time(facts), llama3_effective_time(facts, "async")
    return {
        "llama_params": (LLAMA3_WORKLOAD["params"], "params"),
        "llama_published": (published["effective_training_time_percent"] / 100.0, "percent"),
        "llama_storage": (published["storage_sustained_TBps"] * 1e12, "bytes"),
        "llama_planned": (published["planned_interruptions"], "count"),
        "llama_interval": (as_run.interval_s, "duration"),
        "llama_lab": (as_run.effective, "percent"),
        "llama_async": (with_async.effective, "percent"),
    }


def _failure_charts(example, f, best):
    """Goodput against the interval for each mode; where the time goes at each mode's optimum."""
    series = []
    for mode in CHECKPOINT_MODES:
        points = [(minutes, 100.0 * _mode_figures(example, mode, checkpoint_interval_min=minutes).goodput)
                  for minutes in CHART_INTERVALS]
        series.append({"key": mode, "points": points, "dashed": mode == "blocking"})
    text_values = {"params": (f.checkpoint_bytes / cal.CHECKPOINT_BYTES_PER_PARAM, "params"),
                   "gpus": (example["gpus"], "count"), "per_day": (f.interruptions_per_day, "plain")}
    goodput_chart = {"type": "line", "id": "failures", "series": series, "x_log": True, "text_values": text_values}
    parts = {"lost_work": [], "pauses": [], "detection": [], "restart": [], "init": [], "load": []}
    for mode in CHECKPOINT_MODES:
        b = best[mode]
        for key, share in (("lost_work", b.lost_work_share), ("pauses", b.stall_share),
                           ("detection", b.part_share(b.recovery.detection_s)),
                           ("restart", b.part_share(b.recovery.job_restart_s)),
                           ("init", b.part_share(b.recovery.comm_init_s)), ("load", b.part_share(b.recovery.load_s))):
            parts[key].append(100.0 * share)
    breakdown = {"type": "stacked", "id": "failure_breakdown", "categories": [(mode, {}) for mode in CHECKPOINT_MODES],
                 "segments": list(parts.items()), "text_values": text_values}
    return [goodput_chart, breakdown]


_DEFAULT_STORAGE = default("checkpoint_storage_gbps")
_CHAPTER8_EXAMPLE = dict(params=405e9, gpus=16384, seq_len=8192, global_batch_tokens=16 * 1048576,
                         gpu="h100_80gb", checkpoint_interval_min=60, training_tokens=15e12)


@chapter("failures")
def failures_chapter():
    example = _CHAPTER8_EXAMPLE
    w, r = evaluate(example, tp=8, pp=4, dp=512, recompute="selective", sequence_parallel=True)
    f = context_for(w).failures
    intervals, best = _interval_values(example, f)
    values = {"params": (w.shape.params, "params"), "gpus": (w.gpus, "count")}
    for part in (_failure_rate_values(w, f), _mode_values(w, f), _recovery_values(w, f), intervals,
                 _breakdown_values(best), _llama_values()):
        values.update(part)
    return Chapter(values, example, _failure_charts(example, f, best))
