"""Recovering from an interruption, part by part: detecting it, restarting the
job, setting up the communicators again and loading the checkpoint (the work
lost since the checkpoint is recomputed afterwards; failures.py counts it).

The parts follow how large runs describe their restarts: MegaScale
(arXiv:2402.15627 Sec 3.5, 6.3: detection and diagnosis, then initialisation
and catching up from the latest checkpoint), Meta's research clusters
(arXiv:2410.21680: a restart overhead of 5-20 minutes) and Llama 3
(arXiv:2407.21783 Sec 3.3.4: "we reduced job startup and checkpointing time").
A fixed restart time (the old single constant, the input ``restart_min``)
replaces all four parts when the reader gives one.
"""
from .calibration import COMM_INIT_S_PER_GPU, RECOVERY_DETECTION_S, RECOVERY_JOB_RESTART_S


def comm_init_s(gpus):
    """Setting up the communicators on ``gpus`` GPUs: linear in the GPU count, as
    after MegaScale's O(n) barrier (arXiv:2402.15627 Sec 3.5: under 5 s on 2,048
    GPUs, under 30 s on more than 10,000); calibration.COMM_INIT_S_PER_GPU."""
    return COMM_INIT_S_PER_GPU * gpus


class RecoveryParts:
    """Seconds per interruption of each recovery part; ``fixed`` when the reader
    gave one restart time (then the parts are None and ``total_s`` is that time)."""

    __slots__ = ("detection_s", "job_restart_s", "comm_init_s", "load_s", "total_s", "fixed")


def recovery_parts(gpus, load_s, fixed_s=None):
    """Detection + job restart + communicator set-up + checkpoint load, or ``fixed_s``.

    Detection and job restart are calibration.RECOVERY_DETECTION_S and
    RECOVERY_JOB_RESTART_S (teaching assumptions with their sources); the
    communicator set-up grows with the GPU count (comm_init_s); the load is the
    checkpoint mode's (checkpoint_modes.ModeCosts.load_s).
    """
    parts = RecoveryParts()
    parts.fixed = fixed_s is not None
    if parts.fixed:
        parts.detection_s = parts.job_restart_s = parts.comm_init_s = parts.load_s = None
        parts.total_s = fixed_s
        return parts
    parts.detection_s = RECOVERY_DETECTION_S
    parts.job_restart_s = RECOVERY_JOB_RESTART_S
    parts.comm_init_s = comm_init_s(gpus)
    parts.load_s = load_s
    parts.total_s = parts.detection_s + parts.job_restart_s + parts.comm_init_s + parts.load_s
    return parts
