"""Throughput of one step: tokens/s, MFU/HFU and time to train.

MFU counts model FLOPs (arXiv:2205.05198 Appendix A Eq 7, flops.model_flops),
the attention core's whole score matrix included; mfu_causal counts the half a
causal mask keeps once (flops.causal_masked_flops), as Megatron-Core now does:
at long sequences Eq 7's count passes 100% of peak while a causal kernel
computes about half of it;
HFU adds what recompute repeats (flops.recompute_flops). Time to train is the
training tokens at this rate; with failures it is divided by the goodput of
the failure model (failures.py).
"""


class Throughput:
    """Rates of one step and the training time they imply."""

    __slots__ = ("tokens_per_s", "model_flops", "hardware_flops", "model_flops_per_s_per_gpu", "mfu", "mfu_causal", "hfu",
                 "train_time_s", "gpu_hours", "train_time_with_failures_s", "gpu_hours_with_failures")


def throughput(ctx, recompute_flops, step_s):
    """Throughput of a step of step_s seconds that repeats recompute_flops for its recompute."""
    out = Throughput()
    out.tokens_per_s = ctx.tokens_per_step / step_s
    out.model_flops = ctx.model_flops
    out.hardware_flops = ctx.model_flops + recompute_flops
    out.model_flops_per_s_per_gpu = out.model_flops / step_s / ctx.gpus
    out.mfu = out.model_flops_per_s_per_gpu / ctx.peak_flops
    out.mfu_causal = ctx.causal_model_flops / step_s / ctx.gpus / ctx.peak_flops
    out.hfu = out.hardware_flops / step_s / ctx.gpus / ctx.peak_flops
    out.train_time_s = ctx.training_tokens / out.tokens_per_s
    out.gpu_hours = out.train_time_s * ctx.gpus / 3600.0
    out.train_time_with_failures_s, out.gpu_hours_with_failures = with_failures(out.train_time_s, out.gpu_hours,
                                                                                ctx.failures.goodput)
    return out


def with_failures(train_time_s, gpu_hours, goodput):
    """(time, GPU-hours) to train once failures take their share (None when they outpace progress)."""
    if goodput > 0.0:
        return train_time_s / goodput, gpu_hours / goodput
    return None, None
