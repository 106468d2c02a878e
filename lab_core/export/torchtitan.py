"""A torchtitan TOML job file for a plan.

Keys and their meaning: torchtitan/config/job_config.py at v0.2.2
(frameworks.FRAMEWORKS["torchtitan"]); batch and pipeline arithmetic from
torchtitan/train.py and torchtitan/distributed/pipeline_parallel.py of the
same release. The mapping:

- data parallelism is FSDP2 over data_parallel_shard_degree ranks,
  replicated data_parallel_replicate_degree times (HSDP when both > 1,
  arXiv:2304.11277 Sec 3.2.1). ZeRO-3 reshards the weights after the forward
  pass; ZeRO-2 keeps them ("never"). ZeRO-0 is plain replication (DDP).
  ZeRO-1 (only the optimizer state sharded) has no torchtitan form without a
  pipeline: it is written as ZeRO-2, which shards the gradients as well, with
  a note. With a pipeline FSDP is ZeRO-1 (parallelism.zero_stages): written
  "never", torchtitan's default there, and a ZeRO-2/3 plan of another stack
  gets a note that the job holds more memory than the plan counted.
- tensor parallelism always runs with sequence parallelism and loss
  parallelism; async TP needs torch.compile.
- pipeline: local_batch_size is a replica's share of the batch and
  pipeline_parallel_microbatch_size the micro-batch, so a replica runs
  local / micro micro-batches per step. Without a pipeline, local_batch_size
  is the micro-batch and global_batch_size gives the gradient accumulation.
  The stage split: layers_per_stage with the first and last stage short of
  "less_layers" layers (num_virtual_stages = (layers + first_less + last_less)
  / layers_per_stage = pp x interleave), or each stage's modules named where
  that form cannot give the plan's split (_pipeline).
- attention: torchtitan's SDPA wrapper puts cuDNN's fused attention first
  (torchtitan/models/attention.py at v0.2.2, ScaledDotProductAttentionWrapper:
  CUDNN_ATTENTION, FLASH_ATTENTION, MATH with set_priority), the kernel
  Transformer Engine's fused attention calls, so a plan on either runs the
  kernel it assumed; a plan on FlashAttention-2 (the PyTorch-native stack
  without Workload.te_attention) gets a note that the job's attention is
  faster.
- what torchtitan refuses or ignores is a note: DDP beside another mesh
  dimension (written as FSDP), a 1F1B pipeline with fewer micro-batches
  than stages (smaller micro-batches where the replica's sequences allow),
  pipelining a model without a pipelining function, context parallelism
  for a model that attends with FlexAttention, a virtual stage with no
  module (a rank with fewer layers than chunks), FP8 expert GEMMs with
  a pipeline or context parallelism, and mixed precision without FSDP.
- the loss: torchtitan's eager cross-entropy keeps more bytes per logit than
  a Megatron stack's fused loss (calibration.LOSS_BYTES_PER_LOGIT), so a plan
  that counted fewer (a Megatron stack's, or Workload.compiled_loss) is
  written with the loss compiled, which keeps fewer still
  (calibration.COMPILED_LOSS_BYTES_PER_LOGIT): the job's loss buffers stay
  within the plan's memory.
"""
from .. import calibration as cal
from ..context import context_for
from ..stack import attention_kernels
from ..presets import PRESETS
from . import toml
from .facts import virtual_stage_layers
from .notes import (Notes, architecture_notes, comment_block, header_lines, launch_notes, mtp_note,
                    recompute_modules_note, schedule_note)


def _pipeline_micro_batch(f, notes):
    """The micro-batch the job runs. PyTorch's single-chunk schedules (1F1B, GPipe) refuse fewer micro-batches
    than stages (torch/distributed/pipelining/schedules.py, PipelineScheduleSingle.__init__): a plan with
    fewer runs each replica's sequences in smaller micro-batches where they are enough, and is told the job
    is refused where they are not."""
    par = f.par
    if par.interleave > 1 or f.micro_batches >= par.pp:
        return par.micro_batch
    if f.per_replica < par.pp:
        notes.add("torchtitan_too_few_micro_batches", micro_batches=f.micro_batches, pp=par.pp)
        return par.micro_batch
    micro = max(size for size in range(1, par.micro_batch) if f.per_replica % size == 0
                and f.per_replica // size >= par.pp)
    notes.add("torchtitan_micro_batch_split", pp=par.pp, per_replica=f.per_replica, micro_batch=micro,
              micro_batches=f.per_replica // micro, plan_micro_batch=par.micro_batch, plan_micro_batches=f.micro_batches)
    return micro


def _dualpipev(f, notes):
    """DualPipeV (torchtitan's ScheduleDualPipeV, a "v" style schedule: 2 pp stages, rank r running stage r
    and stage 2 pp - 1 - r, distributed/pipeline_parallel.py _get_stage_indices at v0.2.2): each rank's layers
    of the plan in two chunks, the first going down the ranks and the second back up, named module by module;
    the micro-batch is the plan's (it leaves at least 2 pp micro-batches, parallelism.check_schedule)."""
    per_rank = [f.first_layers] + [f.middle_layers] * (f.par.pp - 2) + [f.last_layers]
    parts = _named_parts([n - n // 2 for n in per_rank] + [n // 2 for n in reversed(per_rank)])
    if not all(parts):
        notes.add("torchtitan_dualpipev_empty", least=min(per_rank))
    return [("pipeline_parallel_degree", f.par.pp), ("pipeline_parallel_schedule", "DualPipeV"),
            ("module_fqns_per_model_part", parts), ("pipeline_parallel_microbatch_size", f.par.micro_batch)]


def _model_parts(f):
    """torchtitan's module_fqns_per_model_part: the modules of each virtual stage in schedule order
    (facts.virtual_stage_layers), the embedding in the first and the final norm and output layer in the last
    (the module names of torchtitan's llama3, llama4 and deepseek_v3 models)."""
    return _named_parts(virtual_stage_layers(f.par.pp, f.par.interleave, f.first_layers, f.middle_layers,
                                             f.last_layers))


def _named_parts(counts):
    """The modules of consecutive model parts of `counts` layers each, in model order: the embedding
    in the first, the final norm and output layer in the last."""
    parts, start = [], 0
    for layers in counts:
        parts.append([f"layers.{i}" for i in range(start, start + layers)])
        start += layers
    parts[0].insert(0, "tok_embeddings")
    parts[-1] += ["norm", "output"]
    return parts


def _pipeline(f, notes):
    """The stage split as torchtitan's generated one (generate_llm_fqn_per_model_part: layers_per_stage per
    virtual stage, the first and last short of "less_layers") where that gives the plan's split exactly; the
    generator refuses to take more off the first or last virtual stage than one holds and needs every rank's
    layers to divide evenly over its chunks, so other splits name each stage's modules
    (module_fqns_per_model_part, which torchtitan reads in place of the generated split)."""
    par = f.par
    if par.pp == 1:
        return []
    if f.workload.pipeline_schedule == "dualpipev":
        return _dualpipev(f, notes)
    middle, v = f.middle_layers, par.interleave
    first_less, last_less = middle - f.first_layers, middle - f.last_layers
    per_chunk = middle // v
    pairs = [("pipeline_parallel_degree", par.pp),
             ("pipeline_parallel_schedule", "Interleaved1F1B" if v > 1 else "1F1B")]
    if per_chunk >= 1 and middle % v == 0 and 0 <= first_less <= per_chunk and 0 <= last_less <= per_chunk:
        pairs += [("pipeline_parallel_layers_per_stage", per_chunk),
                  ("pipeline_parallel_first_stage_less_layers", first_less),
                  ("pipeline_parallel_last_stage_less_layers", last_less)]
    else:
        parts = _model_parts(f)
        if not all(parts):
            # torchtitan builds one optimizer per model part (components/optimizer.py, OptimizersContainer) and
            # PyTorch's optimizers refuse an empty parameter list.
            notes.add("torchtitan_empty_stage", first=f.first_layers, last=f.last_layers, interleave=v,
                      empty=[bool(part) for part in parts].count(False))
        pairs.append(("module_fqns_per_model_part", parts))
    return pairs + [("pipeline_parallel_microbatch_size", _pipeline_micro_batch(f, notes))]


def _data_parallel(f, notes):
    par = f.par
    if par.dp == 1 or (par.zero == 0 and par.model_parallel == 1 and par.ep == 1):
        return [("data_parallel_replicate_degree", par.dp), ("data_parallel_shard_degree", 1)]
    shard = par.dp_shard or par.dp
    if par.zero == 0:
        # torchtitan's DDP takes a one-dimensional mesh only (models/llama3/infra/parallelize.py: "DDP has not
        # supported > 1D parallelism"): beside TP, CP, PP or EP its data parallelism is FSDP.
        notes.add("torchtitan_ddp_mesh", dp=par.dp, zero=1 if par.pp > 1 else 2)
        reshard = "never"
    elif par.pp > 1:
        if par.zero > 1:
            notes.add("torchtitan_pipeline_fsdp", zero=par.zero)
        reshard = "never"
    else:
        if par.zero == 1:
            # Written as ZeRO-2, which reduce-scatters every micro-batch's gradients (sync.earlier_syncs).
            if f.micro_batches > 1:
                notes.add("torchtitan_zero1_accumulation", micro_batches=f.micro_batches)
            else:
                notes.add("torchtitan_zero1")
        reshard = "always" if par.zero == 3 else "never"
    return [("data_parallel_replicate_degree", par.dp // shard), ("data_parallel_shard_degree", shard),
            ("fsdp_reshard_after_forward", reshard)]


def _parallelism(f, notes):
    par = f.par
    pairs = _data_parallel(f, notes) + [("tensor_parallel_degree", par.tp)]
    if par.tp > 1 and not par.sequence_parallel:
        notes.add("torchtitan_sequence_parallel")
    async_tp = par.tp > 1 and f.workload.tp_comm_overlap and f.modern
    if par.tp > 1:
        pairs.append(("enable_async_tensor_parallel", async_tp))
    pairs += _pipeline(f, notes)
    pairs.append(("context_parallel_degree", par.cp))
    if par.cp > 1 and f.workload.cp_all_gather:
        pairs.append(("context_parallel_rotate_method", "allgather"))
    if f.shape.experts is not None:
        pairs += [("expert_parallel_degree", par.ep), ("expert_tensor_parallel_degree", 1)]
    return pairs, async_tp


# torchtitan v0.2.2 models whose TrainSpec has no pipelining_fn (torchtitan/models/<name>/__init__.py):
# train.py refuses pipeline parallelism for them.
UNPIPELINED_MODELS = ("qwen3", "gpt_oss", "flux")
# Models whose registered flavors attend with FlexAttention (attn_type "flex" in torchtitan/models/<name>/__init__.py
# at v0.2.2); their model args refuse context parallelism, which supports SDPA only (deepseek_v3/model/args.py).
FLEX_ATTENTION_MODELS = ("deepseek_v3",)


def _expert_group_notes(f, flavor, notes):
    """Group-limited routing lives in a flavor's MoE arguments (num_expert_groups, num_limited_groups,
    torchtitan/models/moe/moe.py): a note when the plan's differs from the named flavor's (a preset's
    routing as its inputs give it; a flavor to register has none yet)."""
    experts = f.shape.experts
    if experts is None:
        return
    inputs = PRESETS[f.preset]["inputs"] if f.preset else {}
    named = (inputs.get("expert_groups", 0), inputs.get("expert_groups_per_token", 0))
    if named == (experts.groups, experts.groups_per_token):
        return
    if experts.groups:
        notes.add("torchtitan_expert_groups", groups=experts.groups, groups_per_token=experts.groups_per_token)
    else:
        notes.add("torchtitan_no_expert_groups", flavor=flavor, flavor_groups=named[0], flavor_groups_per_token=named[1])


def _model(f, notes):
    """[model]: the registered name and flavor of a preset's shape, or a flavor to register (the job fails
    on an unknown flavor rather than training torchtitan's default debug model); FP8 converters."""
    par = f.par
    if f.preset and PRESETS[f.preset]["torchtitan"]:
        name, flavor = PRESETS[f.preset]["torchtitan"]
    else:
        # llama4 is torchtitan's mixture of experts with ordinary (grouped-query) attention.
        name, flavor = "llama3" if f.shape.experts is None else "llama4", f"lab_{f.shape.layers}x{f.shape.hidden}"
        notes.add("torchtitan_flavor", layers=f.shape.layers, hidden=f.shape.hidden, heads=f.shape.heads, name=name,
                  flavor=flavor)
    _expert_group_notes(f, flavor, notes)
    if par.pp > 1 and name in UNPIPELINED_MODELS:
        notes.add("torchtitan_no_pipelining", name=name, pp=par.pp)
    if par.cp > 1 and name in FLEX_ATTENTION_MODELS:
        notes.add("torchtitan_flex_context_parallel", name=name, flavor=flavor, cp=par.cp)
    pairs = [("name", name), ("flavor", flavor)]
    if f.workload.precision == "fp8":
        converters = ["quantize.linear.float8"]
        if f.shape.experts is not None and par.pp == 1 and par.cp == 1:
            converters.append("quantize.grouped_mm.float8")
        elif f.shape.experts is not None:
            notes.add("torchtitan_fp8_experts")
        pairs.append(("converters", converters))
    return pairs


def _training(f):
    par = f.par
    local = f.per_replica if par.pp > 1 else par.micro_batch
    return [("local_batch_size", local), ("global_batch_size", f.batch), ("seq_len", f.workload.seq_len),
            ("steps", f.train_steps), ("mixed_precision_param", "bfloat16")]


def _checkpoint(f, notes):
    """Async checkpoints are async_mode "async"; in-memory ones have no torchtitan form (written as async)."""
    pairs = [("enable", True), ("interval", f.save_interval_steps)]
    if f.checkpoint_mode == "in_memory":
        notes.add("torchtitan_in_memory")
    if f.checkpoint_mode in ("async", "in_memory"):
        pairs.append(("async_mode", "async"))
    return pairs


def _compiles_loss(workload, tp):
    """Whether the plan counted fewer bytes per logit than torchtitan's eager loss keeps (module docstring)."""
    split = 1 if tp > 1 else 0
    eager = cal.LOSS_BYTES_PER_LOGIT["torch_native"]["vocab_parallel" if split else "one_gpu"]
    return context_for(workload).loss_bytes_per_logit[split] < eager


def _checkpointing(f, notes):
    """The activation_checkpoint table: torchtitan's modes by name, and a plan that
    recomputes only some layers (partial_recompute.py) as layer-wise selective
    checkpointing, which wraps every k-th block of a rank in full checkpointing
    (selective_ac_option "k", torchtitan/distributed/activation_checkpoint.py
    _apply_layer_sac at v0.2.2): the largest k that recomputes at least the plan's
    layers on the stage with the most, spread through the stage rather than
    first in each chunk."""
    par = f.par
    if par.recompute == "full" and par.recompute_layers:
        layers = max(f.first_layers, f.middle_layers, f.last_layers)
        every = max(1, layers // min(layers, par.interleave * par.recompute_layers))
        notes.add("torchtitan_layer_checkpointing", every=every, recomputed=layers // every, layers=layers,
                  per_chunk=par.recompute_layers)
        return [("mode", "selective"), ("selective_ac_option", str(every))]
    return [("mode", par.recompute)] + ([("selective_ac_option", "op")] if par.recompute == "selective" else [])


def job_sections(f, notes):
    """[(table, [(key, value)])] in the order the file writes them."""
    parallelism, async_tp = _parallelism(f, notes)
    checkpointing = _checkpointing(f, notes)
    model = _model(f, notes)
    sections = [("model", model), ("training", _training(f)), ("parallelism", parallelism),
                ("activation_checkpoint", checkpointing),
                ("checkpoint", _checkpoint(f, notes))]
    w = f.workload
    if async_tp or _compiles_loss(w, f.par.tp):
        # Async TP needs the model compiled.
        components = (["model"] if async_tp else []) + ["loss"]
        sections.append(("compile", [("enable", True), ("components", components)]))
    if "quantize.grouped_mm.float8" in dict(model).get("converters", ()):
        # The converter quantizes only the modules these names match (components/quantization/float8.py).
        sections.append(("quantize.grouped_mm.float8", [("fqns", ["experts"])]))
    if w.precision == "fp8" and w.fp8_weight_gather and f.par.zero >= 1:
        # FSDP2 gathers the Float8Linear weights in FP8 (Workload.fp8_weight_gather), for every ZeRO stage it runs.
        sections.append(("quantize.linear.float8", [("enable_fsdp_float8_all_gather", True),
                                                    ("precompute_float8_dynamic_scale_for_fsdp", True)]))
    if f.par.dp == 1 and f.par.cp == 1 and f.par.model_parallel > 1:
        # distributed/utils.py maybe_enable_amp: mixed precision is FSDP's; beside TP or PP without it, none.
        notes.add("torchtitan_fp32_without_fsdp")
    if f.workload.dropout:
        notes.add("torchtitan_dropout")
    if attention_kernels(f.workload.stack, f.workload.te_attention) == "torch_native":
        notes.add("torchtitan_cudnn_attention", speedup=cal.STACK_ATTENTION_EFFICIENCY["modern"]
                  / cal.STACK_ATTENTION_EFFICIENCY["torch_native"])
    if not f.modern:
        notes.add("legacy_stack_overlap")
    elif not f.workload.grad_reduce_overlap and f.par.dp * f.par.cp > 1:
        # FSDP2 reduce-scatters each block's gradients from its backward hook: no setting defers them.
        notes.add("torchtitan_grad_reduce_overlapped")
    recompute_modules_note(f, notes)
    mtp_note(f, notes)
    architecture_notes(f, notes)
    launch_notes(f, notes)
    return [(name, pairs) for name, pairs in sections if pairs]


def render(f, texts, framework):
    notes = Notes()
    sections = job_sections(f, notes)
    schedule_note(f, notes, framework, offered=("dualpipev",))
    return comment_block(header_lines(texts, framework, f, notes)) + "\n\n" + toml.tables(sections), notes
