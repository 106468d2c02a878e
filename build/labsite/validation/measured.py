"""Rows that compare the model with measured figures of content/validation/
published.yaml: per-layer times (the calibration of compute), the failure
rate, checkpoint sizes and NCCL bus bandwidth."""
from lab_core import calibration as cal
from lab_core import comms, failures
from lab_core.hardware import GPU_PRESETS
from lab_core.timing import layer_times

from .facts import GB, GIB, MIB, arxiv
from .table import PageEntry, Row, absolute, rel

#: Korthikanti et al. arXiv:2205.05198 Table 4: row key -> (recompute, sequence parallelism).
TABLE4_MODES = (("baseline_no_recompute", "none", False), ("sequence_parallel", "none", True),
                ("full_recompute", "full", False), ("selective", "selective", False),
                ("selective+sequence", "selective", True))
NCCL_SOURCE = "stas00/ml-engineering network/benchmarks"


def table4_prediction(recompute, sp):
    """Per-layer (fwd, bwd) ms of the 22B model on 8 A100 (arXiv:2205.05198 Table 4 setting)."""
    s, b, h, a, t = 2048, 4, 6144, 64, 8
    dev = GPU_PRESETS["a100_80gb"]
    rate = dev.peak_flops * cal.GEMM_EFFICIENCY["a100_80gb"]
    hbm = dev.hbm_bytes_per_s * cal.HBM_EFFICIENCY
    nvl = dev.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["a100_80gb"]
    lt = layer_times(s, b, h, a, 4 * h, t, sp, recompute, False, rate, hbm, nvl)
    tp_fwd = 2.0 * comms.ring_time(2.0 * b * s * h, t, nvl)
    return (lt.forward + tp_fwd) * 1e3, (lt.backward + lt.recompute + lt.tp_comm - tp_fwd) * 1e3


def table4_rows(facts):
    """Per-layer times of the 22B model: the figures compute efficiency was fitted to (within 10%)."""
    fid = "act.table4.per_layer_time_22B"
    t4 = facts[fid]["published"]["rows"]
    rows = []
    for key, recompute, sp in TABLE4_MODES:
        fwd, bwd = table4_prediction(recompute, sp)
        for part, value, quantity in (("fwd", fwd, "layer_fwd"), ("bwd", bwd, "layer_bwd")):
            rows.append(Row(fid, f"{key} {part} (ms)", value, float(t4[key][part]), rel(0.10), "calibrated",
                            PageEntry("table4", "arXiv:2205.05198 Table 4", arxiv("2205.05198"), quantity, "ms",
                                      "table4", {"mode": key})))
        rows.append(Row(fid, f"{key} total (ms)", fwd + bwd, float(t4[key]["total"]), rel(0.10), "calibrated"))
    return rows


def failure_rows(facts):
    """Llama 3's interruptions: the per-GPU failure rate is fitted to them."""
    fid = "run.llama3_405b.interruptions"
    llama = facts[fid]["published"]
    mtbf = 1.0 / failures.interruptions_per_hour(cal.LLAMA3_GPUS, cal.GPU_FAILURES_PER_HOUR)
    return [
        Row(fid, "MTBF at 16,384 GPUs (h)", mtbf, 54 * 24 / llama["unexpected"], rel(1e-9), "calibrated",
            PageEntry("failures", "arXiv:2407.21783 Table 5", arxiv("2407.21783"), "mtbf", "hours", "mtbf",
                      {"gpus": cal.LLAMA3_GPUS})),
        Row(fid, "MTBF at 16,384 GPUs (h, note)", mtbf, 3.09, absolute(0.01), "calibrated"),
    ]


def checkpoint_rows(facts):
    """Checkpoint sizes: 14 bytes per parameter against Megatron's 1T and BLOOM."""
    fid = "ckpt.sizes_and_times"
    sizes = facts[fid]["published"]
    per_param = cal.CHECKPOINT_BYTES_PER_PARAM
    return [
        Row(fid, "BLOOM-176B bytes/param", float(per_param), float(sizes["bloom_176B"]["bytes_per_param"]),
            absolute(0.0), "formula"),
        Row(fid, "Megatron 1T checkpoint (TB)", 1e12 * per_param / 1e12, float(sizes["megatron_1T"]["size_TB"]),
            rel(0.05), "prediction",
            PageEntry("checkpoints", "arXiv:2104.04473 §5.10", arxiv("2104.04473"), "ckpt_1t", "tb", "ckpt_1t")),
        # BLOOM's checkpoint is smaller than 14 bytes x 176B: the lab overestimates it (the page says so).
        Row(fid, "BLOOM-176B checkpoint (TB)", 176e9 * per_param / 1e12, float(sizes["bloom_176B"]["size_TB"]),
            rel(0.10), "prediction",
            PageEntry("checkpoints", "bigscience tr11-176B-ml README", "", "ckpt_bloom", "tb", "ckpt_bloom")),
    ]


def nccl_rows(facts):
    """NCCL all-reduce bus bandwidth by message size (measured): the fitted curve, within 10%."""
    fid = "hw.nccl_busbw_measured"
    nccl = facts[fid]["published"]
    rows = []

    def add(what, predicted, published, quantity, size):
        rows.append(Row(fid, what, predicted, float(published), rel(0.10), "calibrated",
                        PageEntry("nccl", NCCL_SOURCE, "", quantity, "gbs", "nccl", {"size": size})))

    h200 = GPU_PRESETS["h200_141gb"]
    asym = h200.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["h200_141gb"]
    for label, value in nccl["h200_8gpu_busbw_by_size_GBps"].items():
        size = float(label[:-3]) * (MIB if label.endswith("MiB") else GIB)
        add(f"H200 8-GPU all-reduce busbw {label} (GB/s)", comms.bus_bandwidth(size, asym) / GB, value,
            "busbw_h200", label)
    add("H200 8-GPU all-reduce busbw 16GiB (GB/s)", comms.bus_bandwidth(16 * GIB, asym) / GB,
        nccl["h200_8gpu_allreduce_busbw_16GiB_GBps"]["nccl_tests"], "busbw_h200", "16GiB")
    b200 = GPU_PRESETS["b200_192gb"]
    b_asym = b200.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["b200_192gb"]
    add("B200 1 node busbw 16GiB (GB/s)", comms.bus_bandwidth(16 * GIB, b_asym) / GB, nccl["b200_1node_16GiB_GBps"],
        "busbw_b200_node", "16GiB")
    nic = 400e9 / 8 * cal.INTER_NODE_EFFICIENCY
    size = 16 * GIB
    seconds = comms.group_time(size, 32, 8, b_asym, nic)
    add("B200 4 nodes x 8 busbw 16GiB (GB/s)", 2 * 31 / 32 * size / seconds / GB, nccl["b200_4nodes_32ranks_16GiB_GBps"],
        "busbw_b200_4nodes", "16GiB")
    return rows
