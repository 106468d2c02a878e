"""Collective communication time: ring volumes and size-dependent bandwidth.

Ring all-reduce moves 2 (n - 1) / n of the message per rank, reduce-scatter
and all-gather (n - 1) / n (Rajbhandari et al. arXiv:1910.02054 Sec 7.1;
NVIDIA/nccl-tests doc/PERFORMANCE.md busbw definition). The bus bandwidth a
collective reaches depends on message size (calibration.NCCL_SIZE_*).
"""
import math

from .calibration import (HIERARCHICAL_SERIAL_FRACTION, INTER_NODE_STEP_LATENCY_S, MIB, NCCL_SIZE_C,
                          NCCL_SIZE_D)


def size_efficiency(size_bytes):
    """Fraction of asymptotic bus bandwidth reached at this message size.

    Source: fit to hw.nccl_busbw_measured (H200 all-reduce busbw by size),
    S / (S + C sqrt(S MiB) + D MiB); see calibration.py.
    """
    if size_bytes <= 0.0:
        return 1.0
    return size_bytes / (size_bytes + NCCL_SIZE_C * math.sqrt(size_bytes * MIB) + NCCL_SIZE_D * MIB)


def bus_bandwidth(size_bytes, asymptote_bytes_per_s):
    """Bus bandwidth (bytes/s) of a collective of this message size."""
    return asymptote_bytes_per_s * size_efficiency(size_bytes)


def ring_time(size_bytes, ranks, asymptote_bytes_per_s, volume_factor=2.0):
    """Seconds for a ring collective: volume_factor (n - 1)/n * S / busbw(S).

    volume_factor is 2 for all-reduce and 1 for reduce-scatter or all-gather
    (arXiv:1910.02054 Sec 7.1; nccl-tests PERFORMANCE.md).
    """
    if ranks <= 1 or size_bytes <= 0.0:
        return 0.0
    return volume_factor * (ranks - 1.0) / ranks * size_bytes / bus_bandwidth(size_bytes, asymptote_bytes_per_s)


def group_time(size_bytes, ranks, ranks_per_node, intra_bytes_per_s, inter_bytes_per_s, volume_factor=2.0):
    """A collective over `ranks` GPUs, `ranks_per_node` of them sharing a node.

    Inside one node it is a ring over NVLink. Across nodes it is hierarchical
    (NCCL-style): a reduce-scatter/all-gather inside the node over NVLink and a
    ring over the nodes on each GPU's NIC carrying 1/k of the data; the two
    overlap partly (calibration.HIERARCHICAL_SERIAL_FRACTION). The ring over
    the nodes also pays a latency per step, volume_factor (nodes - 1) steps of
    calibration.INTER_NODE_STEP_LATENCY_S, as NCCL's tuner counts them
    (src/graph/tuning.cc): the size curve alone, measured inside one node,
    would make a ring over a thousand nodes as fast as one over two.
    """
    if ranks <= 1 or size_bytes <= 0.0:
        return 0.0
    k = ranks_per_node if ranks_per_node < ranks else ranks
    if k >= ranks:
        return ring_time(size_bytes, ranks, intra_bytes_per_s, volume_factor)
    nodes = ranks / k
    inter = (ring_time(size_bytes / k, nodes, inter_bytes_per_s, volume_factor)
             + volume_factor * (nodes - 1.0) * INTER_NODE_STEP_LATENCY_S)
    intra = ring_time(size_bytes, k, intra_bytes_per_s, volume_factor) if k > 1 else 0.0
    if inter >= intra:
        return inter + HIERARCHICAL_SERIAL_FRACTION * intra
    return intra + HIERARCHICAL_SERIAL_FRACTION * inter


def point_to_point_time(size_bytes, asymptote_bytes_per_s):
    """Seconds to send one message between two GPUs (pipeline stages)."""
    if size_bytes <= 0.0:
        return 0.0
    return size_bytes / bus_bandwidth(size_bytes, asymptote_bytes_per_s)
