"""Failures and checkpoints: Llama 3 405B's published run
(scenarios/llama3-405b.yaml: 126 layers on 16,384 H100s) against the failure
rate of its Table 5 (arXiv:2407.21783), Young's interval derived, Daly's
refinement, the goodput chart clipped where the first-order model stops
holding, stragglers and silent data corruption."""
from lab_core import calibration as cal, failures

from .common import Chapter, case, chapter, evaluate, exercise
from .scenario_runs import branch, published_run, run_name

#: Cluster sizes of the goodput chart and the rate section.
CHART_GPUS = (1024, 4096, 16384)
#: Checkpoint intervals of the chart, minutes; each curve stops at its cluster's mean time to interrupt.
CHART_INTERVALS = (2, 5, 10, 20, 30, 60, 120, 240, 480, 1440)
#: Aggregate storage write bandwidths of the Young/Daly table, GB/s.
STORAGE_SWEEP = (1000, 100, 10, 1)
#: A straggler running at this fraction of its peers' speed, and a larger cluster for the rate section.
STRAGGLER_SPEED = 0.9
LARGE_GPUS = 32768
HOURS_PER_YEAR = 24 * 365.25
#: Where the failure of the timeline figure strikes, as a share of the interval (on average, half way).
FAILURE_AT = 0.5


def _mtti_s(gpus):
    return 3600.0 / failures.interruptions_per_hour(gpus, cal.GPU_FAILURES_PER_HOUR)


def _rate_values(w, r):
    per_gpu_years = 1.0 / cal.GPU_FAILURES_PER_HOUR / HOURS_PER_YEAR
    return {
        "llama": (run_name("llama3-405b"), "text"),
        "params": (w.shape.params, "params"),
        "layers": (w.shape.layers, "count"),
        "gpus": (w.gpus, "count"),
        "llama_interruptions": (cal.LLAMA3_UNEXPECTED_INTERRUPTIONS, "count"),
        "llama_days": (cal.LLAMA3_WINDOW_HOURS / 24.0, "count"),
        "llama_gpus": (cal.LLAMA3_GPUS, "count"),
        "rate": (cal.GPU_FAILURES_PER_HOUR, "sci"),
        "gpu_years": (per_gpu_years, "plain"),
        "per_day": (r.interruptions_per_day, "plain"),
        "mtti": (r.mtti_s, "duration"),
        "small_gpus": (CHART_GPUS[0], "count"),
        "small_mtti": (_mtti_s(CHART_GPUS[0]), "duration"),
        "large_gpus": (LARGE_GPUS, "count"),
        "large_mtti": (_mtti_s(LARGE_GPUS), "duration"),
    }


def _interval_verdict(r):
    """Whether the reader's interval loses goodput to Daly's, and on which side."""
    if r.goodput >= r.goodput_at_daly:
        return "at_optimum"
    return "too_long" if r.checkpoint_interval_s > r.daly_interval_s else "too_short"


def _young_values(w, r):
    delta, mtti, tau = r.checkpoint_write_s, r.mtti_s, r.young_interval_s
    return {
        "ckpt_bytes_per_param": (cal.CHECKPOINT_BYTES_PER_PARAM, "count"),
        "ckpt": (r.checkpoint_bytes, "bytes"),
        "storage": (w.checkpoint_storage_gbps * 1e9, "bytes_per_s"),
        "write": (delta, "duration"),
        "young": (tau, "duration"),
        "young_waste": ((2.0 * delta / mtti) ** 0.5, "percent"),
        "young_ckpt_share": (delta / tau, "percent"),
        "young_lost_share": (tau / (2.0 * mtti), "percent"),
        "daly": (r.daly_interval_s, "duration"),
        "interval": (r.checkpoint_interval_s, "duration"),
        "restart": (w.restart_min * 60.0, "duration"),
        "lost": (r.lost_work_per_interruption_s, "duration"),
        "lost_day": (r.lost_work_per_day_s, "duration"),
        "goodput": (r.goodput, "percent"),
        "goodput_daly": (r.goodput_at_daly, "percent"),
        "interval_verdict": case(_interval_verdict(r), "too_long", "too_short", "at_optimum"),
    }


def _daly_table(w, r):
    """Young against Daly as the checkpoint gets slower relative to the mean time to interrupt."""
    mtti, restart = r.mtti_s, w.restart_min * 60.0
    values = {}
    gaps = []
    for index, gbps in enumerate(STORAGE_SWEEP):
        delta = r.checkpoint_bytes / (gbps * 1e9)
        young, daly = failures.young_interval(delta, mtti), failures.daly_interval(delta, mtti)
        key = f"d{index}"
        values[f"{key}_storage"] = (gbps * 1e9, "bytes_per_s")
        values[f"{key}_write"] = (delta, "duration")
        values[f"{key}_ratio"] = (delta / mtti, "percent")
        values[f"{key}_young"] = (young, "duration")
        values[f"{key}_daly"] = (daly, "duration")
        values[f"{key}_goodput_young"] = (failures.goodput(young, delta, restart, mtti), "percent")
        values[f"{key}_goodput_daly"] = (failures.goodput(daly, delta, restart, mtti), "percent")
        gaps.append(abs(daly / young - 1.0))
    values["daly_gap_small"] = (gaps[1], "percent")
    values["daly_gap_large"] = (gaps[-1], "percent")
    values["daly_verdict"] = branch(gaps[-1] > gaps[1], "grows", "flat")
    values["young_past_mtti"] = branch(failures.young_interval(r.checkpoint_bytes / (STORAGE_SWEEP[-1] * 1e9), mtti) > mtti,
                                     "past", "within")
    values["mtti_table"] = (mtti, "duration")
    return values


def _chart(w, r):
    """Goodput against the interval, each curve stopped at its cluster's mean time to interrupt."""
    restart = w.restart_min * 60.0
    series = []
    for gpus in CHART_GPUS:
        mtti = _mtti_s(gpus)
        minutes = [m for m in CHART_INTERVALS if m * 60.0 < mtti] + [mtti / 60.0]
        points = [(m, 100.0 * failures.goodput(m * 60.0, r.checkpoint_write_s, restart, mtti)) for m in minutes]
        series.append({"key": "gpus", "points": points, "label_values": {"gpus": (gpus, "count"),
                                                                          "mtti": (mtti, "duration")}})
    return {"type": "line", "id": "failures", "series": series, "x_log": True,
            "text_values": {"params": (w.shape.params, "params"), "write": (r.checkpoint_write_s, "duration"),
                            "restart": (restart, "duration")}}


def _straggler_values(w, r):
    slow = 1.0 / STRAGGLER_SPEED - 1.0
    return {
        "straggler_speed": (STRAGGLER_SPEED, "percent"),
        "straggler_step": (r.step_s / STRAGGLER_SPEED, "duration"),
        "step": (r.step_s, "duration"),
        "straggler_loss": (slow, "percent"),
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
            f"ex_{key}_young": (er.young_interval_s, "duration"),
            f"ex_{key}_daly": (er.daly_interval_s, "duration"),
            f"ex_{key}_interval": (er.checkpoint_interval_s, "duration"),
            f"ex_{key}_goodput": (er.goodput, "percent"),
            f"ex_{key}_goodput_daly": (er.goodput_at_daly, "percent"),
            f"ex_{key}_storage": (state.workload.checkpoint_storage_gbps * 1e9, "bytes_per_s"),
        })
    small = exercise("failures", "smaller-cluster").report
    values["ex_small_mtti_ratio"] = (small.mtti_s / r.mtti_s, "plain")
    values["ex_small_young_ratio"] = (small.young_interval_s / r.young_interval_s, "plain")
    slow = exercise("failures", "slow-storage").report
    values["ex_slow_write_ratio"] = (slow.checkpoint_write_s / r.checkpoint_write_s, "plain")
    values["ex_slow_young_ratio"] = (slow.young_interval_s / r.young_interval_s, "plain")
    long = exercise("failures", "four-hours").report
    values["ex_long_loss"] = (long.goodput_at_daly - long.goodput, "percent")
    values["ex_long_past_mtti"] = branch(long.checkpoint_interval_s > long.mtti_s, "past", "within")
    return values


@chapter("failures")
def failures_chapter():
    workload, layout = published_run("llama3-405b")
    example = dict(workload, checkpoint_interval_min=60)
    w, r = evaluate(example, **layout)
    values = {}
    for part in (_rate_values(w, r), _young_values(w, r), _daly_table(w, r), _straggler_values(w, r),
                 _exercise_values(r)):
        values.update(part)
    figures = {"timeline": {"interval_s": r.young_interval_s, "write_s": r.checkpoint_write_s,
                            "restart_s": w.restart_min * 60.0, "failure_at": FAILURE_AT}}
    values["fig_lost"] = (FAILURE_AT * r.young_interval_s, "duration")
    return Chapter(values, example, [_chart(w, r)], figures)
