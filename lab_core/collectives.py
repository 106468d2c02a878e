"""Collectives in the α–β model: latency steps and bytes per rank, by algorithm.

A collective over n ranks costs ``steps · α + bytes · β``: each step pays a
start-up latency α, and the busiest rank moves ``bytes`` at β = 1/bandwidth
(Hockney's model as Thakur, Rabenseifner and Gropp use it, "Optimization of
Collective Communication Operations in MPICH", IJHPCA 2005,
doi:10.1177/1094342005051521, Sec 2 and 4). The evaluation (comms.py) uses
the ring's bandwidth term with a size-dependent bus bandwidth fitted to NCCL;
these functions make the algorithms' terms explicit for teaching and for
comparing algorithms the model does not run.

- Ring reduce-scatter and all-gather: n − 1 steps, (n − 1)/n · S per rank.
- Ring all-reduce (reduce-scatter then all-gather): 2 (n − 1) steps,
  2 (n − 1)/n · S per rank, the lower bound on the bytes a rank must move
  (Patarasuk and Yuan, JPDC 2009, doi:10.1016/j.jpdc.2008.09.002, Sec 3).
- Tree all-reduce (a reduction up a binary tree, then a broadcast down it;
  NCCL's double binary tree gives every rank the same load, Sanders, Speck and
  Träff, Parallel Computing 2009, doi:10.1016/j.parco.2009.09.001, Sec 3):
  2 ⌈log2 n⌉ steps, about 2 S per rank.
- In-network all-reduce (the switch sums: InfiniBand SHARP, Graham et al.,
  COMHPC 2016, doi:10.1109/COMHPC.2016.006; NVLink SHARP on NVSwitch): one
  send and one receive of S per rank, 2 steps.
- All-to-all (pairwise exchange): n − 1 steps, (n − 1)/n · S per rank.
"""
import math

from .calibration import MIB, NCCL_SIZE_C, NCCL_SIZE_D

ALGORITHMS = ("ring_allreduce", "ring_reduce_scatter", "ring_all_gather", "tree_allreduce", "in_network_allreduce",
              "all_to_all")


def cost(algorithm, ranks, size_bytes):
    """(latency steps, bytes per rank) of ``algorithm`` over ``ranks`` ranks on a buffer of ``size_bytes``."""
    n, s = ranks, float(size_bytes)
    if n <= 1:
        return 0, 0.0
    if algorithm == "ring_allreduce":
        return 2 * (n - 1), 2.0 * (n - 1) / n * s
    if algorithm in ("ring_reduce_scatter", "ring_all_gather", "all_to_all"):
        return n - 1, (n - 1.0) / n * s
    if algorithm == "tree_allreduce":
        return 2 * math.ceil(math.log2(n)), 2.0 * s
    if algorithm == "in_network_allreduce":
        return 2, s
    raise ValueError(f"unknown collective algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")


def alpha_beta_time(algorithm, ranks, size_bytes, alpha_s, bytes_per_s):
    """Seconds of ``algorithm`` in the α–β model: steps · α + bytes / bandwidth."""
    steps, moved = cost(algorithm, ranks, size_bytes)
    return steps * alpha_s + moved / bytes_per_s


def nccl_latency_s(bus_bytes_per_s):
    """The per-collective latency the fitted NCCL curve implies at this bus bandwidth:
    calibration.NCCL_SIZE_D MiB at the asymptote (the constant term of
    comms.size_efficiency, about 6 us on H200 NVLink)."""
    return NCCL_SIZE_D * MIB / bus_bytes_per_s


def half_bandwidth_bytes():
    """The message size at which the fitted NCCL curve reaches half its asymptotic bus
    bandwidth: S = C sqrt(S MiB) + D MiB solved for S (comms.size_efficiency = 1/2)."""
    root = (NCCL_SIZE_C + math.sqrt(NCCL_SIZE_C * NCCL_SIZE_C + 4.0 * NCCL_SIZE_D)) / 2.0
    return root * root * MIB
