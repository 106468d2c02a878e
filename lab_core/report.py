"""The result of evaluate(): flat attributes for speed, a stable nested dict for JSON.

All values are SI: bytes, seconds, FLOP, FLOP/s, tokens, ratios. Values that
do not exist (e.g. the mean time to interrupt when the failure rate is 0) are
None.
"""
from .pipeline import bubble_fraction

# (group, key in the dict, attribute). The order is the order of to_dict().
LAYOUT = (
    ("memory", (
        ("weights_bytes", "weights_bytes"),
        ("gradients_bytes", "gradients_bytes"),
        ("optimizer_bytes", "optimizer_bytes"),
        ("activations_bytes", "activations_bytes"),
        ("total_bytes", "memory_bytes"),
        ("device_bytes", "device_bytes"),
        ("headroom_bytes", "headroom_bytes"),
        ("shortfall_bytes", "shortfall_bytes"),
        ("ratio", "memory_ratio"),
        ("fits", "fits"),
        ("params_per_gpu", "params_per_gpu"),
        ("activations_per_layer_bytes", "activations_per_layer_bytes"),
        ("activations_working_bytes", "activations_working_bytes"),
        ("stage", "memory_stage"),
    )),
    ("time", (
        ("step_s", "step_s"),
        ("forward_s", "forward_s"),
        ("backward_s", "backward_s"),
        ("recompute_s", "recompute_s"),
        ("tp_comm_s", "tp_comm_s"),
        ("tp_comm_total_s", "tp_comm_total_s"),
        ("cp_comm_s", "cp_comm_s"),
        ("cp_comm_total_s", "cp_comm_total_s"),
        ("ep_comm_s", "ep_comm_s"),
        ("ep_comm_total_s", "ep_comm_total_s"),
        ("pp_p2p_s", "pp_p2p_s"),
        ("pp_p2p_total_s", "pp_p2p_total_s"),
        ("pipeline_bubble_s", "pipeline_bubble_s"),
        ("dp_comm_s", "dp_comm_s"),
        ("dp_comm_total_s", "dp_comm_total_s"),
        ("zero_comm_s", "zero_comm_s"),
        ("zero_comm_total_s", "zero_comm_total_s"),
        ("optimizer_s", "optimizer_s"),
        ("micro_batches", "micro_batches"),
        ("bubble_fraction", "bubble_fraction"),
        ("dp_link", "dp_link"),
        ("bottleneck_stage", "bottleneck_stage"),
    )),
    ("throughput", (
        ("tokens_per_step", "tokens_per_step"),
        ("tokens_per_s", "tokens_per_s"),
        ("model_flops_per_step", "model_flops_per_step"),
        ("hardware_flops_per_step", "hardware_flops_per_step"),
        ("model_flops_per_s_per_gpu", "model_flops_per_s_per_gpu"),
        ("mfu", "mfu"),
        ("hfu", "hfu"),
    )),
    ("training", (
        ("tokens", "training_tokens"),
        ("time_s", "train_time_s"),
        ("gpu_hours", "gpu_hours"),
        ("time_with_failures_s", "train_time_with_failures_s"),
        ("gpu_hours_with_failures", "gpu_hours_with_failures"),
    )),
    ("data", (
        ("required_tokens_per_s", "tokens_per_s"),
        ("loader_tokens_per_s", "loader_tokens_per_s"),
        ("loader_ratio", "loader_ratio"),
        ("required_read_bytes_per_s", "required_read_bytes_per_s"),
        ("storage_read_bytes_per_s", "storage_read_bytes_per_s"),
        ("storage_ratio", "storage_ratio"),
    )),
    ("failures", (
        ("interruptions_per_day", "interruptions_per_day"),
        ("mean_time_to_interrupt_s", "mtti_s"),
        ("checkpoint_bytes", "checkpoint_bytes"),
        ("checkpoint_write_s", "checkpoint_write_s"),
        ("young_interval_s", "young_interval_s"),
        ("daly_interval_s", "daly_interval_s"),
        ("interval_s", "checkpoint_interval_s"),
        ("lost_work_per_interruption_s", "lost_work_per_interruption_s"),
        ("lost_work_per_day_s", "lost_work_per_day_s"),
        ("goodput", "goodput"),
        ("goodput_at_daly", "goodput_at_daly"),
    )),
)

_ATTRS = tuple(attr for _, rows in LAYOUT for _, attr in rows)


class Report:
    """Everything evaluate() found for one workload and parallelism.

    Read attributes directly in hot loops (report.step_s, report.fits, ...);
    call to_dict() for the JSON shape {parallelism, shape, memory, time,
    throughput, training, data, failures}.
    """

    __slots__ = ("parallelism", "shape") + tuple(sorted(set(_ATTRS)))

    def to_dict(self):
        out = {"parallelism": self.parallelism.to_dict(), "shape": self.shape.to_dict()}
        for group, rows in LAYOUT:
            out[group] = {key: getattr(self, attr) for key, attr in rows}
        return out


def assemble(ctx, par, micro_batches, memory, micro_batch, pipe, sync, step_s, rates, data):
    """The Report of one evaluated layout, from the records of each step of evaluate()."""
    r = Report()
    m = micro_batches
    device = ctx.device_bytes
    total = memory.total
    r.parallelism = par
    r.shape = ctx.workload.shape
    r.weights_bytes = memory.weights
    r.gradients_bytes = memory.gradients
    r.optimizer_bytes = memory.optimizer
    r.activations_bytes = memory.activations
    r.activations_per_layer_bytes = memory.activations_per_layer
    r.activations_working_bytes = memory.activations_working
    r.memory_bytes = total
    r.device_bytes = device
    r.headroom_bytes = device - total if total < device else 0.0
    r.shortfall_bytes = total - device if total > device else 0.0
    r.memory_ratio = total / device
    r.fits = total <= device
    r.params_per_gpu = memory.params_per_gpu
    r.memory_stage = memory.stage

    r.step_s = step_s
    r.forward_s = m * micro_batch.forward
    r.backward_s = m * micro_batch.backward
    r.recompute_s = m * micro_batch.recompute
    r.tp_comm_s = m * micro_batch.tp_comm
    r.tp_comm_total_s = m * micro_batch.tp_comm_total
    r.cp_comm_s = m * micro_batch.cp_comm
    r.cp_comm_total_s = m * micro_batch.cp_comm_total
    r.ep_comm_s = m * micro_batch.ep_comm
    r.ep_comm_total_s = m * micro_batch.ep_comm_total
    r.pp_p2p_s = m * (pipe.steady - pipe.busy)
    r.pp_p2p_total_s = m * micro_batch.p2p
    r.pipeline_bubble_s = pipe.bubble
    r.dp_comm_s = sync.dp_exposed
    r.dp_comm_total_s = sync.dp_total
    r.zero_comm_s = sync.zero_exposed
    r.zero_comm_total_s = sync.zero_total
    r.optimizer_s = sync.optimizer
    r.micro_batches = m
    r.bubble_fraction = bubble_fraction(par.pp, m, par.interleave)
    r.dp_link = sync.link
    r.bottleneck_stage = micro_batch.stage

    r.tokens_per_step = ctx.tokens_per_step
    r.tokens_per_s = rates.tokens_per_s
    r.model_flops_per_step = rates.model_flops
    r.hardware_flops_per_step = rates.hardware_flops
    r.model_flops_per_s_per_gpu = rates.model_flops_per_s_per_gpu
    r.mfu = rates.mfu
    r.hfu = rates.hfu
    r.training_tokens = ctx.training_tokens
    r.train_time_s = rates.train_time_s
    r.gpu_hours = rates.gpu_hours
    r.train_time_with_failures_s = rates.train_time_with_failures_s
    r.gpu_hours_with_failures = rates.gpu_hours_with_failures

    r.loader_tokens_per_s = data["loader_tokens_per_s"]
    r.loader_ratio = data["loader_ratio"]
    r.required_read_bytes_per_s = data["required_read_bytes_per_s"]
    r.storage_read_bytes_per_s = data["storage_read_bytes_per_s"]
    r.storage_ratio = data["storage_ratio"]

    f = ctx.failures
    r.interruptions_per_day = f.interruptions_per_day
    r.mtti_s = f.mtti_s
    r.checkpoint_bytes = f.checkpoint_bytes
    r.checkpoint_write_s = f.checkpoint_write_s
    r.young_interval_s = f.young_s
    r.daly_interval_s = f.daly_s
    r.checkpoint_interval_s = f.interval_s
    r.lost_work_per_interruption_s = f.lost_per_interruption_s
    r.lost_work_per_day_s = f.lost_per_day_s
    r.goodput = f.goodput
    r.goodput_at_daly = f.goodput_at_daly
    return r
