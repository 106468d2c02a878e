"""Readers of the launch exports, written independently of lab_core.export:
each turns a file back into the layout it describes, as the framework would
read it (tests/export/test_export.py compares that layout with the plan's)."""
import json
import re
import shlex
import tomllib
from pathlib import Path

EXPORT_LISTS = Path(__file__).resolve().parents[2] / "content" / "export"


def key_list(name):
    """(header lines, set of keys) of a checked-in key list."""
    lines = (EXPORT_LISTS / name).read_text(encoding="utf-8").splitlines()
    header = [line[2:] for line in lines if line.startswith("# ")]
    return header, {line for line in lines if line and not line.startswith("#")}


def _ranks(launcher, nodes_line):
    """The world size torchrun starts: --nproc-per-node on each of --nnodes, or, where the script picks the count
    by node rank (NPROC_PER_NODE=$(( NODE_RANK < a ? b : c ))), b on the first a nodes and c on the rest."""
    nodes, per_node = int(launcher["--nnodes"]), launcher["--nproc-per-node"]
    if per_node != "$NPROC_PER_NODE":
        return nodes * int(per_node)
    full, size, rest = map(int, re.fullmatch(r"NPROC_PER_NODE=\$\(\( NODE_RANK < (\d+) \? (\d+) : (\d+) \)\)",
                                             nodes_line).groups())
    assert launcher["--node-rank"] == "$NODE_RANK" and 0 < full < nodes and 0 < rest < size
    return full * size + (nodes - full) * rest


def megatron_flags(text):
    """{flag: value or True} after pretrain_gpt.py, and the number of ranks torchrun starts."""
    lines = [line for line in text.splitlines() if not line.startswith(("#", "export "))]
    per_node = [line for line in lines if line.startswith("NPROC_PER_NODE=")]
    command = " ".join(line.rstrip("\\") for line in lines if not line.startswith("NPROC_PER_NODE="))
    words = shlex.split(command)
    start = words.index("pretrain_gpt.py")
    launcher = dict(zip(words[1:start:2], words[2:start:2]))
    flags, i = {}, start + 1
    while i < len(words):
        flag = words[i]
        assert flag.startswith("--"), flag
        values = []
        while i + 1 + len(values) < len(words) and not words[i + 1 + len(values)].startswith("--"):
            values.append(words[i + 1 + len(values)])
        # A flag of several values (argparse nargs, e.g. --recompute-modules) as a tuple of them.
        flags[flag] = True if not values else values[0] if len(values) == 1 else tuple(values)
        i += 1 + len(values)
    return flags, _ranks(launcher, per_node[0] if per_node else None)


def unroll_layout(layout):
    """A --pipeline-model-parallel-layout string as its virtual stages (lists of 'E', 't', 'L'):
    commas dropped, '(x)*n' and 'c*n' repeated, stages split at '|' (Megatron-Core's
    PipelineParallelLayerLayout.parse_str_to_list, re-implemented)."""
    text = layout.replace(",", "")
    while "(" in text:
        start = text.rindex("(")
        end = text.index(")", start)
        digits = re.match(r"\*(\d+)", text[end + 1:])
        text = text[:start] + text[start + 1:end] * int(digits.group(1)) + text[end + 1 + len(digits.group(0)):]
    text = re.sub(r"(.)\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    return [list(stage) for stage in text.split("|")]


def _layout_stages(flags, pp, layers):
    """(v, first, last) of the flexible layout, checked as Megatron-Core checks it (pipeline_parallel_layer_layout.py:
    the embedding opens and the loss closes it, once each, with every transformer layer; the multi-token-prediction
    modules, as many as --mtp-num-layers, all in one virtual stage and not on the first rank (docs/user-guide/
    features/multi_token_prediction.md "Constraints"); stage c pp + r is chunk c of pipeline rank r)."""
    stages = unroll_layout(flags["--pipeline-model-parallel-layout"])
    assert len(stages) % pp == 0, stages
    flat = [layer for stage in stages for layer in stage]
    assert flat[0] == "E" and flat[-1] == "L" and flat.count("E") == 1 and flat.count("L") == 1, flat
    assert set(flat) <= {"E", "t", "m", "L"} and flat.count("t") == layers
    mtp = int(flags.get("--mtp-num-layers", 0))
    assert flat.count("m") == mtp, (flat.count("m"), mtp)
    if mtp:
        holding = [i for i, stage in enumerate(stages) if "m" in stage]
        assert len(holding) == 1 and holding[0] % pp != 0, holding
    v = len(stages) // pp
    per_rank = [sum(stages[c * pp + r].count("t") for c in range(v)) for r in range(pp)]
    assert len(set(per_rank[1:-1])) <= 1, per_rank
    return v, per_rank[0], per_rank[-1]


def _megatron_startup_checks(flags):
    """What Megatron-LM (core_v0.15.3) refuses about saving and Megatron-FSDP before the first step, or at the first
    save: validate_args takes only global or local non-persistent checkpoints, local ones need a directory and
    replication a jump; Megatron-FSDP saves fsdp_dtensor, which has no asynchronous save (checkpointing.py), and only
    the distributed optimizer hands its weights back to FSDP (optimizer/__init__.py)."""
    assert flags.get("--non-persistent-ckpt-type", "local") in ("global", "local"), flags["--non-persistent-ckpt-type"]
    if flags.get("--non-persistent-ckpt-type") == "local":
        assert "--non-persistent-local-ckpt-dir" in flags
    if "--replication" in flags:
        assert flags.get("--non-persistent-ckpt-type") == "local" and "--replication-jump" in flags
    if "--use-megatron-fsdp" in flags:
        assert flags["--ckpt-format"] == "fsdp_dtensor" and "--async-save" not in flags
        assert "--use-distributed-optimizer" in flags


def megatron_layout(text, layers):
    flags, ranks = megatron_flags(text)
    _megatron_startup_checks(flags)
    tp, pp = int(flags["--tensor-model-parallel-size"]), int(flags["--pipeline-model-parallel-size"])
    cp = int(flags.get("--context-parallel-size", 1))
    # arguments.py: the world size is a multiple of tensor x pipeline x context parallel.
    assert ranks % (tp * pp * cp) == 0, (ranks, tp, pp, cp)
    dp = ranks // (tp * pp * cp)
    virtual = ("--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
               "--pipeline-model-parallel-layout")
    assert sum(flag in flags for flag in virtual) <= 1, "arguments.py takes at most one of " + ", ".join(virtual)
    first = int(flags.get("--decoder-first-pipeline-num-layers", layers // pp))
    last = int(flags.get("--decoder-last-pipeline-num-layers", layers // pp))
    if "--num-layers-per-virtual-pipeline-stage" in flags:
        v = layers // (pp * int(flags["--num-layers-per-virtual-pipeline-stage"]))
    elif "--pipeline-model-parallel-layout" in flags:
        assert "--decoder-first-pipeline-num-layers" not in flags and "--decoder-last-pipeline-num-layers" not in flags
        v, first, last = _layout_stages(flags, pp, layers)
    else:
        v = int(flags.get("--num-virtual-stages-per-pipeline-rank", 1))
        if v > 1 and ("--decoder-first-pipeline-num-layers" in flags or "--decoder-last-pipeline-num-layers" in flags):
            # TransformerConfig.__post_init__: the virtual degree divides the first, last and middle stages' layers.
            middle = (layers - first - last) // (pp - 2) if pp > 2 else v
            assert first % v == 0 and last % v == 0 and middle % v == 0, (first, middle, last, v)
    strategy = flags.get("--data-parallel-sharding-strategy")
    zero = {"optim_grads": 2, "optim_grads_params": 3}.get(strategy, 1 if "--use-distributed-optimizer" in flags else 0)
    shard = dp // int(flags.get("--num-distributed-optimizer-instances", 1))
    return {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "ep": int(flags.get("--expert-model-parallel-size", 1)),
            "zero": zero, "recompute": flags.get("--recompute-granularity", "none"),
            # --recompute-method block: the first --recompute-num-layers of each chunk (uniform: all of them).
            "recompute_layers": int(flags["--recompute-num-layers"]) if flags.get("--recompute-method") == "block" else 0,
            "sequence_parallel": "--sequence-parallel" in flags, "micro_batch": int(flags["--micro-batch-size"]),
            "interleave": v, "shard": shard, "first": first, "last": last,
            "batch": int(flags["--global-batch-size"])}


def toml_keys(document, prefix=""):
    keys = set()
    for key, value in document.items():
        if isinstance(value, dict):
            keys |= toml_keys(value, f"{prefix}{key}.")
        else:
            keys.add(prefix + key)
    return keys


def _generated_model_parts(stages, layers, input_weight, output_weight):
    """torchtitan v0.2.2's generate_llm_fqn_per_model_part (distributed/pipeline_parallel.py), re-implemented with
    its refusals: the embedding and the output layer count as input/output_weight layers, the effective layers
    spread evenly, the first stages taking the remainder, and neither weight may exceed a stage's share."""
    effective = layers + input_weight + output_weight
    per_stage, extra = divmod(effective, stages)
    assert stages <= effective and per_stage >= 1, (stages, effective)
    assert input_weight <= per_stage and output_weight <= per_stage, (input_weight, output_weight, per_stage)
    parts, current = [], 0
    for i in range(stages):
        share = per_stage + (i < extra) - (input_weight if i == 0 else output_weight if i == stages - 1 else 0)
        names = [f"layers.{n}" for n in range(current, min(current + share, layers))]
        current += len(names)
        parts.append((["tok_embeddings"] if i == 0 else []) + names + (["norm", "output"] if i == stages - 1 else []))
    return parts


def _torchtitan_model_parts(par, layers, pp):
    """The modules of each virtual stage as pipeline_llm (v0.2.2) builds them: module_fqns_per_model_part where
    given, else the generated split of ceil((layers + first_less + last_less) / layers_per_stage) virtual stages,
    a multiple of pp, one per rank for 1F1B and at least two for a looped schedule. Every layer is in exactly one
    stage, the embedding in the first and the output layer in the last."""
    looped = par["pipeline_parallel_schedule"] != "1F1B"
    if "module_fqns_per_model_part" in par:
        parts = par["module_fqns_per_model_part"]
    else:
        # The keys' defaults in job_config.py: one layer less on the first and last stage.
        first_less = par.get("pipeline_parallel_first_stage_less_layers", 1)
        last_less = par.get("pipeline_parallel_last_stage_less_layers", 1)
        stages = -(-(layers + first_less + last_less) // par["pipeline_parallel_layers_per_stage"])
        assert stages % pp == 0, (stages, pp)
        parts = _generated_model_parts(stages, layers, first_less, last_less)
    per_rank = len(parts) // pp
    assert len(parts) % pp == 0 and (per_rank >= 2 if looped else per_rank == 1), (len(parts), pp, looped)
    flat = [name for part in parts for name in part]
    assert flat == ["tok_embeddings"] + [f"layers.{n}" for n in range(layers)] + ["norm", "output"], flat
    assert parts[0][0] == "tok_embeddings" and parts[-1][-2:] == ["norm", "output"]
    return parts


def torchtitan_layout(text, layers):
    job = tomllib.loads(text)
    par, training = job["parallelism"], job["training"]
    tp, pp = par["tensor_parallel_degree"], par.get("pipeline_parallel_degree", 1)
    replicate, shard = par["data_parallel_replicate_degree"], par["data_parallel_shard_degree"]
    # FSDP under a pipeline holds whole weights and gradients through the step: ZeRO-1
    # (lab_core.parallelism.zero_stages); without one "never" is ZeRO-2, "always" ZeRO-3.
    zero = 0 if shard == 1 else 1 if pp > 1 else {"never": 2, "always": 3}[par["fsdp_reshard_after_forward"]]
    if pp > 1:
        parts = _torchtitan_model_parts(par, layers, pp)
        v = len(parts) // pp

        def layer_count(part):
            return len([m for m in part if m.startswith("layers.")])

        if par["pipeline_parallel_schedule"] == "DualPipeV":
            # The "v" placement: rank r runs stage r and stage 2 pp - 1 - r, one chunk each way (the lab's
            # interleave 1: the schedule places its two chunks itself).
            assert v == 2, v
            per_rank = [layer_count(parts[r]) + layer_count(parts[2 * pp - 1 - r]) for r in range(pp)]
            v = 1
        else:
            # The "loop" placement: virtual stage i runs on pipeline rank i % pp.
            per_rank = [sum(layer_count(parts[c * pp + r]) for c in range(v)) for r in range(pp)]
        assert len(set(per_rank[1:-1])) <= 1, per_rank
        first, last, micro = per_rank[0], per_rank[-1], par["pipeline_parallel_microbatch_size"]
        micro_batches = training["local_batch_size"] // micro
        # A part with no module gets an optimizer with no parameters, which PyTorch refuses.
        empty = sum(1 for part in parts if not part)
    else:
        v, first, last, micro, empty = 1, layers, layers, training["local_batch_size"], 0
        micro_batches = training["global_batch_size"] // (micro * replicate * shard)
    checkpointing = job["activation_checkpoint"]
    # Layer-wise selective checkpointing ("k": every k-th block checkpointed whole) is full recompute of some layers.
    option = str(checkpointing.get("selective_ac_option", ""))
    every = int(option) if checkpointing["mode"] == "selective" and option.isdigit() else 0
    return {"tp": tp, "pp": pp, "dp": replicate * shard, "cp": par["context_parallel_degree"],
            "ep": par.get("expert_parallel_degree", 1), "zero": zero,
            "recompute": "full" if every else checkpointing["mode"], "layer_every": every,
            "sequence_parallel": tp > 1, "micro_batch": micro, "interleave": v, "shard": shard if zero else replicate,
            "first": first, "last": last, "batch": training["global_batch_size"], "micro_batches": micro_batches,
            "empty_stages": empty}, job


def deepspeed_layout(text, ranks):
    """The layout a DeepSpeed config describes when launched on ``ranks`` GPUs, checked as DeepSpeed checks it:
    train_batch_size, where given, is micro-batch x accumulation x the data-parallel world DeepSpeed counts (all
    ranks without a pipeline, ranks / stages with one: deepspeed/runtime/config.py, PipelineModule's default
    topology); AutoTP runs ZeRO stage 2 at most and not with the pipeline engine (runtime/engine.py)."""
    config = json.loads(text)
    zero = config["zero_optimization"]
    pp = config.get("pipeline", {}).get("stages", 1)
    tp = config.get("tensor_parallel", {}).get("autotp_size", 1)
    micro, steps = config["train_micro_batch_size_per_gpu"], config["gradient_accumulation_steps"]
    batch = config.get("train_batch_size")
    if batch is not None:
        assert batch == micro * steps * (ranks // pp), (batch, micro, steps, ranks, pp)
    if tp > 1:
        assert pp == 1 and zero["stage"] <= 2, (tp, pp, zero["stage"])
    dp = None if batch is None else batch // (micro * steps)
    return {"pp": pp, "tp": tp, "dp": dp, "zero": zero["stage"], "micro_batch": micro, "micro_batches": steps,
            "batch": batch, "recompute": "full" if "activation_checkpointing" in config else "none",
            "shard": zero.get("mics_shard_size", dp),
            "grad_accum_dtype": config.get("data_types", {}).get("grad_accum_dtype")}, config


def _dense_then_moe(pattern):
    """Dense layers before the experts of a --moe-layer-freq pattern "([0]*d+[1]*m)"."""
    dense, moe = (part.split("*") for part in pattern.strip("()").split("+"))
    assert dense[0] == "[0]" and moe[0] == "[1]", pattern
    return int(dense[1])


def megatron_model(text):
    """The model shape and number format the Megatron flags describe, in lab_core's
    terms: a SwiGLU inner size f is the lab's 1.5 f (shape.py, moe.py)."""
    flags, _ = megatron_flags(text)
    gated = "--swiglu" in flags
    inner = (lambda size: int(size) * 3 // 2) if gated else int
    heads = int(flags["--num-attention-heads"])
    model = {"layers": int(flags["--num-layers"]), "hidden": int(flags["--hidden-size"]), "heads": heads,
             "kv_heads": int(flags.get("--num-query-groups", heads)), "ffn_hidden": inner(flags["--ffn-hidden-size"]),
             "vocab": int(flags["--vocab-size"]), "seq_len": int(flags["--seq-length"]),
             "precision": "fp8" if "--fp8-format" in flags else "bf16", "experts": None}
    if "--moe-grouped-gemm" in flags:
        # Megatron-Core's grouped expert GEMMs assert the linear layers have no bias (moe/experts.py).
        assert "--disable-bias-linear" in flags
    if "--num-experts" in flags:
        expert = int(flags["--moe-ffn-hidden-size"])
        model["experts"] = {"experts": int(flags["--num-experts"]), "experts_per_token": int(flags["--moe-router-topk"]),
                            "expert_ffn_hidden": inner(expert),
                            "shared_experts": int(flags.get("--moe-shared-expert-intermediate-size", 0)) // expert,
                            "dense_layers": _dense_then_moe(flags["--moe-layer-freq"]) if "--moe-layer-freq" in flags else 0,
                            # Group-limited routing: a group top-k needs the group count (transformer_config.py);
                            # 0 when unset.
                            "expert_groups": int(flags.get("--moe-router-num-groups", 0)),
                            "expert_groups_per_token": int(flags.get("--moe-router-group-topk", 0))}
    return model, flags
