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


EXAMPLES = {
    "tensor_parallel": tensor_parallel,
    "zero": zero,
    "pipeline": pipeline_example,
    "three_d": three_d,
    "recompute": recompute,
    "checkpoint_interval": checkpoint_interval,
    "failures": failures_example,
    "data_parallel": data_parallel,
}
