"""Failures, checkpoints and goodput."""
import math

from .calibration import CHECKPOINT_BYTES_PER_PARAM


def interruptions_per_hour(gpus, failures_per_gpu_hour):
    """Cluster interruption rate: proportional to the GPU count.

    Calibrated on Llama 3 405B: 419 unexpected interruptions in 54 days on
    16,384 GPUs (arXiv:2407.21783 Sec 3.3.4, Table 5) -> 3.09 h between
    interruptions at that size.
    """
    return gpus * failures_per_gpu_hour


def young_interval(checkpoint_s, mtti_s):
    """Optimal compute time between checkpoints: sqrt(2 delta M).

    Source: Young, CACM 17(9):530-531, 1974, doi:10.1145/361147.361115.
    """
    return math.sqrt(2.0 * checkpoint_s * mtti_s)


def daly_interval(checkpoint_s, mtti_s):
    """Daly's higher-order optimum (FGCS 22(3):303-312, 2006, Eq 37).

    sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta
    for delta < 2M, else M.
    """
    if checkpoint_s >= 2.0 * mtti_s:
        return mtti_s
    x = checkpoint_s / (2.0 * mtti_s)
    return math.sqrt(2.0 * checkpoint_s * mtti_s) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - checkpoint_s


def lost_work_per_interruption(interval_s, checkpoint_s, restart_s):
    """Expected seconds lost per interruption: half a checkpoint period plus the restart.

    First-order model of Young (1974) and Daly (2006): a failure strikes on
    average halfway through the (interval + checkpoint) period.
    """
    return 0.5 * (interval_s + checkpoint_s) + restart_s


def goodput(interval_s, checkpoint_s, restart_s, mtti_s):
    """Fraction of wall time that advances training.

    (tau / (tau + delta)) x (1 - lost per interruption / M): checkpoint writes
    block training (synchronous checkpoints, a teaching assumption), and each
    interruption costs lost_work_per_interruption. First-order, as Young/Daly;
    0 when failures outpace progress.
    """
    if mtti_s is None:
        return interval_s / (interval_s + checkpoint_s)
    useful = 1.0 - lost_work_per_interruption(interval_s, checkpoint_s, restart_s) / mtti_s
    if useful <= 0.0:
        return 0.0
    return interval_s / (interval_s + checkpoint_s) * useful


class FailureFigures:
    """Failure and checkpoint figures of one workload (they do not depend on the layout)."""

    __slots__ = ("interruptions_per_day", "mtti_s", "checkpoint_bytes", "checkpoint_write_s", "interval_s",
                 "young_s", "daly_s", "goodput", "goodput_at_daly", "lost_per_interruption_s", "lost_per_day_s")


def failure_figures(gpus, failures_per_gpu_hour, params, storage_write_gbps, interval_min, restart_min):
    """Interruption rate, checkpoint size and write time, Young/Daly intervals and goodput.

    Checkpoint bytes: calibration.CHECKPOINT_BYTES_PER_PARAM per parameter,
    written at the aggregate storage bandwidth (a blocking write). Below one
    interruption per 10^12 hours there is no meaningful mean time to interrupt
    (None), and goodput counts only the checkpoint writes.
    """
    f = FailureFigures()
    rate = interruptions_per_hour(gpus, failures_per_gpu_hour)
    f.interruptions_per_day = 24.0 * rate
    f.mtti_s = 3600.0 / rate if rate > 1e-12 else None
    f.checkpoint_bytes = params * CHECKPOINT_BYTES_PER_PARAM
    delta = f.checkpoint_bytes / (storage_write_gbps * 1e9)
    f.checkpoint_write_s = delta
    f.interval_s = interval_min * 60.0
    restart = restart_min * 60.0
    if f.mtti_s is None:
        f.young_s = f.daly_s = None
        f.goodput_at_daly = goodput(1.0, 0.0, restart, None)
    else:
        f.young_s = young_interval(delta, f.mtti_s)
        f.daly_s = daly_interval(delta, f.mtti_s)
        f.goodput_at_daly = goodput(f.daly_s, delta, restart, f.mtti_s) if f.daly_s > 0 else 0.0
    f.lost_per_interruption_s = lost_work_per_interruption(f.interval_s, delta, restart)
    f.lost_per_day_s = f.lost_per_interruption_s * f.interruptions_per_day
    f.goodput = goodput(f.interval_s, delta, restart, f.mtti_s)
    return f
