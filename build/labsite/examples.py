"""Worked examples for the rules page: every number comes from lab_core.

Each function returns ``{placeholder: (value, kind)}``; the rules page formats
the values per language with lab_view.format_quantity and fills the rule's
``example_text``. Inputs are written once here and shown through the same
formatting, so no number on the page is typed by hand in prose.
"""
import lab_core
from lab_core import activations, failures, flops, memory, pipeline
from lab_core.calibration import GPU_FAILURES_PER_HOUR

from .reference import gpt3, gpt3_workload

# GPT-3 175B on 1,024 A100s (arXiv:2104.04473 Table 1's layout).
GPT3_GPUS = 1024


def tensor_parallel():
    """GPT-3 175B in Narayanan et al.'s layout on the 2021 stack: the tensor-parallel
    chapter's first run (tutorial_values.tensor_parallel.gpt3_runs), one number, one method."""
    from .tutorial_values.tensor_parallel import gpt3_runs
    workload, report = gpt3_runs()["paper"]
    layout = report.parallelism
    return {
        "weights_total": (2.0 * workload.shape.params, "bytes"),
        "device": (report.device_bytes, "bytes"),
        "tp": (layout.tp, "count"),
        "pp": (layout.pp, "count"),
        "weights_per_gpu": (report.weights_bytes, "bytes"),
        "tp_comm": (report.tp_comm_s / report.step_s, "percent"),
        "step": (report.step_s, "duration"),
    }


def zero():
    params, dp = 7.5e9, 64
    values = {f"stage{stage}": (memory.model_state_bytes_per_gpu(params, 16, dp, stage), "bytes") for stage in range(4)}
    return values


def pipeline_example():
    stages, micro, chunks = 8, 32, 4
    return {
        "stages": (stages, "count"),
        "micro": (micro, "count"),
        "chunks": (chunks, "count"),
        "gpipe": (pipeline.gpipe_bubble_share(stages, micro), "percent"),
        "bubble": (pipeline.bubble_fraction(stages, micro), "percent"),
        "interleaved": (pipeline.bubble_fraction(stages, micro, chunks), "percent"),
    }


def three_d():
    gpus, achieved, tokens, params = GPT3_GPUS, 140e12, 300e9, gpt3()["params"]
    return {
        "gpus": (gpus, "count"),
        "achieved": (achieved, "flops"),
        "days": (flops.training_time_eq4(tokens, params, gpus, achieved) / 86400.0, "days"),
    }


def recompute():
    model = gpt3()
    s, b, h, a, t = model["seq_len"], 1, model["hidden"], model["heads"], 8
    return {
        "none": (activations.per_layer_bytes(s, b, h, a, t), "bytes"),
        "sp": (activations.per_layer_bytes(s, b, h, a, t, sequence_parallel=True), "bytes"),
        "selective": (activations.per_layer_bytes(s, b, h, a, t, sequence_parallel=True, recompute="selective"), "bytes"),
        "full": (activations.per_layer_bytes(s, b, h, a, t, recompute="full"), "bytes"),
    }


def checkpoint_interval():
    delta, mtti = 60.0, 3 * 3600.0
    return {
        "delta": (delta, "duration"),
        "mtti": (mtti, "duration"),
        "young": (failures.young_interval(delta, mtti), "duration"),
        "daly": (failures.daly_interval(delta, mtti), "duration"),
    }


def failures_example():
    big, small = 16384, 1024
    per_hour_big = failures.interruptions_per_hour(big, GPU_FAILURES_PER_HOUR)
    per_hour_small = failures.interruptions_per_hour(small, GPU_FAILURES_PER_HOUR)
    return {
        "big": (big, "count"),
        "small": (small, "count"),
        "per_day_big": (24.0 * per_hour_big, "plain"),
        "per_day_small": (24.0 * per_hour_small, "plain"),
        "mtti_big": (3600.0 / per_hour_big, "duration"),
        "mtti_small": (3600.0 / per_hour_small, "duration"),
    }


def data_parallel():
    """The data-parallel chapter's running example and its all-reduce as the lab runs it
    (hierarchical, in buckets; tutorial_values.data_parallel.running_example)."""
    from lab_core import collectives, memory
    from lab_core.calibration import DP_BUCKET_BYTES
    from .tutorial_values.data_parallel import running_example
    workload, report, inputs = running_example()
    grads = report.params_per_gpu * memory.gradient_bytes_per_param(workload.state_bytes_per_param)
    return {
        "params": (workload.shape.params, "params"),
        "grads": (grads, "bytes"),
        "gpus": (workload.gpus, "count"),
        "volume": (collectives.cost("ring_allreduce", workload.gpus, grads)[1], "bytes"),
        "bucket": (DP_BUCKET_BYTES, "bytes"),
        "gbps": (inputs["inter_node_gbps"], "gbps"),
        "time": (report.dp_comm_total_s, "duration"),
    }


def context_parallel():
    """Llama 3 405B's 128K stage as its scenario lays it out: one layer's activations of one
    sequence on a GPU with and without splitting it over the context-parallel ranks
    (lab_core.activations.per_layer_bytes, linear in the tokens with flash attention), and the
    K/V exchange all-gathered as the run did (arXiv:2407.21783 Sec 3.3.2) or passed around
    Megatron-Core's ring (lab_core.step_time.context_parallel_times)."""
    from .tutorial_values.common import evaluate
    from .tutorial_values.scenario_runs import published_run
    workload, layout = published_run("llama3-405b-128k")
    w, r = evaluate(workload, **layout)
    _, ring = evaluate(dict(workload, cp_all_gather=False), **layout)
    sh, t, cp = w.shape, layout["tp"], layout["cp"]

    def layer_bytes(tokens):
        return activations.per_layer_bytes(tokens, 1, sh.hidden, sh.heads, t, True, "none", True,
                                           ffn_hidden=sh.ffn_hidden, kv_ratio=sh.kv_ratio, dropout=w.dropout)

    return {
        "seq": (w.seq_len, "count"), "gpus": (w.gpus, "count"),
        "tp": (t, "count"), "cp": (cp, "count"), "pp": (layout["pp"], "count"),
        "layer_act": (layer_bytes(w.seq_len), "bytes"), "layer_act_cp": (layer_bytes(w.seq_len // cp), "bytes"),
        "cp_total": (r.cp_comm_total_s, "duration"), "cp_exposed": (r.cp_comm_s, "duration"),
        "step": (r.step_s, "duration"), "ring_exposed": (ring.cp_comm_s, "duration"),
    }


def expert_parallel():
    """DeepSeek-V3's published run (its scenario's layout), and the same layout without
    expert parallelism (lab_core.moe, step_time.expert_alltoall_times)."""
    from .tutorial_values.common import evaluate
    from .tutorial_values.scenario_runs import published_run
    workload, layout = published_run("deepseek-v3")
    w, r = evaluate(workload, **layout)
    _, no_ep = evaluate(workload, **dict(layout, ep=1))
    experts = w.shape.experts
    return {
        "params": (w.shape.params, "params"), "active": (w.shape.active_params, "params"),
        "tp": (layout["tp"], "count"), "pp": (layout["pp"], "count"), "dp": (layout["dp"], "count"),
        "ep": (layout["ep"], "count"), "experts": (experts.count, "count"),
        "experts_per_gpu": (experts.count // layout["ep"], "count"),
        "mem": (r.memory_bytes, "bytes"), "no_ep_mem": (no_ep.memory_bytes, "bytes"),
        "device": (w.gpu_memory_bytes, "bytes"),
        "ep_total": (r.ep_comm_total_s, "duration"), "ep_exposed": (r.ep_comm_s, "duration"),
        "step": (r.step_s, "duration"),
    }


EXAMPLES = {
    "tensor_parallel": tensor_parallel,
    "zero": zero,
    "pipeline": pipeline_example,
    "three_d": three_d,
    "recompute": recompute,
    "checkpoint_interval": checkpoint_interval,
    "failures": failures_example,
    "data_parallel": data_parallel,
    "context_parallel": context_parallel,
    "expert_parallel": expert_parallel,
}
