"""Chapter Collectives primer: its numbers, every one computed by lab_core.

The running buffer is the gradient of chapter data_parallel's model (data_parallel.running_example):
the same bytes, GPUs and fabric, so the all-reduce this chapter derives is the one that chapter times.
"""
from lab_core import calibration as cal, collectives, comms, memory
from lab_core.hardware import GPU_PRESETS, nic_bytes_per_s, nvlink_busbw_bytes_per_s

from .common import Chapter, case, chapter, exercise
from .data_parallel import EXAMPLE, running_example

#: Rank counts of the latency comparison: a node, a small cluster, a large one, Llama 3's.
RANKS = (8, 64, 1024, 16384)
#: Message sizes of the bus-bandwidth chart, bytes (64 KB to 4 GB).
SIZES = tuple(65536.0 * 4 ** k for k in range(9))
#: A small message: one layer's tensor-parallel all-reduce for one sequence (16-bit, b s h).
SMALL_SEQ, SMALL_HIDDEN = 2048, 2048
SMALL = 2.0 * SMALL_SEQ * SMALL_HIDDEN
#: The all-to-all example: every GPU of the running cluster sends this much in all.
ALL_TO_ALL_BYTES = 1e9


def _bus_rates(gbps):
    """(series key, asymptotic bus bandwidth in bytes/s, label values) of the chart's links:
    NVLink of an H100 and an A100 node, and the fabric at twice and at the example's rate."""
    return (("h100", nvlink_busbw_bytes_per_s(GPU_PRESETS["h100_80gb"]), {}),
            ("a100", nvlink_busbw_bytes_per_s(GPU_PRESETS["a100_80gb"]), {}),
            ("nic", nic_bytes_per_s(2.0 * gbps), {"gbps": (2.0 * gbps, "gbps")}),
            ("nic", nic_bytes_per_s(gbps), {"gbps": (gbps, "gbps")}))


@chapter("collectives")
def collectives_chapter():
    w, r, example = running_example()
    n, k = w.gpus, w.gpus_per_node
    size = r.params_per_gpu * memory.gradient_bytes_per_param(w.state_bytes_per_param)
    a100, h100 = GPU_PRESETS["a100_80gb"], GPU_PRESETS["h100_80gb"]
    nvl, nic = nvlink_busbw_bytes_per_s(a100), nic_bytes_per_s(example["inter_node_gbps"])
    h100_bus = nvlink_busbw_bytes_per_s(h100)
    alpha = collectives.nccl_latency_s(nvlink_busbw_bytes_per_s(GPU_PRESETS["h200_141gb"]))
    values = {
        "params": (w.shape.params, "params"), "gpus": (n, "count"), "per_node": (k, "count"),
        "nodes": (n // k, "count"), "size": (size, "bytes"), "chunk": (size / 4, "bytes"),
        "gbps": (example["inter_node_gbps"], "gbps"), "nic": (nic, "bytes"), "nvlink": (nvl, "bytes"),
        "alpha": (alpha * 1e6, "plain"),
        "inter_step": (cal.INTER_NODE_STEP_LATENCY_S * 1e6, "plain"),
        "half_size": (collectives.half_bandwidth_bytes(), "bytes"),
        "bucket": (cal.DP_BUCKET_BYTES, "bytes"), "bucket_share": (comms.size_efficiency(cal.DP_BUCKET_BYTES), "percent"),
        "small": (SMALL, "bytes"), "small_share": (comms.size_efficiency(SMALL), "percent"),
        "small_seq": (SMALL_SEQ, "count"), "small_hidden": (SMALL_HIDDEN, "count"),
        "nvlink_line": (a100.nvlink_bytes_per_s, "bytes"),
    }
    for ranks in RANKS:
        steps, moved = collectives.cost("ring_allreduce", ranks, 1.0)
        tree_steps, _ = collectives.cost("tree_allreduce", ranks, 1.0)
        values[f"ranks_{ranks}"] = (ranks, "count")
        values[f"factor_{ranks}"] = (moved, "plain")
        values[f"ring_steps_{ranks}"] = (steps, "count")
        values[f"tree_steps_{ranks}"] = (tree_steps, "count")
        values[f"ring_latency_{ranks}"] = (steps * alpha, "duration")
        values[f"tree_latency_{ranks}"] = (tree_steps * alpha, "duration")
    # A small all-reduce over the largest group: how much of the ring's time is latency.
    big = RANKS[-1]
    small_bw = collectives.cost("ring_allreduce", big, SMALL)[1] / h100_bus
    values["small_ring_bw"] = (small_bw, "duration")
    values["small_ring_total"] = (collectives.alpha_beta_time("ring_allreduce", big, SMALL, alpha, h100_bus), "duration")
    values["small_tree_total"] = (collectives.alpha_beta_time("tree_allreduce", big, SMALL, alpha, h100_bus), "duration")
    values["latency_wins"] = case("ring_slower" if values["small_ring_total"][0] > values["small_tree_total"][0]
                                  else "tree_slower", "ring_slower", "tree_slower")
    # Reduce-scatter, all-gather and all-reduce of the gradient inside one node (NVLink ring).
    values["rs_node"] = (comms.ring_time(size, k, nvl, 1.0), "duration")
    values["ar_node"] = (comms.ring_time(size, k, nvl, 2.0), "duration")
    # In-network reduction: bytes per rank against the ring's, and the lab's H100 NVLink bus bandwidth.
    ring_bytes = collectives.cost("ring_allreduce", k, size)[1]
    values["nvls_saving"] = (ring_bytes / collectives.cost("in_network_allreduce", k, size)[1], "plain")
    values["h100_link"] = (h100.nvlink_bytes_per_s, "bytes")
    values["h100_bus"] = (h100_bus, "bytes")
    values["h100_over_link"] = (h100_bus / h100.nvlink_bytes_per_s, "plain")
    values["nvls_verdict"] = case("above" if h100_bus > h100.nvlink_bytes_per_s else "below", "above", "below")
    values["a100_fraction"] = (cal.NVLINK_BUSBW_FRACTION["a100_80gb"], "percent")
    # Flat ring over the NICs against the hierarchical all-reduce the lab runs (comms.group_time).
    flat = comms.ring_time(size, n, nic)
    hierarchical = comms.group_time(size, n, k, nvl, nic)
    values["flat_bytes"] = (collectives.cost("ring_allreduce", n, size)[1], "bytes")
    values["flat"] = (flat, "duration")
    values["hier_nic_bytes"] = (collectives.cost("ring_allreduce", n // k, size / k)[1], "bytes")
    values["hier_intra"] = (comms.ring_time(size, k, nvl), "duration")
    values["hier_inter"] = (comms.ring_time(size / k, n // k, nic), "duration")
    values["hier"] = (hierarchical, "duration")
    values["serial"] = (cal.HIERARCHICAL_SERIAL_FRACTION, "percent")
    values["hier_speedup"] = (flat / hierarchical, "plain")
    values["bucketed"] = (r.dp_comm_total_s, "duration")
    values["bucket_penalty"] = (r.dp_comm_total_s / hierarchical - 1.0, "percent")
    # All-to-all: the share of each GPU's data that leaves its node, and the time on each link.
    remote = (n - k) / (n - 1.0)
    values["a2a_bytes"] = (ALL_TO_ALL_BYTES, "bytes")
    values["a2a_remote"] = (remote, "percent")
    values["a2a_nic"] = (comms.point_to_point_time(ALL_TO_ALL_BYTES * (n - 1.0) / n * remote, nic), "duration")
    values["a2a_nvlink"] = (comms.point_to_point_time(ALL_TO_ALL_BYTES * (n - 1.0) / n * (1.0 - remote), nvl),
                            "duration")
    values.update(_exercises())
    series = []
    for key, rate, label in _bus_rates(example["inter_node_gbps"]):
        series.append({"key": key, "dashed": key == "nic", "label_values": label,
                       "points": [(s, comms.bus_bandwidth(s, rate) / 1e9) for s in SIZES]})
    chart = {"type": "line", "id": "collectives", "series": series, "x_log": True, "y_log": True, "text_values": {}}
    ring_ranks = 4
    values["ring_ranks"] = (ring_ranks, "count")
    values["ring_rs_steps"] = (collectives.cost("ring_reduce_scatter", ring_ranks, 1.0)[0], "count")
    values["nvl_over_nic"] = (nvl / nic, "plain")
    figures = {"ring": {"message_bytes": size, "ranks": ring_ranks}}
    return Chapter(values, example, [chart], figures)


def _exercises():
    """The answers of the chapter's exercises, from the lab state each one opens."""
    values = {}
    slow = exercise("collectives", "slow-fabric")
    fast = exercise("collectives", "one-node")
    wide = exercise("collectives", "fast-fabric")
    for name, state in (("slow", slow), ("node", fast), ("wide", wide)):
        r = state.report
        values[f"ex_{name}_gbps"] = (state.workload.inter_node_gbps, "gbps")
        values[f"ex_{name}_gpus"] = (state.workload.gpus, "count")
        values[f"ex_{name}_dp"] = (r.dp_comm_s, "duration")
        values[f"ex_{name}_dp_total"] = (r.dp_comm_total_s, "duration")
        values[f"ex_{name}_step"] = (r.step_s, "duration")
        values[f"ex_{name}_share"] = (r.dp_comm_s / r.step_s, "percent")
    values["ex_node_link"] = case(fast.report.dp_link, "nvlink", "inter_node", "none")
    base = EXAMPLE["inter_node_gbps"]
    values["ex_slow_ratio"] = (base / slow.workload.inter_node_gbps, "plain")
    values["ex_wide_ratio"] = (wide.workload.inter_node_gbps / base, "plain")
    return values
