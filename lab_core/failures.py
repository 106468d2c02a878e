"""Failures, checkpoints and goodput.

Interruptions arrive at a rate proportional to the GPU count. Each checkpoint
pauses training for its mode's blocking time (checkpoint_modes.py); each
interruption costs the recovery (recovery.py) plus the work since the last
checkpoint that survived it. Goodput is the share of wall time left for
training, and the rest is broken down into lost work, checkpoint pauses and
the recovery parts. The best interval is Young/Daly's for the mode's blocking
time, but never shorter than the background work a checkpoint must finish.
"""
import math

from .calibration import CHECKPOINT_BYTES_PER_PARAM
from .checkpoint_modes import CHECKPOINT_MODES, mode_costs
from .recovery import recovery_parts


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


def checkpoint_wait(interval_s, background_s):
    """Extra pause when the previous checkpoint's background work outlasts the
    interval: a save waits for the one before it to finish (torchtitan waits on
    the previous async_save future before staging; Megatron-LM finalizes the
    previous --async-save first)."""
    return max(0.0, background_s - interval_s)


def recompute_per_interruption(interval_s, stall_s, background_s=0.0, lag_s=None):
    """Expected wall time of work lost (and recomputed) per interruption.

    A failure strikes uniformly within a checkpoint period T (interval plus
    pause); it rolls back to the last checkpoint that had survived, whose
    snapshot is on average T/2 plus the lag until a checkpoint survives
    (``lag_s``; the write itself when blocking, default) old. First-order, as
    Young (1974) and Daly (2006); GEMINI (SOSP'23 Sec 2.2) counts the same
    half-period term.
    """
    pause = stall_s + checkpoint_wait(interval_s, background_s)
    return 0.5 * (interval_s + pause) + (stall_s if lag_s is None else lag_s)


def interrupted_share(per_interruption_s, mtti_s):
    """Share of wall time interruptions take when each costs ``per_interruption_s``
    (recomputed work plus recovery) and one arrives every ``mtti_s`` on average:
    their ratio, at most 1 (Young 1974; Daly 2006; MegaScale's effective training
    time rate, arXiv:2402.15627 Sec 6.3, counts the same)."""
    return min(1.0, per_interruption_s / mtti_s)


def time_shares(interval_s, stall_s, recovery_s, mtti_s, background_s=0.0, lag_s=None):
    """(goodput, lost work, checkpoint pauses, recovery) as fractions of wall time; they sum to 1.

    With T = interval + pause and L = recomputed work + recovery per
    interruption, interruptions take L / M of the wall time and pauses
    (1 - L / M) x pause / T of it: goodput = (interval / T)(1 - L / M),
    the first-order model of Young (1974) and Daly (2006), Eq 1-3, and of
    Meta's ETTR (arXiv:2410.21680). When failures outpace progress (L >= M)
    goodput is 0 and the loss splits in proportion to L's parts.
    """
    pause = stall_s + checkpoint_wait(interval_s, background_s)
    period = interval_s + pause
    if mtti_s is None:
        return interval_s / period, 0.0, pause / period, 0.0
    lost = recompute_per_interruption(interval_s, stall_s, background_s, lag_s)
    per_interruption = lost + recovery_s
    running = 1.0 - interrupted_share(per_interruption, mtti_s)
    if running <= 0.0:
        return 0.0, lost / per_interruption, 0.0, recovery_s / per_interruption
    return interval_s / period * running, lost / mtti_s, running * pause / period, recovery_s / mtti_s


def goodput(interval_s, stall_s, recovery_s, mtti_s, background_s=0.0, lag_s=None):
    """Fraction of wall time that advances training (time_shares' first part)."""
    return time_shares(interval_s, stall_s, recovery_s, mtti_s, background_s, lag_s)[0]


def optimal_interval(costs, mtti_s):
    """(interval, bound): Daly's optimum for the mode's pause, or the background
    work's time when that is longer (a shorter interval only waits for it);
    bound is "young_daly", "persist" or "replicate". (None, None) without failures."""
    if mtti_s is None:
        return None, None
    daly = daly_interval(costs.stall_s, mtti_s)
    if daly >= costs.background_s:
        return daly, "young_daly"
    return costs.background_s, costs.bound


def planned_stop_share(stops_per_hour, restart_s):
    """Share of wall time planned stops take: each costs a restart but no lost
    work, since the job checkpoints before it stops (Llama 3's 47 planned
    interruptions in 54 days, arXiv:2407.21783 Sec 3.3.4)."""
    return stops_per_hour * restart_s / 3600.0


class FailureFigures:
    """Failure and checkpoint figures of one workload (they do not depend on the layout)."""

    def part_share(self, part_s):
        """A recovery part's share of wall time: its part of the recovery's share
        (None for the parts of a fixed restart time)."""
        if part_s is None:
            return None
        total = self.recovery.total_s
        return self.recovery_share * part_s / total if total > 0.0 else 0.0

    __slots__ = ("interruptions_per_day", "mtti_s", "mode", "checkpoint_bytes", "bytes_per_gpu", "checkpoint_write_s",
                 "snapshot_s", "stall_s", "background_s", "lag_s", "storage_write_bytes_per_s",
                 "replication_bytes_per_s_per_gpu", "recovery_source", "interval_s", "young_s", "daly_s",
                 "optimal_s", "interval_bound", "recovery", "recompute_s", "lost_per_interruption_s",
                 "lost_per_day_s", "goodput", "lost_work_share", "stall_share", "recovery_share", "goodput_at_daly",
                 "goodput_at_optimal", "mode_costs", "mode_interval", "mode_goodput")


def _goodput_at(costs, recovery_s, mtti_s, interval_s):
    return goodput(interval_s, costs.stall_s, recovery_s, mtti_s, costs.background_s, costs.lag_s)


def _best_goodput(costs, recovery_s, mtti_s):
    """Goodput of a mode at its own optimal interval; 1 without failures (no
    checkpoint is needed, so none pauses training)."""
    if mtti_s is None:
        return 1.0
    interval, _ = optimal_interval(costs, mtti_s)
    return _goodput_at(costs, recovery_s, mtti_s, interval) if interval > 0 else 0.0


def _interval_figures(f, costs, recovery_s):
    """Young/Daly for the mode's pause, the bounded optimum and goodput there."""
    if f.mtti_s is None:
        f.young_s = f.daly_s = f.optimal_s = f.interval_bound = None
        f.goodput_at_daly = f.goodput_at_optimal = 1.0
        return
    f.young_s = young_interval(costs.stall_s, f.mtti_s)
    f.daly_s = daly_interval(costs.stall_s, f.mtti_s)
    f.optimal_s, f.interval_bound = optimal_interval(costs, f.mtti_s)
    f.goodput_at_daly = _goodput_at(costs, recovery_s, f.mtti_s, f.daly_s) if f.daly_s > 0 else 0.0
    f.goodput_at_optimal = _goodput_at(costs, recovery_s, f.mtti_s, f.optimal_s) if f.optimal_s > 0 else 0.0


def failure_figures(workload, params, nic_bytes_per_s):
    """Interruption rate, the checkpoint mode's costs, recovery parts, Young/Daly
    and the bounded optimum, goodput and its breakdown for ``workload``.

    Checkpoint bytes: calibration.CHECKPOINT_BYTES_PER_PARAM per parameter.
    Below one interruption per 10^12 hours there is no meaningful mean time to
    interrupt (None), and goodput counts only the checkpoint pauses.
    ``mode_costs``, ``mode_interval`` and ``mode_goodput``: every mode's costs,
    its optimal interval and its goodput there, for the checkpointing decision.
    """
    w = workload
    f = FailureFigures()
    rate = interruptions_per_hour(w.gpus, w.gpu_failures_per_hour)
    f.interruptions_per_day = 24.0 * rate
    f.mtti_s = 3600.0 / rate if rate > 1e-12 else None
    f.mode = w.checkpoint_mode
    f.checkpoint_bytes = params * CHECKPOINT_BYTES_PER_PARAM
    f.bytes_per_gpu = f.checkpoint_bytes / w.gpus
    fixed = None if w.restart_min is None else w.restart_min * 60.0
    f.mode_costs = {mode: mode_costs(mode, f.checkpoint_bytes, w.gpus, w.checkpoint_storage_gbps * 1e9,
                                     w.storage_read_gbps * 1e9, nic_bytes_per_s) for mode in CHECKPOINT_MODES}
    f.mode_interval = {mode: optimal_interval(costs, f.mtti_s)[0] for mode, costs in f.mode_costs.items()}
    f.mode_goodput = {mode: _best_goodput(costs, recovery_parts(w.gpus, costs.load_s, fixed).total_s, f.mtti_s)
                      for mode, costs in f.mode_costs.items()}
    costs = f.mode_costs[f.mode]
    f.recovery = recovery_parts(w.gpus, costs.load_s, fixed)
    f.checkpoint_write_s, f.snapshot_s = costs.write_s, costs.snapshot_s
    f.background_s, f.lag_s, f.recovery_source = costs.background_s, costs.lag_s, costs.recovery_source
    f.interval_s = w.checkpoint_interval_min * 60.0
    f.stall_s = costs.stall_s + checkpoint_wait(f.interval_s, costs.background_s)
    period = f.interval_s + f.stall_s
    f.storage_write_bytes_per_s = costs.storage_bytes_per_checkpoint / period
    f.replication_bytes_per_s_per_gpu = costs.replication_bytes_per_gpu / period
    _interval_figures(f, costs, f.recovery.total_s)
    f.recompute_s = recompute_per_interruption(f.interval_s, costs.stall_s, costs.background_s, costs.lag_s)
    f.lost_per_interruption_s = f.recompute_s + f.recovery.total_s
    f.lost_per_day_s = f.lost_per_interruption_s * f.interruptions_per_day
    f.goodput, f.lost_work_share, f.stall_share, f.recovery_share = time_shares(
        f.interval_s, costs.stall_s, f.recovery.total_s, f.mtti_s, costs.background_s, costs.lag_s)
    return f
