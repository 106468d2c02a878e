"""A DeepSpeed JSON configuration for a plan.

Keys and their meaning: the DeepSpeed files named in
frameworks.FRAMEWORKS["deepspeed"]. DeepSpeed checks train_batch_size =
train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel
world size (deepspeed/runtime/config.py); ZeRO stages 0-3 are
zero_optimization.stage, hybrid sharding of ZeRO-3 over fewer ranks is MiCS
(mics_shard_size, arXiv:2205.00119); DeepSpeed's pipeline engine refuses
ZeRO stages 2 and 3 (deepspeed/runtime/pipe/engine.py, PipelineEngine: "ZeRO-2
and ZeRO-3 are incompatible with pipeline parallelism"), so a pipelined plan
of those stages is written with stage 1 and a note. Pipeline stages and tensor parallelism
are set in the training script (PipelineModule(num_stages=...), AutoTP's
tensor_parallel.autotp_size); the file carries them where the config has a
key. AutoTP and DeepSpeed's MoE layers run ZeRO stage 2 at most, AutoTP not beside the pipeline engine
(runtime/engine.py, _configure_tensor_parallel_states); without a pipeline
DeepSpeedConfig counts every rank as data parallel when it checks
train_batch_size, so with tensor or context parallelism that key is left for
it to derive. Gradients accumulated in fp32 (18 bytes of state per parameter)
are data_types.grad_accum_dtype, whose default with ZeRO-1 is bf16. JSON has no comments: the header and notes go in a top-level "comment"
list, which DeepSpeed ignores (it reads top-level keys by name; only its
sections are strict models).
"""
import json

from ..recompute_modules import named_modules
from .notes import (Notes, architecture_notes, attention_kernel_note, header_lines, mtp_note, recompute_modules_note,
                    schedule_note)


def _zero(f, notes):
    par = f.par
    stage = par.zero
    if par.pp > 1 and stage > 1:
        notes.add("deepspeed_pipeline_zero", zero=stage)
        stage = 1
    elif par.tp > 1 and stage == 3:
        # DeepSpeedEngine._configure_tensor_parallel_states asserts AutoTP runs ZeRO stage 2 at most.
        notes.add("deepspeed_autotp_zero3")
        stage = 2
    elif f.shape.experts is not None and stage == 3:
        # The engine asserts "MoE not supported with Stage 3" once the model holds deepspeed.moe layers
        # (runtime/engine.py, _configure_zero_optimizer).
        notes.add("deepspeed_moe_zero3")
        stage = 2
    zero = {"stage": stage}
    if par.zero >= 1 and par.dp > 1:
        zero["overlap_comm"] = f.modern and f.workload.grad_reduce_overlap
        zero["contiguous_gradients"] = True
    if par.dp_shard and par.dp_shard < par.dp:
        if stage == 3:
            zero["mics_shard_size"] = par.dp_shard
        else:
            notes.add("deepspeed_partial_sharding", dp=par.dp, dp_shard=par.dp_shard, zero=stage)
    return zero


def _checkpointing(f, notes):
    par = f.par
    if par.recompute == "selective" and not named_modules(par.recompute, f.workload.recompute_modules):
        notes.add("deepspeed_selective")  # (of Megatron-Core's modules: recompute_modules_note)
    recompute_modules_note(f, notes)
    mtp_note(f, notes)
    if par.recompute != "full":
        return None
    if par.recompute_layers:
        notes.add("deepspeed_partial_recompute", layers=par.recompute_layers)
    return {"partition_activations": par.tp > 1, "contiguous_memory_optimization": False,
            "cpu_checkpointing": False, "number_checkpoints": f.middle_layers}


def _model_parallel(f, notes):
    par, out = f.par, {}
    if par.pp > 1:
        out["pipeline"] = {"stages": par.pp, "activation_checkpoint_interval": 1 if par.recompute == "full" else 0}
        notes.add("deepspeed_pipeline", pp=par.pp)
        if par.interleave > 1:
            notes.add("deepspeed_interleave", interleave=par.interleave)
        if not f.even:
            notes.add("deepspeed_uneven", first=f.first_layers, last=f.last_layers)
    if par.tp > 1 and par.pp > 1:
        # AutoTP does not combine with the pipeline engine: the model's own tensor-parallel layers and a
        # topology with a model-parallel axis do.
        notes.add("deepspeed_pipeline_tp", tp=par.tp, pp=par.pp, dp=par.dp)
    elif par.tp > 1:
        out["tensor_parallel"] = {"autotp_size": par.tp}
        notes.add("deepspeed_autotp", tp=par.tp)
        if par.sequence_parallel:
            notes.add("deepspeed_sequence_parallel")
    if par.cp > 1:
        notes.add("deepspeed_context_parallel", cp=par.cp)
    if par.ep > 1:
        notes.add("deepspeed_expert_parallel", ep=par.ep)
    experts = f.shape.experts
    if experts is not None and experts.groups:
        notes.add("deepspeed_expert_groups", groups=experts.groups, groups_per_token=experts.groups_per_token)
    return out


def config(f, notes):
    """The configuration as a dict (without the comment)."""
    par = f.par
    out = {}
    if par.tp * par.cp == 1:
        out["train_batch_size"] = f.batch
    else:
        # DeepSpeedConfig checks train_batch_size = micro x accumulation x its data-parallel world, which
        # counts tensor- and context-parallel ranks too (deepspeed/runtime/config.py): left for it to derive.
        notes.add("deepspeed_batch_derived", batch=f.batch, dp=par.dp, ranks=f.gpus)
    zero = _zero(f, notes)
    out.update({
        "train_micro_batch_size_per_gpu": par.micro_batch,
        "gradient_accumulation_steps": f.per_replica // par.micro_batch,
        "bf16": {"enabled": True},
        "zero_optimization": zero,
    })
    if f.workload.state_bytes_per_param == 18 and zero["stage"] <= 1:
        # Gradients accumulated in fp32 (the plan's 18 bytes per parameter): with ZeRO-1 DeepSpeed's default is
        # bf16 (DeepSpeedEngine.get_data_types), so the file says it.
        out["data_types"] = {"grad_accum_dtype": "fp32"}
    checkpointing = _checkpointing(f, notes)
    if checkpointing:
        out["activation_checkpointing"] = checkpointing
    out.update(_model_parallel(f, notes))
    if f.workload.precision == "fp8":
        notes.add("deepspeed_fp8")
    if f.checkpoint_mode != "blocking":
        notes.add("deepspeed_checkpoint_" + f.checkpoint_mode)
    launch = "deepspeed_launch_hostfile" if f.last_node_gpus and f.full_nodes else "deepspeed_launch"
    notes.add(launch, nodes=f.nodes, gpus_per_node=f.gpus_per_node,
              last_node_gpus=f.last_node_gpus, save_interval_steps=f.save_interval_steps, train_steps=f.train_steps)
    attention_kernel_note(f, notes)
    architecture_notes(f, notes)
    return out


def render(f, texts, framework):
    notes = Notes()
    body = config(f, notes)
    schedule_note(f, notes, framework)
    document = {"comment": header_lines(texts, framework, f, notes)}
    document.update(body)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n", notes
