"""Checkpoint modes: what one checkpoint costs the training loop, what keeps
running in the background, and where a restart reads the checkpoint from.

  blocking   training waits while the checkpoint is copied off the GPUs and
             written to storage (torch.save / synchronous distributed
             checkpointing: the 2021-2023 published runs).
  async      training waits only for the device-to-host snapshot; a
             background process writes it to storage, and that write must
             finish before the next checkpoint starts (torch Distributed
             Checkpoint async_save, Megatron-LM --async-save, torchtitan
             async_mode; PyTorch blog "Reducing Model Checkpointing Times by
             Over 10x", 2024; MegaScale arXiv:2402.15627 Sec 4.4).
  in_memory  the snapshot is copied to a peer machine's host memory, and a
             restart reads it from there; storage is written every
             calibration.IN_MEMORY_PERSIST_EVERY checkpoints (GEMINI, SOSP'23,
             doi:10.1145/3600006.3613145 Sec 2.2, 4).

The checkpoint is written by all GPUs in parallel, each its 1/N share
(Megatron-Core fully parallel save, torch DCP's de-duplicating save plan), so
a GPU's shard is the checkpoint over the GPU count whatever the layout.
"""
from .calibration import (CHECKPOINT_SNAPSHOT_BYTES_PER_S, CHECKPOINT_SNAPSHOT_OVERHEAD_S, IN_MEMORY_COPIES,
                          IN_MEMORY_PERSIST_EVERY)

CHECKPOINT_MODES = ("blocking", "async", "in_memory")
#: What bounds the checkpoint interval from below when it is not Young/Daly.
BACKGROUND_BOUNDS = {"blocking": None, "async": "persist", "in_memory": "replicate"}


def snapshot_s(bytes_per_gpu):
    """Pause of the device-to-host copy of one GPU's shard (the first phase of an
    async save; the PyTorch async-checkpoint blog calls it "the visible downtime").

    Fixed part plus bytes at an effective rate, both fitted to ByteCheckpoint's
    blocking times (arXiv:2407.20143 Table 8; calibration.CHECKPOINT_SNAPSHOT_*).
    """
    return CHECKPOINT_SNAPSHOT_OVERHEAD_S + bytes_per_gpu / CHECKPOINT_SNAPSHOT_BYTES_PER_S


def storage_write_s(checkpoint_bytes, write_bytes_per_s):
    """Writing the whole checkpoint at the storage's aggregate write bandwidth
    (every GPU writes its shard at once; Llama 3's storage sustains 2 TB/s,
    arXiv:2407.21783 Sec 3.3.1)."""
    return checkpoint_bytes / write_bytes_per_s


def replication_s(bytes_per_gpu, nic_bytes_per_s):
    """Sending a GPU's snapshot to the peers that keep the other copies, over the
    inter-node fabric: (copies - 1) x shard / NIC bandwidth (GEMINI Sec 4)."""
    return (IN_MEMORY_COPIES - 1) * bytes_per_gpu / nic_bytes_per_s


def storage_load_s(checkpoint_bytes, read_bytes_per_s):
    """Reading the checkpoint back from storage: each byte once at the aggregate read
    bandwidth (MegaScale Sec 4.4: one worker per data-parallel group reads its
    shard and broadcasts it, so replicas do not multiply the reads)."""
    return checkpoint_bytes / read_bytes_per_s


def memory_load_s(bytes_per_gpu, nic_bytes_per_s):
    """Restoring from host memory: the replacement machine fetches its shard from a
    peer over the fabric, and every GPU copies its shard back from host memory
    (taken as long as the snapshot). GEMINI Sec 2.2: retrieval from CPU memory
    instead of remote storage."""
    return bytes_per_gpu / nic_bytes_per_s + snapshot_s(bytes_per_gpu)


class ModeCosts:
    """The costs of one checkpoint in one mode (seconds, bytes).

    stall_s: the pause each checkpoint costs the training loop;
    background_s: work that must finish before the next checkpoint may start
    (the lower bound on the interval; 0 for blocking);
    lag_s: from the snapshot until the checkpoint survives a failure;
    replicate_s: copying the snapshot to peers (in_memory only, else 0);
    load_s: reading it back at a restart; recovery_source: "storage" or "memory".
    """

    __slots__ = ("mode", "snapshot_s", "write_s", "replicate_s", "stall_s", "background_s", "bound", "lag_s",
                 "load_s", "recovery_source", "storage_bytes_per_checkpoint", "replication_bytes_per_gpu")


def mode_costs(mode, checkpoint_bytes, gpus, write_bytes_per_s, read_bytes_per_s, nic_bytes_per_s):
    """ModeCosts of ``mode`` for a checkpoint of ``checkpoint_bytes`` spread over ``gpus``."""
    c = ModeCosts()
    per_gpu = checkpoint_bytes / gpus
    c.mode = mode
    c.snapshot_s = snapshot_s(per_gpu)
    c.write_s = storage_write_s(checkpoint_bytes, write_bytes_per_s)
    c.bound = BACKGROUND_BOUNDS[mode]
    c.storage_bytes_per_checkpoint = checkpoint_bytes
    c.replication_bytes_per_gpu = 0.0
    c.replicate_s = 0.0
    c.recovery_source = "storage"
    c.load_s = storage_load_s(checkpoint_bytes, read_bytes_per_s)
    if mode == "blocking":
        # Copy off the GPU and write, all while training waits (the PyTorch
        # blog's synchronous "down time" is both phases).
        c.stall_s = c.snapshot_s + c.write_s
        c.background_s = 0.0
        c.lag_s = c.stall_s
    elif mode == "async":
        c.stall_s = c.snapshot_s
        c.background_s = c.write_s
        c.lag_s = c.snapshot_s + c.write_s
    else:
        c.replicate_s = replication_s(per_gpu, nic_bytes_per_s)
        persist = c.write_s / IN_MEMORY_PERSIST_EVERY
        c.stall_s = c.snapshot_s
        # The storage write spreads over IN_MEMORY_PERSIST_EVERY intervals.
        c.background_s = max(c.replicate_s, persist)
        if persist > c.replicate_s:
            c.bound = "persist"
        c.lag_s = c.snapshot_s + c.replicate_s
        c.storage_bytes_per_checkpoint = checkpoint_bytes / IN_MEMORY_PERSIST_EVERY
        c.replication_bytes_per_gpu = (IN_MEMORY_COPIES - 1) * per_gpu
        c.recovery_source = "memory"
        c.load_s = memory_load_s(per_gpu, nic_bytes_per_s)
    return c
