"""Chapter Data parallelism and all-reduce: its numbers, every one computed by lab_core."""
from lab_core import comms, memory, calibration as cal

from .common import Chapter, chapter, evaluate


@chapter("data_parallel")
def data_parallel_chapter():
    example = dict(params=1.3e9, gpus=64, seq_len=2048, global_batch_tokens=1048576, inter_node_gbps=200)
    w, r = evaluate(example, dp=64)
    n = w.gpus
    grads = r.params_per_gpu * memory.gradient_bytes_per_param(w.state_bytes_per_param)
    slow = dict(example, inter_node_gbps=25)
    _, r_slow = evaluate(slow, dp=64)
    small = dict(example, global_batch_tokens=262144)
    _, r_small = evaluate(small, dp=64)
    nic = example["inter_node_gbps"] * 1e9 / 8.0 * cal.INTER_NODE_EFFICIENCY
    values = {
        "params": (w.shape.params, "params"),
        "gpus": (n, "count"),
        "batch_tokens": (w.global_batch_tokens, "tokens"),
        "per_gpu_seqs": (w.batch_sequences // n, "count"),
        "grads": (grads, "bytes"),
        "grad_bytes": (memory.gradient_bytes_per_param(w.state_bytes_per_param), "count"),
        "ring_volume": (2.0 * (n - 1) / n * grads, "bytes"),
        "gbps": (example["inter_node_gbps"], "gbps"),
        "efficiency": (cal.INTER_NODE_EFFICIENCY, "percent"),
        "bucket": (cal.DP_BUCKET_BYTES, "bytes"),
        "bucket_busbw": (comms.size_efficiency(cal.DP_BUCKET_BYTES), "percent"),
        "overlap": (cal.DP_OVERLAP_FRACTION, "percent"),
        "ideal_ring": (2.0 * (n - 1) / n * grads / nic, "duration"),
        "allreduce": (r.dp_comm_total_s, "duration"),
        "backward": (r.backward_s / r.micro_batches, "duration"),
        "exposed": (r.dp_comm_s, "duration"),
        "step": (r.step_s, "duration"),
        "mfu": (r.mfu, "percent"),
        "slow_gbps": (slow["inter_node_gbps"], "gbps"),
        "slow_allreduce": (r_slow.dp_comm_total_s, "duration"),
        "slow_exposed": (r_slow.dp_comm_s, "duration"),
        "slow_share": (r_slow.dp_comm_s / r_slow.step_s, "percent"),
        "slow_mfu": (r_slow.mfu, "percent"),
        "small_batch": (small["global_batch_tokens"], "tokens"),
        "small_share": (r_small.dp_comm_s / r_small.step_s, "percent"),
        "small_mfu": (r_small.mfu, "percent"),
    }
    rates = (25, 50, 100, 200, 400, 800, 1600, 3200)
    series = []
    for key, batch in (("batch", example["global_batch_tokens"]), ("batch", small["global_batch_tokens"])):
        points = []
        for gbps in rates:
            _, rr = evaluate(dict(example, global_batch_tokens=batch, inter_node_gbps=gbps), dp=64)
            points.append((gbps, 100.0 * rr.dp_comm_s / rr.step_s))
        series.append({"key": key, "points": points, "label_values": {"tokens": (batch, "tokens")}})
    chart = {"type": "line", "id": "data_parallel", "series": series, "x_log": True, "y_min": 0.0,
             "text_values": {"params": (w.shape.params, "params"), "gpus": (n, "count")}}
    return Chapter(values, example, [chart])
