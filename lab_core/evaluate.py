"""evaluate(workload, parallelism) -> Report: memory, time, data, failures.

A composition of per-concern steps, each in its own module with its sources:

  memory_of          per-GPU weights, gradients, optimizer, activations (gpu_memory.py)
  stage_micro_batch_times  one micro-batch on each kind of stage; the busiest
                     sets the pipeline's pace (step_time.py, timing.py)
  pipeline_times     1F1B steady slots and the fill-and-drain bubble (step_time.py)
  gradient_sync      DP gradients, ZeRO-3 gathers, optimizer step of the stage
                     whose take longest (sync.py)
  throughput         tokens/s, MFU, time to train (throughput.py)
  data_pipeline      loaders and storage against the GPUs' appetite (data.py)

  step = m x steady slot + bubble + exposed DP + exposed ZeRO-3 + optimizer
         - what of the exposed sync the slots' waits for their sends hold (sync.held_by_sends)
                                                  (arXiv:2104.04473 Sec 2.2)

Per-workload quantities (rates, shape, FLOPs, failure and checkpoint
figures) come from the Workload's cached context (context.py), so a planner
calling evaluate() for many layouts pays only for what depends on the layout.
"""
from .context import context_for
from .data import data_pipeline
from .errors import LabInputError
from .flops import partial_recompute_flops
from .gpu_memory import memory_of, model_stages
from .parallelism import Parallelism, check_layout
from .partial_recompute import is_partial, model_recomputed_layers
from .report import assemble
from .step_time import pipeline_times, stage_micro_batch_times
from .sync import gradient_sync
from .throughput import throughput
from .workload import Workload


def repeated_flops(ctx, par, layout, stages=None):
    """FLOPs the plan's recompute repeats in one step (context.recompute_flops by mode;
    of the layers that recompute when only some do, partial_recompute.py). stages: the
    plan's model_stages, when the caller has them."""
    if not is_partial(par):
        return ctx.recompute_flops[par.recompute]
    if stages is None:
        stages = model_stages(ctx, par.pp, layout.first_layers, layout.middle_layers, layout.last_layers)
    return partial_recompute_flops(ctx.batch_sequences, ctx.seq_len, ctx.shape, ctx.flash,
                                   *model_recomputed_layers(stages, par))


def evaluate(workload, parallelism):
    """Memory, step time, throughput, data and failure figures for one layout.

    Raises LabInputError when the layout does not fit the workload (see
    parallelism.check_layout).
    """
    if not isinstance(workload, Workload):
        raise LabInputError("workload", repr(workload), "a lab_core.Workload", "not_a_workload")
    if not isinstance(parallelism, Parallelism):
        raise LabInputError("parallelism", repr(parallelism), "a lab_core.Parallelism", "not_a_parallelism")
    par = parallelism
    layout = check_layout(workload, par)
    micro_batches = layout.micro_batches
    ctx = context_for(workload)
    # The kinds of pipeline stage, one list for every step below.
    stages = model_stages(ctx, par.pp, layout.first_layers, layout.middle_layers, layout.last_layers)
    memory = memory_of(ctx, par, layout, stages)
    micro_batch, stage_times = stage_micro_batch_times(ctx, par, layout, stages)
    pipe = pipeline_times(micro_batch, par.pp, par.interleave, ctx.pipeline_schedule)
    sync = gradient_sync(ctx, par, micro_batches, stage_times, pipe, memory.sync_params)
    step_s = (micro_batches * pipe.steady + pipe.bubble + sync.dp_exposed + sync.zero_exposed + sync.optimizer
              - sync.held)
    rates = throughput(ctx, repeated_flops(ctx, par, layout, stages), step_s)
    data = data_pipeline(rates.tokens_per_s, ctx.nodes, ctx.loader_tokens_per_s_per_node,
                         ctx.storage_read_bytes_per_s)
    return assemble(ctx, par, micro_batches, memory, micro_batch, pipe, sync, step_s, rates, data)
