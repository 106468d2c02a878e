"""Chapter Failures and checkpoints: its numbers, every one computed by lab_core."""
from lab_core import failures, calibration as cal

from .common import Chapter, chapter, evaluate


@chapter("failures")
def failures_chapter():
    example = dict(params=405e9, gpus=16384, seq_len=8192, global_batch_tokens=16 * 1048576,
                   gpu="h100_80gb", checkpoint_interval_min=60, training_tokens=15e12)
    w, r = evaluate(example, tp=8, pp=4, dp=512, recompute="selective", sequence_parallel=True)
    restart = w.restart_min * 60.0
    daly = r.daly_interval_s
    values = {
        "params": (w.shape.params, "params"),
        "gpus": (w.gpus, "count"),
        "llama_interruptions": (cal.LLAMA3_UNEXPECTED_INTERRUPTIONS, "count"),
        "llama_days": (cal.LLAMA3_WINDOW_HOURS / 24.0, "count"),
        "llama_gpus": (cal.LLAMA3_GPUS, "count"),
        "rate": (cal.GPU_FAILURES_PER_HOUR, "sci"),
        "per_day": (r.interruptions_per_day, "plain"),
        "mtti": (r.mtti_s, "duration"),
        "small_gpus": (1024, "count"),
        "small_mtti": (3600.0 / failures.interruptions_per_hour(1024, cal.GPU_FAILURES_PER_HOUR), "duration"),
        "ckpt_bytes_per_param": (cal.CHECKPOINT_BYTES_PER_PARAM, "count"),
        "ckpt": (r.checkpoint_bytes, "bytes"),
        "storage": (w.checkpoint_storage_gbps * 1e9, "bytes"),
        "write": (r.checkpoint_write_s, "duration"),
        "young": (r.young_interval_s, "duration"),
        "daly": (daly, "duration"),
        "interval": (r.checkpoint_interval_s, "duration"),
        "restart": (restart, "duration"),
        "lost": (r.lost_work_per_interruption_s, "duration"),
        "lost_day": (r.lost_work_per_day_s, "duration"),
        "goodput": (r.goodput, "percent"),
        "goodput_daly": (r.goodput_at_daly, "percent"),
        "fast_write": (r.checkpoint_bytes / (1000e9), "duration"),
        "fast_storage": (1000e9, "bytes"),
        "fast_goodput": (failures.goodput(failures.daly_interval(r.checkpoint_bytes / 1000e9, r.mtti_s),
                                          r.checkpoint_bytes / 1000e9, 60.0, r.mtti_s), "percent"),
        "fast_restart": (60.0, "duration"),
        "slow_interval": (240 * 60.0, "duration"),
        "slow_goodput": (failures.goodput(240 * 60.0, r.checkpoint_write_s, restart, r.mtti_s), "percent"),
    }
    intervals = (2, 5, 10, 20, 30, 60, 120, 240, 480, 1440)
    series = []
    for gpus in (1024, 4096, 16384):
        rate = failures.interruptions_per_hour(gpus, cal.GPU_FAILURES_PER_HOUR)
        mtti = 3600.0 / rate
        points = [(minutes, 100.0 * failures.goodput(minutes * 60.0, r.checkpoint_write_s, restart, mtti))
                  for minutes in intervals]
        series.append({"key": "gpus", "points": points, "label_values": {"gpus": (gpus, "count")}})
    chart = {"type": "line", "id": "failures", "series": series, "x_log": True,
             "text_values": {"params": (w.shape.params, "params"), "write": (r.checkpoint_write_s, "duration"),
                             "restart": (restart, "duration")}}
    return Chapter(values, example, [chart])
