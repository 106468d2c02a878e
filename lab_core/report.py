"""The result of evaluate(): flat attributes for speed, a stable nested dict for JSON.

All values are SI: bytes, seconds, FLOP, FLOP/s, tokens, ratios. Values that
do not exist (e.g. the mean time to interrupt when the failure rate is 0) are
None.
"""
from .gpu_memory import reserved_bytes
from .pipeline import bubble_fraction
from .throughput import with_failures

# (group, key in the dict, attribute). The order is the order of to_dict().
LAYOUT = (
    ("memory", (
        ("weights_bytes", "weights_bytes"),
        ("gradients_bytes", "gradients_bytes"),
        ("optimizer_bytes", "optimizer_bytes"),
        ("activations_bytes", "activations_bytes"),
        # The part of activations_bytes that is the logits and the loss's buffers (gpu_memory.stage_loss_bytes).
        ("loss_bytes", "loss_bytes"),
        ("total_bytes", "memory_bytes"),
        # What the caching allocator reserves at that peak (gpu_memory.reserved_bytes).
        ("reserved_bytes", "reserved_bytes"),
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
        ("mfu_causal", "mfu_causal"),
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
        # The checkpoint mode and what one checkpoint costs (checkpoint_modes.py).
        ("checkpoint_mode", "checkpoint_mode"),
        ("checkpoint_bytes_per_gpu", "checkpoint_bytes_per_gpu"),
        ("checkpoint_snapshot_s", "checkpoint_snapshot_s"),
        ("checkpoint_stall_s", "checkpoint_stall_s"),
        ("checkpoint_background_s", "checkpoint_background_s"),
        ("checkpoint_durable_lag_s", "checkpoint_durable_lag_s"),
        ("storage_write_bytes_per_s", "storage_write_bytes_per_s"),
        ("replication_bytes_per_s_per_gpu", "replication_bytes_per_s_per_gpu"),
        ("recovery_source", "recovery_source"),
        # The interval: Young/Daly for the pause, bounded by the background work.
        ("optimal_interval_s", "optimal_interval_s"),
        ("interval_bound", "interval_bound"),
        ("goodput_at_optimal", "goodput_at_optimal"),
        # Recovery per interruption (recovery.py); the parts are None when fixed.
        ("recovery_fixed", "recovery_fixed"),
        ("recovery_s", "recovery_s"),
        ("detection_s", "detection_s"),
        ("job_restart_s", "job_restart_s"),
        ("comm_init_s", "comm_init_s"),
        ("checkpoint_load_s", "checkpoint_load_s"),
        ("recompute_per_interruption_s", "recompute_per_interruption_s"),
        # Where wall time goes besides training: they sum to 1 - goodput.
        ("lost_work_share", "lost_work_share"),
        ("checkpoint_stall_share", "checkpoint_stall_share"),
        ("recovery_share", "recovery_share"),
        ("detection_share", "detection_share"),
        ("job_restart_share", "job_restart_share"),
        ("comm_init_share", "comm_init_share"),
        ("checkpoint_load_share", "checkpoint_load_share"),
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

    def waiting_s(self):
        """Seconds of the step the GPUs wait rather than compute: every exposed
        collective (TP, CP, EP, pipeline sends, DP, ZeRO-3) and the pipeline bubble
        (the comms meter's measure, the book's "waiting" segments)."""
        return (self.tp_comm_s + self.cp_comm_s + self.ep_comm_s + self.pp_p2p_s + self.dp_comm_s
                + self.zero_comm_s + self.pipeline_bubble_s)

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
    r.shape = ctx.shape
    r.weights_bytes = memory.weights
    r.gradients_bytes = memory.gradients
    r.optimizer_bytes = memory.optimizer
    r.activations_bytes = memory.activations
    r.loss_bytes = memory.loss
    r.activations_per_layer_bytes = memory.activations_per_layer
    r.activations_working_bytes = memory.activations_working
    r.memory_bytes = total
    r.reserved_bytes = reserved_bytes(total)
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
    # The slots' waits for their sends, less what exposed sync ran in them (sync.held_by_sends).
    r.pp_p2p_s = m * (pipe.steady - pipe.busy) - sync.held
    r.pp_p2p_total_s = m * micro_batch.p2p
    r.pipeline_bubble_s = pipe.bubble
    r.dp_comm_s = sync.dp_exposed
    r.dp_comm_total_s = sync.dp_total
    r.zero_comm_s = sync.zero_exposed
    r.zero_comm_total_s = sync.zero_total
    r.optimizer_s = sync.optimizer
    r.micro_batches = m
    # Bubble over ideal time: (p - 1) / (v m) under 1F1B; the bidirectional schedules' bubble
    # over m slots of the same micro-batch (pipeline.bubble_time).
    r.bubble_fraction = (bubble_fraction(par.pp, m, par.interleave) if ctx.pipeline_schedule == "1f1b" or par.pp == 1
                         else pipe.bubble / (m * (pipe.busy + micro_batch.p2p)))
    r.dp_link = sync.link
    r.bottleneck_stage = micro_batch.stage

    r.tokens_per_step = ctx.tokens_per_step
    r.tokens_per_s = rates.tokens_per_s
    r.model_flops_per_step = rates.model_flops
    r.hardware_flops_per_step = rates.hardware_flops
    r.model_flops_per_s_per_gpu = rates.model_flops_per_s_per_gpu
    r.mfu = rates.mfu
    r.mfu_causal = rates.mfu_causal
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

    _failure_figures(r, ctx.failures)
    return r


def refailed(report, ctx):
    """`report` for the workload of `ctx` when the two workloads differ only in
    the checkpoint interval: the interval changes the failure model
    (failures.failure_figures) and nothing evaluate() computes for a layout
    before it, so the layout's figures are kept and the failure figures and
    the training time with failures are those of `ctx`. Equal to evaluate()'s
    report for that workload (tests/model/test_properties.py checks it)."""
    r = Report()
    for attr in Report.__slots__:
        setattr(r, attr, getattr(report, attr))
    r.train_time_with_failures_s, r.gpu_hours_with_failures = with_failures(r.train_time_s, r.gpu_hours,
                                                                            ctx.failures.goodput)
    _failure_figures(r, ctx.failures)
    return r


#: Report attribute <- failures.FailureFigures attribute (the layout does not change them).
_FROM_FAILURES = (
    ("interruptions_per_day", "interruptions_per_day"), ("mtti_s", "mtti_s"), ("checkpoint_bytes", "checkpoint_bytes"),
    ("checkpoint_write_s", "checkpoint_write_s"), ("young_interval_s", "young_s"), ("daly_interval_s", "daly_s"),
    ("checkpoint_interval_s", "interval_s"), ("lost_work_per_interruption_s", "lost_per_interruption_s"),
    ("lost_work_per_day_s", "lost_per_day_s"), ("goodput", "goodput"), ("goodput_at_daly", "goodput_at_daly"),
    ("checkpoint_mode", "mode"), ("checkpoint_bytes_per_gpu", "bytes_per_gpu"), ("checkpoint_snapshot_s", "snapshot_s"),
    ("checkpoint_stall_s", "stall_s"), ("checkpoint_background_s", "background_s"),
    ("checkpoint_durable_lag_s", "lag_s"), ("storage_write_bytes_per_s", "storage_write_bytes_per_s"),
    ("replication_bytes_per_s_per_gpu", "replication_bytes_per_s_per_gpu"), ("recovery_source", "recovery_source"),
    ("optimal_interval_s", "optimal_s"), ("interval_bound", "interval_bound"),
    ("goodput_at_optimal", "goodput_at_optimal"), ("recompute_per_interruption_s", "recompute_s"),
    ("lost_work_share", "lost_work_share"), ("checkpoint_stall_share", "stall_share"),
    ("recovery_share", "recovery_share"),
)


def _failure_figures(r, f):
    """The failure and checkpoint figures of ``f`` (failures.FailureFigures): the
    interval, mode, recovery parts and the breakdown of lost time."""
    for attr, source in _FROM_FAILURES:
        setattr(r, attr, getattr(f, source))
    parts = f.recovery
    r.recovery_fixed = parts.fixed
    r.recovery_s = parts.total_s
    r.detection_s = parts.detection_s
    r.job_restart_s = parts.job_restart_s
    r.comm_init_s = parts.comm_init_s
    r.checkpoint_load_s = parts.load_s
    r.detection_share = f.part_share(parts.detection_s)
    r.job_restart_share = f.part_share(parts.job_restart_s)
    r.comm_init_share = f.part_share(parts.comm_init_s)
    r.checkpoint_load_share = f.part_share(parts.load_s)
