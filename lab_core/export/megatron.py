"""Megatron-LM / Megatron-Core command-line flags for a plan.

Flags and their meaning: megatron/training/arguments.py at core_v0.15.3
(frameworks.FRAMEWORKS["megatron"]). The mapping:

- ZeRO-1 is the distributed optimizer (optimizer state sharded over the
  data-parallel ranks, main gradients kept whole, arXiv:1910.02054 Sec 5.1);
  fewer shard ranks than dp is --num-distributed-optimizer-instances.
- ZeRO-2 / ZeRO-3 are Megatron-FSDP's optim_grads / optim_grads_params
  sharding strategies (--use-megatron-fsdp, which requires the fsdp_dtensor
  checkpoint format, with --use-distributed-optimizer: only the distributed
  optimizer copies its updated weights into FSDP's buffers,
  megatron/core/optimizer/__init__.py). Hybrid sharding (shard over part of
  the data-parallel ranks, replicate across) is
  --num-distributed-optimizer-instances in both cases; Megatron-FSDP then
  builds its hybrid mesh (distributed/fsdp/mcore_fsdp_adapter.py).
- The modern stacks overlap the gradient reduce-scatter and the parameter
  all-gather with compute (--overlap-grad-reduce, --overlap-param-gather);
  the 2021 stack did neither.
- Uneven stages: --decoder-first/last-pipeline-num-layers without
  interleaving. Interleaving: --num-layers-per-virtual-pipeline-stage for even
  splits; an uneven split with interleaving is Megatron-Core's flexible layout
  (--pipeline-model-parallel-layout, pipeline_layout below): the first/last
  stage flags would need the virtual degree to divide those stages' layers
  (megatron/core/transformer/transformer_config.py, TransformerConfig.__post_init__),
  which Llama 3's split (7 layers on the first stage) does not allow.
- Full recompute replays every layer (--recompute-method uniform,
  --recompute-num-layers 1), or the first N of each model chunk when the plan
  recomputes only some (--recompute-method block, --recompute-num-layers N,
  partial_recompute.py); selective recompute is Megatron's own
  (--recompute-granularity selective), of the workload's modules
  (--recompute-modules, recompute_modules.py) when they are not the default.
"""
from ..presets import PRESETS
from ..recompute_modules import named_modules
from .facts import virtual_stage_layers
from .notes import Notes, architecture_notes, comment_block, header_lines, launch_notes, schedule_note


def _parallel_flags(f, notes):
    par, flags = f.par, []
    flags += [("--tensor-model-parallel-size", par.tp), ("--pipeline-model-parallel-size", par.pp)]
    if par.interleave > 1 and f.even:
        flags.append(("--num-layers-per-virtual-pipeline-stage", f.shape.layers // (par.pp * par.interleave)))
    elif par.interleave > 1:
        flags.append(("--pipeline-model-parallel-layout",
                      pipeline_layout(par.pp, par.interleave, f.first_layers, f.middle_layers, f.last_layers,
                                      f.shape.mtp_layers)))
    elif not f.even:
        flags += [("--decoder-first-pipeline-num-layers", f.first_layers),
                  ("--decoder-last-pipeline-num-layers", f.last_layers)]
    if par.cp > 1:
        flags.append(("--context-parallel-size", par.cp))
        if f.workload.cp_all_gather:
            flags.append(("--cp-comm-type", "all_gather"))
    if f.shape.experts is not None:
        flags += [("--expert-model-parallel-size", par.ep), ("--expert-tensor-parallel-size", 1)]
        flags += _expert_overlap_flags(f, notes)
    if par.sequence_parallel:
        flags.append(("--sequence-parallel", None))
    if par.sequence_parallel and par.tp > 1 and f.modern and f.workload.tp_comm_overlap:
        flags.append(("--tp-comm-overlap", None))
    return flags


def pipeline_layout(pp, v, first, middle, last, mtp=0):
    """Megatron-Core's --pipeline-model-parallel-layout string for pp stages of v
    model chunks each holding first, middle and last layers: the pp x v virtual
    stages in schedule order (facts.virtual_stage_layers), "|" between them, "t"
    per transformer layer, the embedding "E" first and the loss "L" last, the
    multi-token-prediction modules "m" before it (docs/user-guide/features/
    multi_token_prediction.md "Layout Format"); a run of equal virtual stages as "(...|)*n"
    (megatron/core/transformer/pipeline_parallel_layer_layout.py at core_v0.15.3,
    parse_str_to_list)."""
    stages = ["t" * layers for layers in virtual_stage_layers(pp, v, first, middle, last)]
    stages[0] = "E" + stages[0]
    runs = []
    for stage in stages[:-1]:
        if runs and runs[-1][0] == stage:
            runs[-1][1] += 1
        else:
            runs.append([stage, 1])
    parts = [f"({stage}|)*{count}" if count > 1 else f"{stage}|" for stage, count in runs]
    return "".join(parts) + stages[-1] + "m" * mtp + "L"


def _expert_overlap_flags(f, notes):
    """Megatron-Core's overlap of the expert all-to-all with another micro-batch's
    compute (v0.14: --overlap-moe-expert-parallel-comm with --delay-wgrad-compute,
    megatron/core/transformer/moe/README.md), which the model assumes unless
    moe_comm_overlap is off. arguments.py accepts it only with expert parallelism,
    without full recompute, and with pipelining only when interleaved: a plan
    outside those gets a note, not the flag."""
    par = f.par
    if not f.workload.moe_comm_overlap or par.ep == 1:
        return []
    if par.recompute == "full" or (par.pp > 1 and par.interleave == 1):
        notes.add("megatron_moe_overlap", ep=par.ep)
        return []
    return [("--overlap-moe-expert-parallel-comm", None), ("--delay-wgrad-compute", None)]


def _data_parallel_flags(f, notes):
    par, flags = f.par, []
    if par.zero == 1:
        flags.append(("--use-distributed-optimizer", None))
        if par.dp_shard and par.dp_shard < par.dp:
            flags.append(("--num-distributed-optimizer-instances", par.dp // par.dp_shard))
    elif par.zero >= 2:
        strategy = "optim_grads" if par.zero == 2 else "optim_grads_params"
        flags += [("--use-megatron-fsdp", None), ("--use-distributed-optimizer", None),
                  ("--data-parallel-sharding-strategy", strategy), ("--ckpt-format", "fsdp_dtensor")]
        if par.dp_shard and par.dp_shard < par.dp:
            flags.append(("--num-distributed-optimizer-instances", par.dp // par.dp_shard))
    if par.zero >= 1 and f.workload.precision == "fp8" and f.workload.fp8_weight_gather:
        # The distributed optimizer's gather of the updated weights, or Megatron-FSDP's per-layer one, in FP8.
        flags.append(("--fp8-param-gather", None))
    if par.dp > 1 and f.modern:
        if f.workload.grad_reduce_overlap:
            flags.append(("--overlap-grad-reduce", None))
        if par.zero >= 1:
            flags.append(("--overlap-param-gather", None))
    elif par.dp > 1:
        notes.add("legacy_stack_overlap")
    return flags


def _recompute_flags(f):
    par = f.par
    if par.recompute == "full" and par.recompute_layers:
        return [("--recompute-granularity", "full"), ("--recompute-method", "block"),
                ("--recompute-num-layers", par.recompute_layers)]
    if par.recompute == "full":
        return [("--recompute-granularity", "full"), ("--recompute-method", "uniform"), ("--recompute-num-layers", 1)]
    if par.recompute == "selective":
        # Megatron-Core's default modules are the attention core alone (transformer_config.py).
        modules = named_modules(par.recompute, f.workload.recompute_modules)
        return [("--recompute-granularity", "selective")] + ([("--recompute-modules", modules)] if modules else [])
    return []


def _model_flags(f, notes):
    shape, arch = f.shape, f.architecture
    flags = [("--num-layers", shape.layers), ("--hidden-size", shape.hidden), ("--ffn-hidden-size", f.ffn),
             ("--num-attention-heads", shape.heads)]
    if shape.kv_heads < shape.heads:
        flags += [("--group-query-attention", None), ("--num-query-groups", shape.kv_heads)]
    flags += [("--seq-length", f.workload.seq_len), ("--max-position-embeddings", f.workload.seq_len),
              ("--vocab-size", shape.vocab)]
    if arch and arch["gated_mlp"]:
        flags.append(("--swiglu", None))
    if arch and arch["rope"]:
        flags.append(("--position-embedding-type", "rope"))
    if arch and arch["rmsnorm"]:
        flags.append(("--normalization", "RMSNorm"))
    if arch and not arch["bias"]:
        flags.append(("--disable-bias-linear", None))
    elif shape.experts is not None:
        # Megatron-Core's grouped expert GEMMs take no biases (moe/experts.py asserts it).
        flags.append(("--disable-bias-linear", None))
        notes.add("megatron_moe_no_bias")
    if f.preset and PRESETS[f.preset]["untied_output"]:
        flags.append(("--untie-embeddings-and-output-weights", None))
    experts = shape.experts
    if experts is not None:
        flags += [("--num-experts", experts.count), ("--moe-router-topk", experts.per_token),
                  ("--moe-ffn-hidden-size", f.expert_ffn), ("--moe-grouped-gemm", None),
                  ("--moe-token-dispatcher-type", "alltoall")]
        if f.workload.moe_dispatcher == "per_node":
            # DeepEP: one copy of a token per target node (Megatron-Core v0.12, moe/README.md).
            flags[-1] = ("--moe-token-dispatcher-type", "flex")
            flags.append(("--moe-enable-deepep", None))
        if experts.shared:
            flags.append(("--moe-shared-expert-intermediate-size", experts.shared * f.expert_ffn))
        if experts.dense_layers:
            pattern = f"([0]*{experts.dense_layers}+[1]*{experts.moe_layers})"
            flags.append(("--moe-layer-freq", pattern))
        if experts.groups:
            # Group-limited routing (moe.py; megatron/core/transformer/moe/moe_utils.py group_limited_topk).
            flags += [("--moe-router-num-groups", experts.groups), ("--moe-router-group-topk", experts.groups_per_token)]
    if shape.mtp_layers:
        # Multi-token prediction on the last stage (Megatron-Core's default placement), which does not run
        # with context parallelism (docs/user-guide/features/multi_token_prediction.md "Unsupported Combinations").
        flags.append(("--mtp-num-layers", shape.mtp_layers))
        if f.par.cp > 1:
            notes.add("megatron_mtp_context_parallel", cp=f.par.cp)
    if not f.workload.dropout:
        flags += [("--hidden-dropout", 0.0), ("--attention-dropout", 0.0)]
    flags.append(("--attention-backend", "flash" if f.workload.flash_attention else "unfused"))
    return flags


LOCAL_CHECKPOINT_DIR = "/dev/shm/megatron-local-ckpt"
REPLICATION_FACTOR = 2


def _in_memory_flags(f, notes):
    """In-memory checkpoints (a snapshot in host memory, copied to a peer
    machine) as Megatron's local non-persistent checkpoints: each rank saves
    its shard under a node-local directory, here the RAM-backed /dev/shm, and
    with --replication nvidia_resiliency_ext copies it to the ranks
    --replication-jump apart, one node away. Megatron-LM's validate_args
    refuses the "in_memory" type it lists (arguments.py at core_v0.15.3:
    "Currently only global and local checkpoints are supported") and needs
    --non-persistent-local-ckpt-dir for "local". Replicas form cliques of
    REPLICATION_FACTOR nodes, so a plan on an odd number of nodes or a
    part-used last node keeps its copies on its own node, with a note.
    Persistent saves every IN_MEMORY_PERSIST_EVERY of them."""
    flags = [("--non-persistent-ckpt-type", "local"), ("--non-persistent-local-ckpt-dir", LOCAL_CHECKPOINT_DIR)]
    numbers = dict(save_interval_steps=f.save_interval_steps, persist_interval_steps=f.persist_interval_steps)
    if f.nodes >= REPLICATION_FACTOR and f.nodes % REPLICATION_FACTOR == 0 and not f.last_node_gpus:
        flags += [("--replication", None), ("--replication-jump", f.gpus_per_node),
                  ("--replication-factor", REPLICATION_FACTOR)]
        notes.add("megatron_in_memory", **numbers)
    else:
        notes.add("megatron_in_memory_unreplicated", nodes=f.nodes, **numbers)
    return flags + [("--non-persistent-save-interval", f.save_interval_steps),
                    ("--save-interval", f.persist_interval_steps)]


def _checkpoint_flags(f, notes, fsdp):
    """--async-save for async checkpoints (torch_dist format only, so not with
    Megatron-FSDP: checkpointing.py raises NotImplementedError for fsdp_dtensor
    at the first save); in-memory checkpoints as _in_memory_flags."""
    if f.checkpoint_mode == "in_memory":
        return _in_memory_flags(f, notes)
    flags = [("--save-interval", f.save_interval_steps)]
    if f.checkpoint_mode == "async" and fsdp:
        notes.add("megatron_async_fsdp")
    elif f.checkpoint_mode == "async":
        flags.append(("--async-save", None))
    return flags


def _training_flags(f, notes):
    par, flags = f.par, []
    flags += [("--micro-batch-size", par.micro_batch), ("--global-batch-size", f.batch),
              ("--train-iters", f.train_steps)]
    # Megatron-FSDP shards over data- and context-parallel ranks together, so a ZeRO-2/3 plan with dp 1 is FSDP too.
    flags += _checkpoint_flags(f, notes, par.zero >= 2)
    flags.append(("--bf16", None))
    if f.workload.precision == "fp8":
        # Delayed scaling refuses the layernorm and moe_act recompute modules (transformer_config.py,
        # __post_init__): with either, per-tensor current scaling (tensorwise), which needs Transformer Engine 2.6.
        modules = named_modules(par.recompute, f.workload.recompute_modules)
        current = "layernorm" in modules or "moe_act" in modules
        flags += [("--fp8-format", "hybrid"), ("--fp8-recipe", "tensorwise" if current else "delayed")]
        if current:
            notes.add("megatron_fp8_current_scaling")
    return flags


def megatron_flags(f, notes):
    """[(flag, value or None)] in the order the file writes them."""
    flags = _parallel_flags(f, notes) + _data_parallel_flags(f, notes) + _recompute_flags(f)
    flags += _training_flags(f, notes) + _model_flags(f, notes)
    architecture_notes(f, notes)
    launch_notes(f, notes)
    notes.add("megatron_paths")
    return flags


def _needs_one_connection(f, flags):
    """Megatron asserts CUDA_DEVICE_MAX_CONNECTIONS=1 for TP or CP before Blackwell, except with FSDP."""
    names = {flag for flag, _ in flags}
    return (f.par.tp > 1 or f.par.cp > 1) and "--use-megatron-fsdp" not in names


def _value(value):
    if isinstance(value, tuple):  # a flag of several values (nargs), one word each
        return " ".join(_value(item) for item in value)
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    return f'"{text}"' if any(c in text for c in "()*+[] ") else text


def _torchrun(f):
    """The launcher line(s). torchrun starts --nproc-per-node processes on every node it runs on, and Megatron
    asserts that tensor x pipeline x context parallel divides the world size (arguments.py): a plan whose GPUs
    leave the last node part-used starts fewer there, chosen by NODE_RANK (PyTorch's elastic agent numbers the
    ranks across nodes of different sizes, torch/distributed/elastic/agent/server/api.py)."""
    if not (f.last_node_gpus and f.full_nodes):
        return f"torchrun --nnodes {f.nodes} --nproc-per-node {f.gpus_per_node}"
    return (f"NPROC_PER_NODE=$(( NODE_RANK < {f.full_nodes} ? {f.gpus_per_node} : {f.last_node_gpus} ))\n"
            f'torchrun --nnodes {f.nodes} --node-rank "$NODE_RANK" --nproc-per-node "$NPROC_PER_NODE"')


def render(f, texts, framework):
    notes = Notes()
    flags = megatron_flags(f, notes)
    schedule_note(f, notes, framework)
    lines = [comment_block(header_lines(texts, framework, f, notes)), ""]
    if _needs_one_connection(f, flags):
        lines.append("export CUDA_DEVICE_MAX_CONNECTIONS=1")
    lines.append(_torchrun(f) + " pretrain_gpt.py \\")
    body = [f"    {flag}" if value is None else f"    {flag} {_value(value)}" for flag, value in flags]
    lines.append(" \\\n".join(body))
    return "\n".join(lines) + "\n", notes
