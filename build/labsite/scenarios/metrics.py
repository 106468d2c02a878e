"""The figures a scenario may publish (``published[].metric``) and how the lab
predicts each from ``Report.to_dict()``. The schema's ``metric`` choices are
these names (a test keeps them equal)."""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Metric:
    """A published figure the lab also predicts.

    ``path``: keys into Report.to_dict(); ``scale`` turns that value into the
    metric's unit; ``per_gpu`` divides by the GPU count first.
    """

    name: str
    unit: str  # key of the catalog's unit patterns
    path: tuple
    scale: float = 1.0
    per_gpu: bool = False
    per_step: bool = False
    maximum: float = 1e12


METRICS = {m.name: m for m in (
    # TFLOP/s per GPU counting recomputed work (Megatron's Eq 3 convention).
    Metric("hardware_tflops_per_gpu", "tflops", ("throughput", "hardware_flops_per_step"), 1e-12, per_gpu=True,
           per_step=True, maximum=10000),
    # TFLOP/s per GPU counting the model's FLOPs only (MFU's numerator).
    Metric("model_tflops_per_gpu", "tflops", ("throughput", "model_flops_per_s_per_gpu"), 1e-12, maximum=10000),
    Metric("mfu_percent", "percent", ("throughput", "mfu"), 100.0, maximum=100),
    Metric("step_time_s", "seconds", ("time", "step_s"), maximum=1e6),    # per optimizer step (iteration)
    Metric("tokens_per_s", "tokens_per_s", ("throughput", "tokens_per_s"), maximum=1e12),   # whole cluster
    Metric("tokens_per_s_per_gpu", "tokens_per_s", ("throughput", "tokens_per_s"), per_gpu=True, maximum=1e9),
    # Peak memory of the most loaded GPU, GiB (2^30 bytes).
    Metric("memory_gib", "gib", ("memory", "total_bytes"), 1.0 / 1073741824.0, maximum=1e5),
    # The same peak as the caching allocator reserves it (what torch.cuda.max_memory_reserved reports), GiB.
    Metric("reserved_memory_gib", "gib", ("memory", "reserved_bytes"), 1.0 / 1073741824.0, maximum=1e5),
    # Days to train on the workload's training_tokens, without failures.
    Metric("training_days", "days", ("training", "time_s"), 1.0 / 86400.0, maximum=1e5),
)}


def predicted(metric, report_dict, gpus):
    """The lab's value of ``metric`` from ``Report.to_dict()``, in the metric's unit."""
    value = report_dict
    for key in metric.path:
        value = value[key]
    if metric.per_step:
        value = value / report_dict["time"]["step_s"]
    if metric.per_gpu:
        value = value / gpus
    return value * metric.scale
