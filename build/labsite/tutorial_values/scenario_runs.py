"""Helpers of the chapters on published runs: a run's scenario file, its name,
its per-stage memory and bottleneck micro-batch, and two-way case values (no @chapter here)."""
from functools import cache

import lab_core
from lab_core.context import context_for
from lab_core.gpu_memory import stage_memories
from lab_core.parallelism import check_layout
from lab_core.step_time import micro_batch_times

from ..scenarios import load_scenario
from .common import case, layout_text


@cache
def published_run(scenario_id):
    """(workload inputs, layout) of a scenario file's published run."""
    scenario = load_scenario(scenario_id)
    return dict(scenario.workload), dict(scenario.parallelism)


@cache
def run_name(scenario_id):
    """A published run's name as its scenario file gives it (the same in every
    language for the runs the chapters name: "Llama 3 405B")."""
    title = load_scenario(scenario_id).title
    if len(set(title.values())) != 1:
        raise ValueError(f"{scenario_id}: its title differs by language; name the run in the chapter's text")
    return next(iter(title.values()))


def per_stage(workload, layout):
    """{first|middle|last: MemoryBreakdown} of one GPU of each kind of stage."""
    w = lab_core.Workload(**workload)
    par = lab_core.Parallelism(**layout)
    return {mem.stage: mem for mem, _ in stage_memories(context_for(w), par, check_layout(w, par))}


def most_loaded_stage(workload, layout):
    """The MemoryBreakdown of the plan's most loaded GPU (evaluate()'s memory), whichever stage it is on."""
    return max(per_stage(workload, layout).values(), key=lambda mem: mem.total)


def micro_batch(workload, layout):
    """step_time.MicroBatchTimes of one micro-batch on the bottleneck stage."""
    w = lab_core.Workload(**workload)
    par = lab_core.Parallelism(**layout)
    return micro_batch_times(context_for(w), par, check_layout(w, par))


def branch(condition, if_true, if_false):
    """A two-way case value (common.case): ``if_true`` when the computed ``condition`` holds."""
    return case(if_true if condition else if_false, if_true, if_false)


def state_values(prefix, state):
    """The numbers a lab state shows (an exercise's workload and the planner's plan
    for it, labsite.exercises.ExerciseState) as values named ``<prefix>_<field>``."""
    p, r, w = state.layout, state.report, state.workload
    values = {f"{prefix}_{field}": (getattr(p, field), "count")
              for field in ("tp", "cp", "pp", "dp", "ep", "zero", "interleave", "micro_batch")}
    values.update({
        f"{prefix}_layout": layout_text(p), f"{prefix}_recompute": (p.recompute, "text"),
        f"{prefix}_micro": (r.micro_batches, "count"), f"{prefix}_bubble": (r.bubble_fraction, "percent"),
        f"{prefix}_step": (r.step_s, "duration"), f"{prefix}_mfu": (r.mfu, "percent"),
        f"{prefix}_tokens_per_s": (r.tokens_per_s, "tokens_per_s"), f"{prefix}_mem": (r.memory_bytes, "bytes"),
        f"{prefix}_act": (r.activations_bytes, "bytes"), f"{prefix}_days": (r.train_time_s / 86400.0, "days"),
        f"{prefix}_dp_exposed": (r.dp_comm_s, "duration"), f"{prefix}_tp_exposed": (r.tp_comm_s, "duration"),
        f"{prefix}_ep_share": (r.ep_comm_s / r.step_s, "percent"),
        f"{prefix}_gpus": (w.gpus, "count"), f"{prefix}_seq": (w.seq_len, "count"),
        f"{prefix}_batch": (w.batch_sequences, "count"), f"{prefix}_batch_tokens": (w.global_batch_tokens, "tokens"),
        f"{prefix}_params": (w.shape.params, "params"), f"{prefix}_active": (w.shape.active_params, "params"),
    })
    return values
