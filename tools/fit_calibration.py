"""Reproduce the A100 and recovery calibration of lab_core/calibration.py (standalone).

A least-squares search over a grid (scipy.optimize.brute: the constants are
kept on round steps, as a reader can check them) of GEMM efficiency,
element-wise traffic, backward element-wise ratio, TP backward overlap and
A100 NVLink all-reduce efficiency, minimising the squared relative error of
the 10 per-layer times (fwd, bwd) of the 22B model in Korthikanti et al.
arXiv:2205.05198 Table 4; then the overlap fraction (DP_OVERLAP_FRACTION) on
the six DeepSpeed ZeRO-3 rows of arXiv:2104.04473 Table 2 (fit_overlap). The
figures and the predictions are the validation table's (labsite.validation).
The checkpoint snapshot pause (ByteCheckpoint's Table 8) and the communicator
set-up per GPU (MegaScale) are fitted too (fit_recovery), and the caching
allocator's reserved-over-allocated ratio on torchtitan's Table 1 memory
readings (fit_reserved_ratio). The modern stacks' constants:
labtools.fit_modern_stack.
Run: python -m labtools.fit_calibration
"""
import numpy as np
from scipy.optimize import brute

from lab_core import calibration as cal
from labsite.validation import end_to_end_runs, load_facts, table4_prediction
from labsite.validation.measured import TABLE4_MODES


def table4_published():
    """``{(recompute, sequence_parallel): (fwd ms, bwd ms)}`` of Table 4."""
    rows = load_facts()["act.table4.per_layer_time_22B"]["published"]["rows"]
    return {(recompute, sp): (rows[key]["fwd"], rows[key]["bwd"]) for key, recompute, sp in TABLE4_MODES}


def loss(published):
    total = 0.0
    for key, (f, b) in published.items():
        pf, pb = table4_prediction(*key)
        total += ((pf - f) / f) ** 2 + ((pb - b) / b) ** 2
    return total


def fit_overlap():
    """DP_OVERLAP_FRACTION in hundredths minimising the squared log error of the
    ZeRO-3 rows (content/validation/end_to_end.yaml, group table2_zero3)."""
    runs = [run for run in end_to_end_runs() if run.group["id"] == "table2_zero3"]
    saved = cal.DP_OVERLAP_FRACTION

    def cost(x):
        cal.DP_OVERLAP_FRACTION = float(x[0])
        return float(np.sum(np.log([run.predicted() / run.published for run in runs]) ** 2))

    try:
        return round(float(brute(cost, (slice(0.05, 1.0, 0.01),), finish=None)), 2)
    finally:
        cal.DP_OVERLAP_FRACTION = saved


def fit_reserved_ratio():
    """ALLOCATOR_RESERVED_RATIO in hundredths: the geometric mean of the reserved readings over the lab's
    allocated peak of the same runs (content/validation/end_to_end.yaml, group torchtitan_memory_fit)."""
    runs = [run for run in end_to_end_runs() if run.group["id"] == "torchtitan_memory_fit"]
    ratios = [run.published / (run.predicted() / cal.ALLOCATOR_RESERVED_RATIO) for run in runs]
    return round(float(np.exp(np.mean(np.log(ratios)))), 2)


def _set_table4(g, e, k, o, n):
    cal.GEMM_EFFICIENCY["a100_80gb"] = g
    cal.ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE = e
    cal.BACKWARD_ELEMENTWISE_RATIO = k
    cal.TP_BACKWARD_OVERLAP = o
    cal.NVLINK_BUSBW_FRACTION["a100_80gb"] = n


def fit_recovery():
    """(snapshot overhead s, snapshot bytes/s, communicator set-up s per GPU): the
    line through ByteCheckpoint's two blocking times (arXiv:2407.20143 Table 8)
    against each GPU's share of the checkpoint, and MegaScale's 2,048-GPU
    initialisation time over its GPU count (arXiv:2402.15627 Sec 3.5)."""
    facts = load_facts()
    table8 = facts["bytecheckpoint.table8"]
    points = []
    for key in ("text_405b", "vit_7b"):
        setup = table8["inputs"][key]
        points.append((setup["params"] * cal.CHECKPOINT_BYTES_PER_PARAM / setup["gpus"],
                       table8["published"][key]["blocking_s"]))
    (b1, t1), (b2, t2) = points
    seconds_per_byte = (t1 - t2) / (b1 - b2)
    overhead = t2 - b2 * seconds_per_byte
    init = facts["megascale.init_time"]["published"]["optimized_2048_s"] / 2048
    return overhead, 1.0 / seconds_per_byte, init


def fit(published):
    """(loss, GEMM efficiency, element-wise traffic, backward ratio, TP overlap, NVLink fraction)."""
    grid = (slice(0.60, 0.89, 0.02), slice(0.5, 4.01, 0.5), slice(0.5, 3.01, 0.2), slice(0.0, 1.01, 0.2),
            slice(0.50, 1.001, 0.05))

    def cost(x):
        _set_table4(*(float(v) for v in x))
        return loss(published)

    best = [round(float(v), 2) for v in brute(cost, grid, finish=None)]
    _set_table4(*best)
    return (loss(published), *best)


def _print_table4(published):
    for key, (f, b) in published.items():
        pf, pb = table4_prediction(*key)
        print(f"  {key}: fwd {pf:.2f} vs {f}  bwd {pb:.2f} vs {b}")


def main():
    published = table4_published()
    print("current constants:")
    _print_table4(published)
    best = fit(published)
    print("best fit: loss=%.5f GEMM_EFFICIENCY=%.2f ELEMENTWISE=%.2f BACKWARD_RATIO=%.2f "
          "TP_OVERLAP=%.2f NVLINK_FRACTION=%.2f" % best)
    _print_table4(published)
    print(f"caching allocator reserved / allocated fitted on torchtitan's Table 1: {fit_reserved_ratio():.2f} "
          f"(calibration.py: {cal.ALLOCATOR_RESERVED_RATIO:.2f})")
    print(f"overlap fraction fitted on the ZeRO-3 rows: {fit_overlap():.2f} "
          f"(lab_core.calibration.DP_OVERLAP_FRACTION = {cal.DP_OVERLAP_FRACTION})")
    overhead, rate, init = fit_recovery()
    print(f"checkpoint snapshot: {overhead:.3f} s + bytes / {rate / 1e9:.2f} GB/s "
          f"(calibration: {cal.CHECKPOINT_SNAPSHOT_OVERHEAD_S} s, {cal.CHECKPOINT_SNAPSHOT_BYTES_PER_S / 1e9} GB/s); "
          f"communicator set-up {init * 1e3:.3f} ms per GPU (calibration: {cal.COMM_INIT_S_PER_GPU * 1e3:.3f})")


if __name__ == "__main__":
    main()
