"""Chapter Data parallelism and all-reduce: its numbers, every one computed by lab_core.

``running_example`` is the chapter's model, GPUs and fabric laid out as plain data
parallelism; the collectives chapter and the rules page's worked example
(labsite.examples.data_parallel) time the same all-reduce with it.
"""
import math

from lab_core import calibration as cal, collectives, comms, memory, sync
from lab_core.context import context_for
from lab_core.hardware import GPU_PRESETS, nvlink_busbw_bytes_per_s

from .common import Chapter, case, chapter, evaluate, exercise

EXAMPLE = dict(params=1.3e9, gpus=64, seq_len=2048, global_batch_tokens=1048576, inter_node_gbps=200)
#: Plain data parallelism over every GPU, one sequence per micro-batch, no ZeRO.
LAYOUT = dict(dp=64)
#: The micro-batch sizes of the overlap table.
MICRO_BATCHES = (1, 2, 4, 8)
#: A cluster sixteen times larger, for the latency term and the batch limit.
BIG_GPUS = 1024
#: PyTorch DDP's default bucket (arXiv:2006.15704 Sec 3.2.3), next to the lab's.
DDP_BUCKET_BYTES = 25e6
STACKS = ("megatron_lm_2021", "modern")


def running_example(**changes):
    """(Workload, Report, inputs) of the chapter's example with ``changes`` to its inputs."""
    example = dict(EXAMPLE, **changes)
    w, r = evaluate(example, **LAYOUT)
    return w, r, example


def _ring(values, w, r, example):
    n = w.gpus
    grads = r.params_per_gpu * memory.gradient_bytes_per_param(w.state_bytes_per_param)
    nic = example["inter_node_gbps"] * 1e9 / 8.0 * cal.INTER_NODE_EFFICIENCY
    alpha = collectives.nccl_latency_s(nvlink_busbw_bytes_per_s(GPU_PRESETS["h200_141gb"]))
    buckets = math.ceil(grads / cal.DP_BUCKET_BYTES)
    latency_big = collectives.cost("ring_allreduce", BIG_GPUS, 1.0)[0] * alpha
    values.update({
        "grads": (grads, "bytes"),
        "grad_bytes": (memory.gradient_bytes_per_param(w.state_bytes_per_param), "count"),
        "ring_volume": (collectives.cost("ring_allreduce", n, grads)[1], "bytes"),
        "gbps": (example["inter_node_gbps"], "gbps"),
        "nic": (nic, "bytes"),
        "efficiency": (cal.INTER_NODE_EFFICIENCY, "percent"),
        "flat": (comms.ring_time(grads, n, nic), "duration"),
        "bucket": (cal.DP_BUCKET_BYTES, "bytes"),
        "bucket_busbw": (comms.size_efficiency(cal.DP_BUCKET_BYTES), "percent"),
        "buckets": (buckets, "count"),
        "allreduce": (r.dp_comm_total_s, "duration"),
        "factor_n": (collectives.cost("ring_allreduce", n, 1.0)[1], "plain"),
        "factor_big": (collectives.cost("ring_allreduce", BIG_GPUS, 1.0)[1], "plain"),
        "big_gpus": (BIG_GPUS, "count"),
        "alpha": (alpha * 1e6, "plain"),
        "latency_n": (collectives.cost("ring_allreduce", n, 1.0)[0] * alpha, "duration"),
        "latency_big": (latency_big, "duration"),
        "latency_step_big": (buckets * latency_big, "duration"),
        "latency_share_big": (buckets * latency_big / r.dp_comm_total_s, "plain"),
        "ddp_bucket": (DDP_BUCKET_BYTES, "bytes"),
        "ddp_bucket_busbw": (comms.size_efficiency(DDP_BUCKET_BYTES), "percent"),
    })
    share = values["latency_share_big"][0]
    values["latency_verdict"] = case("matters" if share >= 0.1 else "small", "matters", "small")
    ctx = context_for(w)
    one_bucket = sync.bucket_times(ctx, grads, n, sync.dp_ranks_per_node(ctx, 1, 1, n), 2.0)[1]
    values["last_bucket"] = (one_bucket, "duration")
    values["last_bucket_share"] = (one_bucket / r.step_s, "percent")
    values["bucket_verdict"] = case("small" if one_bucket < 0.05 * r.step_s else "large", "small", "large")


def _stacks(values):
    """The same layout on the 2021 stack and today's, with and without the distributed optimizer."""
    runs = {}
    for stack in STACKS:
        w, r = evaluate(dict(EXAMPLE, stack=stack), **LAYOUT)
        runs[stack] = r
        key = "2021" if stack == "megatron_lm_2021" else "modern"
        values[f"exposed_{key}"] = (r.dp_comm_s, "duration")
        values[f"hidden_{key}"] = (1.0 - r.dp_comm_s / r.dp_comm_total_s, "percent")
        values[f"step_{key}"] = (r.step_s, "duration")
        values[f"mfu_{key}"] = (r.mfu, "percent")
    # The modern stack with the overlap switched off (Workload.grad_reduce_overlap): the reduction waits.
    _, off = evaluate(dict(EXAMPLE, stack="modern", grad_reduce_overlap=False), **LAYOUT)
    values["step_off"] = (off.step_s, "duration")
    values["mfu_off"] = (off.mfu, "percent")
    _, z1 = evaluate(dict(EXAMPLE, stack="modern"), **dict(LAYOUT, zero=1))
    values["exposed_zero1"] = (z1.dp_comm_s, "duration")
    values["total_zero1"] = (z1.dp_comm_total_s, "duration")
    values["step_zero1"] = (z1.step_s, "duration")
    values["mem_zero0"] = (runs["modern"].memory_bytes, "bytes")
    values["mem_zero1"] = (z1.memory_bytes, "bytes")
    old, new = runs["megatron_lm_2021"].dp_comm_s, runs["modern"].dp_comm_s
    values["stack_verdict"] = case("modern_less" if new < old else "modern_more", "modern_less", "modern_more")
    values["overlap"] = (cal.DP_OVERLAP_FRACTION, "percent")
    values["contention"] = (cal.COMM_CONTENTION, "percent")


def _micro_batches(values):
    """How the micro-batch size moves the window the gradient buckets can hide behind."""
    rows = []
    for b in MICRO_BATCHES:
        row = {}
        for stack in STACKS:
            _, r = evaluate(dict(EXAMPLE, stack=stack), **dict(LAYOUT, micro_batch=b))
            row[stack] = r
        r = row["megatron_lm_2021"]
        values[f"mb{b}"] = (b, "count")
        values[f"mb{b}_m"] = (r.micro_batches, "count")
        values[f"mb{b}_window"] = (r.backward_s / r.micro_batches, "duration")
        values[f"mb{b}_exp2021"] = (r.dp_comm_s, "duration")
        values[f"mb{b}_expmodern"] = (row["modern"].dp_comm_s, "duration")
        values[f"mb{b}_act"] = (r.activations_bytes, "bytes")
        values[f"mb{b}_step2021"] = (r.step_s, "duration")
        rows.append(row)
    first, last = rows[0]["megatron_lm_2021"], rows[-1]["megatron_lm_2021"]
    values["mb_verdict"] = case("falls" if last.dp_comm_s < first.dp_comm_s else "stays", "falls", "stays")
    floor = rows[-1]["modern"].dp_comm_s > last.dp_comm_s
    values["mb_modern_verdict"] = case("floor" if floor else "lower", "floor", "lower")
    values["act_growth"] = (last.activations_bytes / first.activations_bytes, "plain")


def _bottleneck(values, w, r):
    _, slow, slow_in = running_example(inter_node_gbps=25)
    _, small, small_in = running_example(global_batch_tokens=262144)
    values.update({
        "slow_gbps": (slow_in["inter_node_gbps"], "gbps"),
        "slow_allreduce": (slow.dp_comm_total_s, "duration"),
        "slow_exposed": (slow.dp_comm_s, "duration"),
        "slow_share": (slow.dp_comm_s / slow.step_s, "percent"),
        "slow_mfu": (slow.mfu, "percent"),
        "small_batch": (small_in["global_batch_tokens"], "tokens"),
        "small_share": (small.dp_comm_s / small.step_s, "percent"),
        "small_mfu": (small.mfu, "percent"),
        "share": (r.dp_comm_s / r.step_s, "percent"),
    })


def _batch_limit(values, w):
    """How many data-parallel replicas the batch allows, and what a bigger cluster gets."""
    seqs = w.batch_sequences
    values["batch_seqs"] = (seqs, "count")
    values["big_per_gpu"] = (seqs / BIG_GPUS, "plain")
    values["batch_verdict"] = case("too_few" if seqs < BIG_GPUS else "enough", "too_few", "enough")


def _chart(w):
    rates = (25, 50, 100, 200, 400, 800, 1600, 3200)
    series = []
    for batch in (EXAMPLE["global_batch_tokens"], 262144):
        points = []
        for gbps in rates:
            _, rr, _ = running_example(global_batch_tokens=batch, inter_node_gbps=gbps)
            points.append((gbps, 100.0 * rr.dp_comm_s / rr.step_s))
        series.append({"key": "batch", "points": points, "label_values": {"tokens": (batch, "tokens")}})
    return {"type": "line", "id": "data_parallel", "series": series, "x_log": True, "y_min": 0.0,
            "text_values": {"params": (w.shape.params, "params"), "gpus": (w.gpus, "count")}}


def _exercises(values):
    for name in ("slow-fabric", "small-batch", "stack-2021", "more-gpus"):
        state = exercise("data_parallel", name)
        key, r, par = name.replace("-", "_"), state.report, state.layout
        values[f"ex_{key}_exposed"] = (r.dp_comm_s, "duration")
        values[f"ex_{key}_total"] = (r.dp_comm_total_s, "duration")
        values[f"ex_{key}_step"] = (r.step_s, "duration")
        values[f"ex_{key}_mfu"] = (r.mfu, "percent")
        values[f"ex_{key}_share"] = (r.dp_comm_s / r.step_s, "percent")
        for field in ("tp", "dp", "zero", "micro_batch"):
            values[f"ex_{key}_{field}"] = (getattr(par, field), "count")
    small = exercise("data_parallel", "small-batch").report
    _, fixed, _ = running_example(global_batch_tokens=exercise("data_parallel", "small-batch").workload.global_batch_tokens)
    lower = small.dp_comm_s / small.step_s < fixed.dp_comm_s / fixed.step_s
    values["ex_small_batch_vs"] = case("lower" if lower else "higher", "lower", "higher")
    values["ex_stack_2021_verdict"] = case("split" if values["ex_stack_2021_tp"][0] > 1 else "plain", "split", "plain")
    more = exercise("data_parallel", "more-gpus")
    values["ex_more_gpus_verdict"] = case("split" if more.layout.tp * more.layout.pp > 1 else "plain", "split", "plain")
    values["ex_more_gpus_seqs"] = (more.workload.batch_sequences, "count")
    values["ex_more_gpus_gpus"] = (more.workload.gpus, "count")


@chapter("data_parallel")
def data_parallel_chapter():
    w, r, example = running_example()
    values = {
        "params": (w.shape.params, "params"),
        "gpus": (w.gpus, "count"),
        "per_node": (w.gpus_per_node, "count"),
        "batch_tokens": (w.global_batch_tokens, "tokens"),
        "per_gpu_seqs": (w.batch_sequences // w.gpus, "count"),
        "micro": (r.micro_batches, "count"),
        "backward": (r.backward_s / r.micro_batches, "duration"),
        "backward_total": (r.backward_s, "duration"),
        "exposed": (r.dp_comm_s, "duration"),
        "step": (r.step_s, "duration"),
        "mfu": (r.mfu, "percent"),
    }
    _ring(values, w, r, example)
    _stacks(values)
    _micro_batches(values)
    _bottleneck(values, w, r)
    _batch_limit(values, w)
    _exercises(values)
    figure_mb = MICRO_BATCHES[1]
    _, fig_run = evaluate(example, **dict(LAYOUT, micro_batch=figure_mb))
    values["figure_mb"] = (figure_mb, "count")
    values["figure_m"] = (fig_run.micro_batches, "count")
    figures = {"overlap": {"params": EXAMPLE["params"], "gpus": EXAMPLE["gpus"], "seq": EXAMPLE["seq_len"],
                           "batch_tokens": EXAMPLE["global_batch_tokens"], "gbps": float(EXAMPLE["inter_node_gbps"]),
                           "micro_batch": figure_mb}}
    return Chapter(values, example, [_chart(w)], figures)
