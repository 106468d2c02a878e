"""lab_core.export: the launch configurations parse, use only keys taken from
the cited framework sources, and read back to the plan they came from; what a
framework cannot express is a note, in both languages, never a wrong key."""
import json
import re
import tomllib

import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from lab_core import Parallelism, Workload, evaluate, export, preset_inputs, recommend
from lab_core.calibration import COMPILED_LOSS_BYTES_PER_LOGIT, LOSS_BYTES_PER_LOGIT, STACK_ATTENTION_EFFICIENCY
from lab_core.context import context_for
from lab_core.errors import LabInputError
from lab_core.export import FORMATS
from lab_core.export.frameworks import FRAMEWORKS
from lab_core.export.toml import tables, value
from lab_core.parallelism import check_layout
from launch_readers import (deepspeed_layout, key_list, megatron_flags, megatron_layout, megatron_model, toml_keys,
                            torchtitan_layout)

CATALOGS = load_catalogs()
TEXTS = {lang: CATALOGS[lang]["export"] for lang in LANGUAGES}


def _preset(name, **inputs):
    return Workload(**{**preset_inputs(name), **inputs})


# (id, workload, parallelism or None for the planner's plan)
CASES = [
    ("llama3-70b-planned", _preset("llama3-70b", gpus=512, gpu="h100_80gb", global_batch_tokens=4 * 1024 * 1024), None),
    ("gpt3-planned", _preset("gpt3-175b", gpus=1024, global_batch_tokens=1536 * 2048), None),
    ("gpt3-legacy", _preset("gpt3-175b", gpus=1536, global_batch_tokens=1536 * 2048, stack="megatron_lm_2021",
                            flash_attention=False),
     Parallelism(tp=8, pp=12, dp=16, recompute="full", micro_batch=1)),
    ("llama3-8b-zero3-selective", _preset("llama3-8b", gpus=8, gpu="h100_80gb", global_batch_tokens=128 * 8192),
     Parallelism(tp=1, pp=1, dp=8, zero=3, recompute="selective", micro_batch=2)),
    ("llama3-8b-hsdp", _preset("llama3-8b", gpus=128, gpu="h100_80gb", global_batch_tokens=256 * 8192, precision="fp8",
                               fp8_weight_gather=True),
     Parallelism(tp=1, pp=1, dp=128, zero=3, dp_shard=8, micro_batch=2)),
    ("zero1-instances", _preset("llama3-70b", gpus=256, gpu="h100_80gb", global_batch_tokens=512 * 8192),
     Parallelism(tp=8, pp=4, dp=8, zero=1, dp_shard=4, sequence_parallel=True, micro_batch=1, interleave=5)),
    ("llama3-405b-128k-cp", _preset("llama3-405b-128k", gpus=16384, gpu="h100_80gb", global_batch_tokens=16 * 1024 * 1024,
                                    cp_all_gather=True),
     Parallelism(tp=8, cp=16, pp=16, dp=8, zero=1, sequence_parallel=True, micro_batch=1, recompute="full",
                 first_stage_layers=7, last_stage_layers=7)),
    ("deepseek-v3-ep", _preset("deepseek-v3", gpus=1024, gpu="h800_80gb", global_batch_tokens=8192 * 4096, precision="fp8"),
     Parallelism(tp=2, pp=8, dp=64, ep=64, zero=1, sequence_parallel=True, micro_batch=1, interleave=4,
                 first_stage_layers=5, last_stage_layers=8)),
    # The distributed optimizer gathers its updated weights in FP8 (--fp8-param-gather).
    ("llama3-70b-fp8-param-gather", _preset("llama3-70b", gpus=256, gpu="h100_80gb", global_batch_tokens=512 * 8192,
                                            precision="fp8", fp8_weight_gather=True),
     Parallelism(tp=8, pp=4, dp=8, zero=1, sequence_parallel=True, micro_batch=1, interleave=5)),
    # Full recompute of the first 3 layers of each of the 2 chunks of a stage (Megatron's block method).
    ("llama3-70b-partial-recompute", _preset("llama3-70b", gpus=256, gpu="h100_80gb", global_batch_tokens=512 * 8192),
     Parallelism(tp=8, pp=4, dp=8, zero=1, sequence_parallel=True, micro_batch=1, interleave=2, recompute="full",
                 recompute_layers=3)),
    ("pipeline-zero3", _preset("llama3-70b", gpus=256, gpu="h100_80gb", global_batch_tokens=512 * 8192),
     Parallelism(tp=8, pp=4, dp=8, zero=3, sequence_parallel=True, micro_batch=1)),
    # ZeRO-1 without a pipeline: torchtitan writes it as ZeRO-2, which syncs per micro-batch (4 of them, then 1).
    ("zero1-accumulation", _preset("llama3-8b", gpus=64, gpu="h100_80gb", global_batch_tokens=256 * 8192),
     Parallelism(tp=1, pp=1, dp=64, zero=1, micro_batch=1)),
    ("zero1-one-micro-batch", _preset("llama3-8b", gpus=64, gpu="h100_80gb", global_batch_tokens=64 * 8192),
     Parallelism(tp=1, pp=1, dp=64, zero=1, micro_batch=1)),
    ("custom-single-gpu", Workload(params=125e6, gpus=1), Parallelism()),
    # A mixture of experts on the lab's own (biased) shape: Megatron's grouped expert GEMMs need the biases off.
    ("mixtral-like-planned", Workload(params=141e9, layers=56, hidden=6144, heads=48, kv_heads=8, ffn_hidden=24576,
                                      vocab=32768, experts=8, experts_per_token=2, expert_ffn_hidden=24576, gpus=128,
                                      seq_len=16384, global_batch_tokens=16777216, gpu="h100_80gb"), None),
    # 12 GPUs on nodes of 8: the launch starts 8 processes on node 0 and 4 on node 1, never 16.
    ("partial-node", _preset("llama3-8b", gpus=12, gpu="h100_80gb", global_batch_tokens=96 * 8192),
     Parallelism(tp=4, pp=1, dp=3, zero=1, sequence_parallel=True, micro_batch=2)),
    # Fewer micro-batches (4) than stages (8): torchtitan runs 8 of 1 sequence; with 4 sequences it cannot.
    ("pipeline-short-split", _preset("llama3-70b", gpus=64, gpu="h100_80gb", global_batch_tokens=8 * 8192),
     Parallelism(tp=8, pp=8, dp=1, sequence_parallel=True, micro_batch=2)),
    ("pipeline-short-refused", _preset("llama3-70b", gpus=64, gpu="h100_80gb", global_batch_tokens=4 * 8192),
     Parallelism(tp=8, pp=8, dp=1, sequence_parallel=True, micro_batch=1)),
    ("custom-tp-no-sp", Workload(params=13e9, gpus=64, global_batch_tokens=512 * 2048),
     Parallelism(tp=8, pp=1, dp=8, zero=0, micro_batch=2)),
    # Llama 3's own split with interleaving: 7 layers on the first and last stage, 8 chunks per GPU, which
    # Megatron-Core's first/last stage flags cannot take (the flexible layout can).
    ("llama3-405b-uneven-interleaved", _preset("llama3-405b", gpus=16384, gpu="h100_80gb",
                                               global_batch_tokens=16 * 1024 * 1024),
     Parallelism(tp=8, pp=16, dp=128, zero=1, sequence_parallel=True, micro_batch=1, interleave=8,
                 first_stage_layers=7, last_stage_layers=7)),
    # An MoE at ZeRO-3 (DeepSpeed's MoE layers take stage 2 at most) with in-memory checkpoints (Megatron's local
    # checkpoints, replicated across the 8 nodes in pairs).
    ("moe-zero3-in-memory", _preset("mixtral-8x7b", gpus=64, gpu="h100_80gb", global_batch_tokens=256 * 32768,
                                    checkpoint_mode="in_memory"),
     Parallelism(dp=64, ep=8, zero=3, micro_batch=1)),
    # DeepSeek-V3's 61 layers as 5 + 8 x 6 + 8 over 4 chunks: torchtitan's generated split takes the first rank's
    # 3 missing layers off its first chunk of 2, which it refuses, so each virtual stage's modules are named.
    ("deepseek-v3-interleaved-uneven", _preset("deepseek-v3", gpus=512, gpu="h800_80gb",
                                               global_batch_tokens=4096 * 4096, precision="fp8"),
     Parallelism(pp=8, dp=64, ep=64, zero=1, micro_batch=1, interleave=4, first_stage_layers=5, last_stage_layers=8)),
    # The same over 8 chunks on 8 stages: the first rank's embedding and 6 layers cannot fill 8 chunks.
    ("deepseek-v3-empty-stage", _preset("deepseek-v3", gpus=2048, gpu="h800_80gb",
                                        global_batch_tokens=4096 * 4096, precision="fp8"),
     Parallelism(tp=8, pp=8, dp=32, ep=256, zero=1, sequence_parallel=True, micro_batch=1, interleave=8,
                 first_stage_layers=6, last_stage_layers=7)),
    # The bidirectional schedules: torchtitan runs DualPipeV (two chunks a rank, named module by module, the
    # first going down the ranks and the second back up); DualPipe, and DualPipeV elsewhere, are a note.
    ("deepseek-v3-dualpipev", _preset("deepseek-v3", gpus=1024, gpu="h800_80gb", global_batch_tokens=8192 * 4096,
                                      precision="fp8", pipeline_schedule="dualpipev"),
     Parallelism(pp=16, dp=64, ep=64, zero=1, micro_batch=1, first_stage_layers=2, last_stage_layers=3)),
    # One layer on the first and on the last rank: the last rank's second chunk has no module, which torchtitan
    # refuses (a note; the first rank's second chunk holds the output layer).
    ("llama3-70b-dualpipev-one-layer-ends", _preset("llama3-70b", gpus=512, gpu="h100_80gb",
                                                   global_batch_tokens=4 * 1024 * 1024, pipeline_schedule="dualpipev"),
     Parallelism(tp=8, pp=4, dp=16, zero=1, sequence_parallel=True, micro_batch=1, first_stage_layers=1,
                 last_stage_layers=1)),
    ("llama3-70b-dualpipe", _preset("llama3-70b", gpus=512, gpu="h100_80gb", global_batch_tokens=4 * 1024 * 1024,
                                    pipeline_schedule="dualpipe"),
     Parallelism(tp=8, pp=4, dp=16, zero=1, sequence_parallel=True, micro_batch=1)),
    # DeepSeek-V3's published layout with its own selective recompute: Megatron-Core's modules.
    ("deepseek-v3-recompute-modules", _preset("deepseek-v3", gpus=2048, gpu="h800_80gb",
                                              global_batch_tokens=15360 * 4096, precision="fp8",
                                              recompute_modules=("layernorm", "mla_up_proj", "moe_act")),
     Parallelism(pp=16, dp=128, ep=64, zero=1, recompute="selective", micro_batch=1, first_stage_layers=2,
                 last_stage_layers=3)),
]
IDS = [case[0] for case in CASES]


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def case(request):
    _, workload, par = request.param
    plan = recommend(workload) if par is None else evaluate(workload, par)
    par = plan.parallelism
    check_layout(Workload(**dict(workload.to_dict(), gpus=par.model_parallel * par.dp)), par)
    return workload, plan, par


def _stages(workload, par):
    w = Workload(**dict(workload.to_dict(), gpus=par.model_parallel * par.dp))
    layout = check_layout(w, par)
    return layout.first_layers, layout.last_layers, layout.micro_batches


def test_key_lists_name_the_framework_versions_the_exports_cite():
    for framework in FRAMEWORKS.values():
        header, keys = key_list(framework.key_list)
        text = " ".join(header)
        assert framework.commit in text and framework.version.split()[0] in text, framework.id
        for path in framework.files:
            assert path in text, (framework.id, path)
        assert len(keys) > 20


@pytest.mark.parametrize("lang", LANGUAGES)
def test_megatron_flags_are_megatrons_and_read_back_to_the_plan(case, lang):
    workload, plan, par = case
    text = export(plan, workload, "megatron", TEXTS[lang]).text
    flags, _ = megatron_flags(text)
    _, known = key_list(FRAMEWORKS["megatron"].key_list)
    assert set(flags) <= known, set(flags) - known
    got = megatron_layout(text, workload.shape.layers)
    first, last, _ = _stages(workload, par)
    assert got == {"tp": par.tp, "pp": par.pp, "dp": par.dp, "cp": par.cp, "ep": par.ep,
                   "zero": par.zero, "recompute": par.recompute, "recompute_layers": par.recompute_layers,
                   "sequence_parallel": par.sequence_parallel, "micro_batch": par.micro_batch, "interleave": par.interleave,
                   "shard": par.shard_ranks if par.zero else par.dp, "first": first, "last": last,
                   "batch": workload.batch_sequences}
    assert flags["--seq-length"] == str(workload.seq_len) and flags["--num-layers"] == str(workload.shape.layers)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_torchtitan_job_parses_uses_its_keys_and_reads_back_to_the_plan(case, lang):
    workload, plan, par = case
    exported = export(plan, workload, "torchtitan", TEXTS[lang])
    got, job = torchtitan_layout(exported.text, workload.shape.layers)
    _, known = key_list(FRAMEWORKS["torchtitan"].key_list)
    assert toml_keys(job) <= known, toml_keys(job) - known
    first, last, micro_batches = _stages(workload, par)
    # torchtitan has no ZeRO-1 without a pipeline (a note says so); with one its FSDP is ZeRO-1,
    # and a note says so to a plan that counted less (lab_core.parallelism.zero_stages).
    zero = (1 if par.zero else 0) if par.pp > 1 else 2 if par.zero == 1 else par.zero
    # Its DDP takes a one-dimensional mesh only: replication beside TP, CP, PP or EP is written as FSDP.
    ddp_mesh = par.zero == 0 and par.dp > 1 and (par.model_parallel > 1 or par.ep > 1)
    assert ("torchtitan_ddp_mesh" in exported.notes) == ddp_mesh
    if ddp_mesh:
        zero = 1 if par.pp > 1 else 2
    # PyTorch's single-chunk schedules refuse fewer micro-batches than stages: smaller micro-batches where the
    # replica's sequences are enough, else a note that the job is refused.
    per_replica = workload.batch_sequences // par.dp
    short = par.pp > 1 and par.interleave == 1 and micro_batches < par.pp
    assert ("torchtitan_micro_batch_split" in exported.notes) == (short and per_replica >= par.pp)
    assert ("torchtitan_too_few_micro_batches" in exported.notes) == (short and per_replica < par.pp)
    micro_batch = par.micro_batch
    if "torchtitan_micro_batch_split" in exported.notes:
        assert got["micro_batch"] < par.micro_batch and got["micro_batch"] * got["micro_batches"] == per_replica
        assert got["micro_batches"] >= par.pp
        micro_batch, micro_batches = got["micro_batch"], got["micro_batches"]
    # Written as ZeRO-2, which reduce-scatters every micro-batch's gradients: the note says so when there are several.
    as_zero2 = par.zero == 1 and par.dp > 1 and par.pp == 1
    assert ("torchtitan_zero1" in exported.notes) == (as_zero2 and micro_batches == 1)
    assert ("torchtitan_zero1_accumulation" in exported.notes) == (as_zero2 and micro_batches > 1)
    assert ("torchtitan_pipeline_fsdp" in exported.notes) == (par.zero > 1 and par.dp > 1 and par.pp > 1)
    want = {"tp": par.tp, "pp": par.pp, "dp": par.dp, "cp": par.cp, "ep": par.ep, "zero": zero if par.dp > 1 else 0,
            "recompute": par.recompute, "layer_every": _layer_every(par, first, last, workload.shape.layers),
            "sequence_parallel": par.tp > 1, "micro_batch": micro_batch,
            "interleave": par.interleave, "shard": par.shard_ranks if zero and par.dp > 1 else par.dp,
            "first": first if par.pp > 1 else workload.shape.layers,
            "last": last if par.pp > 1 else workload.shape.layers,
            "batch": workload.batch_sequences, "micro_batches": micro_batches, "empty_stages": 0}
    middle = (workload.shape.layers - first - last) // max(1, par.pp - 2)
    if par.pp > 1 and workload.pipeline_schedule == "dualpipev":
        # DualPipeV's two chunks a rank: a rank with one layer leaves one of them without a module, except
        # the first rank's second chunk, which holds the output layer (the first rank runs both ends of the V).
        want["empty_stages"] = sum(1 for n in [last] + [middle] * (par.pp - 2) if n < 2) + (first == 0)
        assert ("torchtitan_dualpipev_empty" in exported.notes) == (want["empty_stages"] > 0)
    elif par.pp > 1:
        # A rank with fewer modules than chunks leaves a virtual stage empty (the embedding and the output layer
        # are modules of the first and last rank's chunks): the job is refused, and a note says so.
        v = par.interleave
        want["empty_stages"] = (max(0, v - 1 - first) + max(0, v - 1 - last)
                                + (par.pp - 2) * max(0, v - middle))
    assert ("torchtitan_empty_stage" in exported.notes) == (want["empty_stages"] > 0
                                                           and workload.pipeline_schedule != "dualpipev")
    assert got == want
    assert ("torchtitan_sequence_parallel" in exported.notes) == (par.tp > 1 and not par.sequence_parallel)
    assert ("torchtitan_layer_checkpointing" in exported.notes) == (par.recompute_layers > 0)
    assert job["training"]["seq_len"] == workload.seq_len


def _layer_every(par, first, last, layers):
    """torchtitan's layer-wise checkpointing of a plan that recomputes only some layers: the largest k
    for which every k-th block recomputes at least the plan's layers on the stage with the most."""
    if not par.recompute_layers:
        return 0
    most = layers if par.pp == 1 else max(first, last, (layers - first - last) // max(1, par.pp - 2))
    want = par.interleave * par.recompute_layers
    every = max(k for k in range(1, most + 1) if most // k >= min(want, most))
    return every


@pytest.mark.parametrize("lang", LANGUAGES)
def test_deepspeed_config_parses_uses_its_keys_and_reads_back_to_the_plan(case, lang):
    workload, plan, par = case
    exported = export(plan, workload, "deepspeed", TEXTS[lang])
    got, config = deepspeed_layout(exported.text, par.model_parallel * par.dp)
    _, known = key_list(FRAMEWORKS["deepspeed"].key_list)
    # "comment" is the one key of ours: DeepSpeed reads top-level keys by name and ignores the rest.
    assert toml_keys({k: v for k, v in config.items() if k != "comment"}) <= known
    _, _, micro_batches = _stages(workload, par)
    # DeepSpeed's pipeline engine runs ZeRO-0 and 1 only, AutoTP and MoE layers ZeRO-2 at most: the file writes the
    # nearest stage, with a note.
    moe = workload.shape.experts is not None
    stage = 1 if par.pp > 1 and par.zero > 1 else 2 if (par.tp > 1 or moe) and par.zero == 3 else par.zero
    assert ("deepspeed_pipeline_zero" in exported.notes) == (par.pp > 1 and par.zero > 1)
    assert ("deepspeed_autotp_zero3" in exported.notes) == (par.pp == 1 and par.tp > 1 and par.zero == 3)
    assert ("deepspeed_moe_zero3" in exported.notes) == (par.pp == 1 and par.tp == 1 and moe and par.zero == 3)
    # AutoTP without a pipeline; with one the tensor parallelism is the model's and a note says how.
    assert ("deepspeed_pipeline_tp" in exported.notes) == (par.pp > 1 and par.tp > 1)
    # DeepSpeed would count tensor- and context-parallel ranks in the batch check: the batch is left to it.
    derived = par.tp * par.cp > 1
    assert ("deepspeed_batch_derived" in exported.notes) == derived
    # Hybrid sharding is MiCS (ZeRO-3 only); otherwise DeepSpeed shards over all the data-parallel ranks.
    mics = stage == 3 and par.shard_ranks < par.dp
    assert got == {"pp": par.pp, "tp": par.tp if par.pp == 1 else 1, "dp": None if derived else par.dp, "zero": stage,
                   "micro_batch": par.micro_batch, "micro_batches": micro_batches,
                   "batch": None if derived else workload.batch_sequences,
                   "recompute": "full" if par.recompute == "full" else "none",
                   "shard": par.shard_ranks if mics else None if derived else par.dp,
                   "grad_accum_dtype": "fp32" if workload.state_bytes_per_param == 18 and stage <= 1 else None}
    assert par.micro_batch * micro_batches * par.dp == workload.batch_sequences
    # Selective recompute of the attention core is a note of its own; of Megatron-Core's modules, another.
    modules = par.recompute == "selective" and workload.recompute_modules != ("core_attn",)
    assert ("deepspeed_selective" in exported.notes) == (par.recompute == "selective" and not modules)
    assert ("recompute_modules_elsewhere" in exported.notes) == modules
    assert ("deepspeed_context_parallel" in exported.notes) == (par.cp > 1)
    assert ("deepspeed_partial_recompute" in exported.notes) == (par.recompute_layers > 0)


def test_the_model_precision_and_schedule_read_back_alike_from_every_file(case):
    """The model shape and FP8 from Megatron's flags, FP8 from torchtitan's converters, and the
    steps to train and between checkpoints agree across the three files and with the workload."""
    workload, plan, _ = case
    files = {fmt: export(plan, workload, fmt, TEXTS["en"]).text for fmt in ("megatron", "torchtitan", "deepspeed")}
    model, flags = megatron_model(files["megatron"])
    shape = workload.shape
    assert model == {"layers": shape.layers, "hidden": shape.hidden, "heads": shape.heads, "kv_heads": shape.kv_heads,
                     "ffn_hidden": shape.ffn_hidden, "vocab": shape.vocab, "seq_len": workload.seq_len,
                     "precision": workload.precision,
                     "experts": shape.experts.to_dict() if shape.experts else None}
    job = tomllib.loads(files["torchtitan"])
    converters = job.get("model", {}).get("converters", [])
    assert ("quantize.linear.float8" in converters) == (workload.precision == "fp8")
    # torchtitan's FP8 expert GEMMs refuse pipeline and context parallelism (a note says the experts stay bf16);
    # where written, they name the experts, since the converter quantizes only the modules it is given.
    par = plan.parallelism
    expert_fp8 = workload.precision == "fp8" and shape.experts is not None
    assert ("quantize.grouped_mm.float8" in converters) == (expert_fp8 and par.pp == 1 and par.cp == 1)
    fqns = job.get("quantize", {}).get("grouped_mm", {}).get("float8", {}).get("fqns", [])
    assert bool(fqns) == ("quantize.grouped_mm.float8" in converters)
    exported = export(plan, workload, "torchtitan", TEXTS["en"])
    assert ("torchtitan_fp8_experts" in exported.notes) == (expert_fp8 and (par.pp > 1 or par.cp > 1))
    # A shape torchtitan has no flavor for is named, never left to its default debug model.
    assert job["model"]["name"] and job["model"]["flavor"]
    assert job["training"]["steps"] == int(flags["--train-iters"])
    assert job["checkpoint"]["interval"] == int(flags.get("--non-persistent-save-interval", flags["--save-interval"]))
    assert json.loads(files["deepspeed"]).get("train_batch_size", workload.batch_sequences) == int(flags["--global-batch-size"])


def test_all_gather_context_parallelism_and_fp8_weight_gathers_are_written_where_they_apply(case):
    """Workload.cp_all_gather is Megatron-Core's --cp-comm-type all_gather and torchtitan's allgather
    rotation; Workload.fp8_weight_gather is --fp8-param-gather (the distributed optimizer's gather of the
    updated weights, or Megatron FSDP's per-layer one) and torchao's FP8 FSDP all-gather, for FP8 runs with
    ZeRO-1, 2 or 3."""
    workload, plan, par = case
    _, flags = megatron_model(export(plan, workload, "megatron", TEXTS["en"]).text)
    job = tomllib.loads(export(plan, workload, "torchtitan", TEXTS["en"]).text)
    gathers = par.cp > 1 and workload.cp_all_gather
    assert (flags.get("--cp-comm-type") == "all_gather") == gathers
    assert (job["parallelism"].get("context_parallel_rotate_method") == "allgather") == gathers
    fp8_gathers = workload.precision == "fp8" and workload.fp8_weight_gather and par.zero >= 1
    assert ("--fp8-param-gather" in flags) == fp8_gathers
    float8 = job.get("quantize", {}).get("linear", {}).get("float8", {})
    assert float8.get("enable_fsdp_float8_all_gather", False) == fp8_gathers
    assert any(gathers or fp8_gathers for gathers, fp8_gathers in ((c[1].cp_all_gather, c[1].fp8_weight_gather)
                                                                   for c in CASES))


def test_the_plans_own_json_reads_back_to_the_workload_and_layout(case):
    workload, plan, par = case
    document = json.loads(export(plan, workload, "json", TEXTS["en"]).text)
    assert Parallelism(**document["parallelism"]) == par
    loaded = Workload(**document["workload"])
    assert loaded.shape.params == workload.shape.params and loaded.seq_len == workload.seq_len
    assert document["predicted"]["step_s"] == pytest.approx(plan.report.step_s if hasattr(plan, "report") else plan.step_s)


def test_choices_a_framework_cannot_express_are_notes_not_flags():
    workload = _preset("llama3-8b", gpus=128, gpu="h100_80gb", global_batch_tokens=256 * 8192)
    zero2_hybrid = Parallelism(dp=128, zero=2, dp_shard=16, micro_batch=2)
    megatron = export(zero2_hybrid, workload, "megatron", TEXTS["en"])
    flags, _ = megatron_flags(megatron.text)
    # Megatron-FSDP's hybrid mesh: 8 replicas of a 16-way shard.
    assert flags["--num-distributed-optimizer-instances"] == "8" and flags["--data-parallel-sharding-strategy"] == "optim_grads"
    deepspeed = export(zero2_hybrid, workload, "deepspeed", TEXTS["en"])
    assert "deepspeed_partial_sharding" in deepspeed.notes and "mics_shard_size" not in deepspeed.text
    custom = export(Parallelism(tp=8, pp=1, dp=16), Workload(params=13e9, gpus=128, global_batch_tokens=512 * 2048),
                    "torchtitan", TEXTS["en"])
    assert "torchtitan_flavor" in custom.notes and tomllib.loads(custom.text)["model"] == {"name": "llama3",
                                                                                          "flavor": "lab_40x5120"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_comments_are_in_the_readers_language_and_name_every_note(fmt):
    workload, plan, _ = CASES[6][1], None, CASES[6][2]
    plan = evaluate(workload, CASES[6][2])
    texts = {}
    for lang in LANGUAGES:
        exported = export(plan, workload, fmt, TEXTS[lang])
        texts[lang] = exported.text
        for note in exported.notes:
            expected = TEXTS[lang]["notes"][note].split("{")[0].strip()
            assert expected in exported.text, (lang, note)
    assert re.search(r"[\u4e00-\u9fff]", texts["zh"]) and not re.search(r"[\u4e00-\u9fff]", texts["en"])


def test_a_plan_that_does_not_fit_says_so_at_the_top():
    workload = Workload(params=2e12, gpus=8)
    plan = recommend(workload)
    assert not plan.fits
    text = export(plan, workload, "megatron", TEXTS["en"]).text
    assert text.splitlines()[2].startswith("# " + TEXTS["en"]["does_not_fit"].split("{")[0].strip())


def test_bad_format_and_plan_are_input_errors():
    workload = Workload(params=1.3e9, gpus=8)
    with pytest.raises(LabInputError) as err:
        export(Parallelism(dp=8), workload, "nemo", TEXTS["en"])
    assert err.value.field == "format" and "megatron" in err.value.allowed
    with pytest.raises(LabInputError) as err:
        export({"tp": 1}, workload, "json", TEXTS["en"])
    assert err.value.field == "plan"


def test_toml_writer_round_trips_through_tomllib():
    awkward = 'quote " backslash \\ tab \t newline \n 中文 \x01'
    text = tables([("a", [("s", awkward), ("n", 3), ("f", 0.5), ("t", True), ("l", ["x", "y"])]),
                   ("b.c", [("k", -1)])], comments={"a": ["a comment"]})
    assert tomllib.loads(text) == {"a": {"s": awkward, "n": 3, "f": 0.5, "t": True, "l": ["x", "y"]},
                                   "b": {"c": {"k": -1}}}
    with pytest.raises(ValueError):
        value(float("nan"))


@pytest.mark.parametrize("stack,compiled,tp", [("torch_native", True, 1), ("torch_native", False, 1),
                                                ("torch_native", False, 8), ("modern", True, 1), ("modern", False, 1),
                                                ("megatron_lm_2021", False, 2), ("torch_native", True, 8)])
def test_a_compiled_loss_is_torchtitans_compile_components(stack, compiled, tp):
    """The loss is compiled ("loss" in [compile] components) whenever the plan counted fewer
    bytes per logit than torchtitan's eager loss keeps: Workload.compiled_loss (torch_native), and
    every Megatron-stack plan (their fused loss, 6 bytes against 12-16), so the job never keeps
    more than the plan; async TP compiles the model as well; else the job has no [compile] table."""
    workload = _preset("llama3-8b", gpus=64, gpu="h100_80gb", global_batch_tokens=128 * 8192, stack=stack,
                       compiled_loss=compiled)
    plan = evaluate(workload, Parallelism(tp=tp, dp=64 // tp, zero=3, micro_batch=2, sequence_parallel=tp > 1))
    job = tomllib.loads(export(plan, workload, "torchtitan", TEXTS["en"]).text)
    async_tp = job["parallelism"].get("enable_async_tensor_parallel", False)
    components = job.get("compile", {}).get("components", [])
    assert ("loss" in components) == (compiled or stack != "torch_native" or async_tp)
    assert ("model" in components) == async_tp
    # What the job keeps per logit is never more than the plan counted.
    split = "vocab_parallel" if tp > 1 else "one_gpu"
    kept = (COMPILED_LOSS_BYTES_PER_LOGIT if "loss" in components else LOSS_BYTES_PER_LOGIT["torch_native"])[split]
    assert kept <= context_for(workload).loss_bytes_per_logit[1 if tp > 1 else 0]
    assert job.get("compile", {}).get("enable", False) == bool(components)


@pytest.mark.parametrize("mode", ["blocking", "async", "in_memory"])
def test_checkpoint_modes_become_each_frameworks_save_settings(mode):
    workload = _preset("llama3-8b", gpus=64, gpu="h100_80gb", global_batch_tokens=256 * 8192, checkpoint_mode=mode)
    par = Parallelism(tp=1, pp=1, dp=64, zero=1, micro_batch=1)
    megatron = export(par, workload, "megatron", TEXTS["en"])
    flags, _ = megatron_flags(megatron.text)
    steps = int(flags.get("--non-persistent-save-interval", flags["--save-interval"]))
    assert ("--async-save" in flags) == (mode == "async")
    # Megatron-LM refuses its listed "in_memory" type: host-memory local checkpoints, replicated one node away.
    assert (flags.get("--non-persistent-ckpt-type") == "local") == (mode == "in_memory")
    if mode == "in_memory":
        assert int(flags["--save-interval"]) > steps and "megatron_in_memory" in megatron.notes
        assert flags["--non-persistent-local-ckpt-dir"].startswith("/dev/shm/") and flags["--replication-jump"] == "8"
    job = tomllib.loads(export(par, workload, "torchtitan", TEXTS["en"]).text)
    assert job["checkpoint"]["interval"] == steps
    assert job["checkpoint"].get("async_mode", "disabled") == ("disabled" if mode == "blocking" else "async")
    deepspeed = export(par, workload, "deepspeed", TEXTS["en"])
    assert ("deepspeed_checkpoint_" + mode in deepspeed.notes) == (mode != "blocking")


@pytest.mark.parametrize("gpus, par", [
    (64, Parallelism(dp=64, zero=3, micro_batch=1)),
    # Sharded over the context-parallel ranks alone: still Megatron-FSDP.
    (8, Parallelism(cp=8, dp=1, zero=3, micro_batch=1))])
def test_async_saves_with_megatron_fsdp_are_a_note_not_a_flag(gpus, par):
    workload = _preset("llama3-8b", gpus=gpus, gpu="h100_80gb", global_batch_tokens=256 * 8192,
                       checkpoint_mode="async")
    exported = export(par, workload, "megatron", TEXTS["en"])
    flags, _ = megatron_flags(exported.text)
    assert "--async-save" not in flags and "megatron_async_fsdp" in exported.notes
    assert "--use-distributed-optimizer" in flags and flags["--ckpt-format"] == "fsdp_dtensor"


@pytest.mark.parametrize("gpus, gpus_per_node, replicated", [(64, 8, True), (8, 8, False), (24, 8, False), (12, 8, False)])
def test_in_memory_checkpoints_replicate_to_a_peer_node_only_where_nodes_pair(gpus, gpus_per_node, replicated):
    workload = _preset("llama3-8b", gpus=gpus, gpus_per_node=gpus_per_node, gpu="h100_80gb",
                       global_batch_tokens=384 * 8192, checkpoint_mode="in_memory")
    exported = export(Parallelism(dp=gpus, zero=1, micro_batch=1), workload, "megatron", TEXTS["en"])
    flags, _ = megatron_flags(exported.text)
    assert flags["--non-persistent-ckpt-type"] == "local" and ("--replication" in flags) == replicated
    assert ("megatron_in_memory_unreplicated" in exported.notes) == (not replicated)


@pytest.mark.parametrize("dispatcher, overlap, par, flag_set, note", [
    # DeepSeek-V3's layout on its own: PP 16 without interleaving cannot take Megatron's EP overlap.
    ("per_node", True, Parallelism(pp=16, dp=128, ep=16, zero=1, micro_batch=1, first_stage_layers=2,
                                   last_stage_layers=3), False, True),
    # Interleaved, no full recompute: the overlap flags are written.
    ("all_to_all", True, Parallelism(pp=8, dp=256, ep=16, zero=1, micro_batch=1, interleave=2,
                                   first_stage_layers=0, last_stage_layers=0), True, False),
    # The run keeps the all-to-all exposed: neither flags nor note.
    ("all_to_all", False, Parallelism(pp=8, dp=256, ep=16, zero=1, micro_batch=1, interleave=2), False, False),
])
def test_moe_dispatcher_and_all_to_all_overlap_are_written_where_megatron_accepts_them(dispatcher, overlap, par,
                                                                                      flag_set, note):
    """moe_dispatcher per_node is DeepEP (--moe-token-dispatcher-type flex --moe-enable-deepep); the
    all-to-all overlap the model assumes is --overlap-moe-expert-parallel-comm with --delay-wgrad-compute,
    which Megatron-LM's arguments.py accepts only without full recompute and, with pipelining, only
    interleaved: elsewhere a note says the file runs it exposed."""
    inputs = dict(preset_inputs("deepseek-v3"), gpus=2048, gpu="h800_80gb", global_batch_tokens=62914560,
                  moe_dispatcher=dispatcher, moe_comm_overlap=overlap)
    if par.interleave > 1:
        inputs.update(layers=64, global_batch_tokens=2 ** 26)  # 8 stages of 2 chunks; 64 micro-batches a replica
    workload = Workload(**inputs)
    check_layout(workload, par)
    result = export(par, workload, "megatron", TEXTS["en"])
    flags, _ = megatron_flags(result.text)
    assert flags["--moe-token-dispatcher-type"] == ("flex" if dispatcher == "per_node" else "alltoall")
    assert ("--moe-enable-deepep" in flags) == (dispatcher == "per_node")
    assert ("--overlap-moe-expert-parallel-comm" in flags) == flag_set == ("--delay-wgrad-compute" in flags)
    assert ("megatron_moe_overlap" in result.notes) == note


@pytest.mark.parametrize("stack, te_attention", [("torch_native", True), ("torch_native", False), ("modern", True)])
def test_transformer_engine_attention_is_a_note_where_the_file_cannot_choose_the_kernel(stack, te_attention):
    """Megatron-LM runs Transformer Engine's attention itself; a DeepSpeed config has no key for
    the kernel, so a PyTorch-native plan on it (Workload.te_attention) says so. torchtitan's SDPA
    tries cuDNN's fused attention (TE's kernel) first: a plan on it needs no note, a plan on
    FlashAttention-2 is told the job's attention is faster, by the lab's own ratio."""
    workload = _preset("llama3-8b", gpus=8, gpu="h100_80gb", global_batch_tokens=128 * 8192, stack=stack,
                       te_attention=te_attention)
    plan = evaluate(workload, Parallelism(dp=8, zero=3, micro_batch=2))
    for fmt in FORMATS:
        for lang in LANGUAGES:
            exported = export(plan, workload, fmt, TEXTS[lang])
            noted = fmt == "deepspeed" and stack == "torch_native" and te_attention
            assert ("te_attention" in exported.notes) == noted, (fmt, lang)
            if noted:
                assert TEXTS[lang]["notes"]["te_attention"].split("（")[0].split("(")[0][:20] in exported.text
            faster = fmt == "torchtitan" and stack == "torch_native" and not te_attention
            assert ("torchtitan_cudnn_attention" in exported.notes) == faster, (fmt, lang)
            if faster:
                ratio = STACK_ATTENTION_EFFICIENCY["modern"] / STACK_ATTENTION_EFFICIENCY["torch_native"]
                assert f"{ratio:.1f}" in exported.text


@pytest.mark.parametrize("pp, v, first, middle, last, layout", [
    # Llama 3 405B: the first and the last stage each leave one chunk without a transformer layer.
    (16, 8, 7, 8, 7, "E|(t|)*126L"),
    # DeepSeek-V3 (61 layers) over 8 stages of 4 chunks: 5 on the first stage (three chunks of one layer), 8 on the others.
    (8, 4, 5, 8, 8, "Et|(tt|)*7t|(tt|)*7t|(tt|)*14ttL"),
    (2, 2, 3, 0, 4, "Et|(tt|)*2ttL"),
])
def test_megatron_flexible_layout_string(pp, v, first, middle, last, layout):
    from lab_core.export.megatron import pipeline_layout
    from launch_readers import unroll_layout

    assert pipeline_layout(pp, v, first, middle, last) == layout
    stages = unroll_layout(layout)
    assert len(stages) == pp * v
    per_rank = [sum(stages[c * pp + r].count("t") for c in range(v)) for r in range(pp)]
    assert per_rank == [first] + [middle] * (pp - 2) + [last]


@pytest.mark.parametrize("preset, par, notes, grouped", [
    # FP8 experts without a pipeline: the grouped-GEMM converter, pointed at the experts.
    ("qwen3-235b-a22b", Parallelism(tp=1, pp=1, dp=256, ep=64, zero=3, micro_batch=1), set(), True),
    # Qwen3 has no pipelining function in torchtitan v0.2.2, and its FP8 experts refuse a pipeline.
    ("qwen3-235b-a22b", Parallelism(tp=1, pp=2, dp=128, ep=64, zero=1, micro_batch=1),
     {"torchtitan_no_pipelining", "torchtitan_fp8_experts"}, False),
    # TP without data parallelism: no FSDP, so torchtitan runs no mixed precision.
    ("llama3-70b", Parallelism(tp=8, pp=16, dp=1, sequence_parallel=True, micro_batch=1),
     {"torchtitan_fp32_without_fsdp"}, False),
    # DeepSeek-V3's registered flavors attend with FlexAttention, which its model refuses beside context parallelism.
    ("deepseek-v3", Parallelism(tp=1, cp=2, pp=1, dp=128, ep=64, zero=3, micro_batch=1),
     {"torchtitan_flex_context_parallel", "torchtitan_fp8_experts"}, False),
])
def test_torchtitan_limits_of_its_models_and_fp8_are_notes(preset, par, notes, grouped):
    """torchtitan v0.2.2: train.py refuses pipelining a model without a pipelining function (qwen3);
    Float8GroupedMMConverter asserts no pipeline or context parallelism and quantizes only the fqns it
    is given; maybe_enable_amp leaves mixed precision to FSDP, so TP/PP without it computes in fp32;
    DeepSeekV3ModelArgs.update_from_config refuses context parallelism with FlexAttention."""
    workload = _preset(preset, gpus=par.model_parallel * par.dp, gpu="h100_80gb", precision="fp8",
                       global_batch_tokens=512 * 4096 if preset != "llama3-70b" else 64 * 8192)
    for lang in LANGUAGES:
        exported = export(par, workload, "torchtitan", TEXTS[lang])
        job = tomllib.loads(exported.text)
        limits = {"torchtitan_no_pipelining", "torchtitan_fp8_experts", "torchtitan_fp32_without_fsdp",
                  "torchtitan_flex_context_parallel"}
        assert limits & set(exported.notes) == notes
        # The refusals among them are what the lab's export panel warns of.
        assert set(exported.refused) == notes & {"torchtitan_no_pipelining", "torchtitan_flex_context_parallel"}
        assert ("quantize.grouped_mm.float8" in job["model"].get("converters", [])) == grouped
        assert job.get("quantize", {}).get("grouped_mm", {}).get("float8", {}).get("fqns") == (["experts"] if grouped
                                                                                                else None)


def test_group_limited_routing_is_a_flag_for_megatron_and_a_note_where_the_file_cannot_set_it():
    """DeepSeek-V3's 4 of 8 expert groups (moe.py): Megatron's router flags; torchtitan's "671B" flavor
    already routes so (torchtitan/models/deepseek_v3/__init__.py at v0.2.2), a plan without the limit
    or a shape of its own gets a note naming the flavor's MoE arguments; DeepSpeed's gate has none."""
    par = Parallelism(pp=8, dp=64, ep=64, zero=1, micro_batch=1, interleave=4, first_stage_layers=5,
                      last_stage_layers=8)
    grouped = _preset("deepseek-v3", gpus=512, gpu="h800_80gb", global_batch_tokens=4096 * 4096, precision="fp8")
    flags, _ = megatron_flags(export(par, grouped, "megatron", TEXTS["en"]).text)
    assert (flags["--moe-router-num-groups"], flags["--moe-router-group-topk"]) == ("8", "4")
    titan = export(par, grouped, "torchtitan", TEXTS["en"])
    assert not {"torchtitan_expert_groups", "torchtitan_no_expert_groups"} & set(titan.notes)
    assert "deepspeed_expert_groups" in export(par, grouped, "deepspeed", TEXTS["en"]).notes
    ungrouped = Workload(**dict(grouped.to_dict(), expert_groups=0))
    flags, _ = megatron_flags(export(par, ungrouped, "megatron", TEXTS["en"]).text)
    assert "--moe-router-num-groups" not in flags
    titan = export(par, ungrouped, "torchtitan", TEXTS["en"])
    assert "torchtitan_no_expert_groups" in titan.notes and "num_expert_groups = None" in titan.text
    assert "deepspeed_expert_groups" not in export(par, ungrouped, "deepspeed", TEXTS["en"]).notes
    custom = Workload(**dict(grouped.to_dict(), expert_groups=16, expert_groups_per_token=8))
    titan = export(par, custom, "torchtitan", TEXTS["zh"])
    assert "torchtitan_expert_groups" in titan.notes and "num_expert_groups = 16" in titan.text


@pytest.mark.parametrize("fmt", ("megatron", "torchtitan", "deepspeed"))
def test_a_bidirectional_schedule_is_written_where_the_framework_runs_it_and_a_note_elsewhere(case, fmt):
    """torchtitan runs DualPipeV (ScheduleDualPipeV); no framework here runs DeepSeek-V3's DualPipe, nor
    Megatron-LM or DeepSpeed DualPipeV: the file runs 1F1B with the same stages and the note gives both bubbles."""
    workload, plan, par = case
    exported = export(plan, workload, fmt, TEXTS["en"])
    schedule = workload.pipeline_schedule
    written = fmt == "torchtitan" and schedule == "dualpipev"
    assert ("schedule_not_offered" in exported.notes) == (par.pp > 1 and schedule != "1f1b" and not written)
    if fmt == "torchtitan" and par.pp > 1:
        job = tomllib.loads(exported.text)["parallelism"]
        assert (job["pipeline_parallel_schedule"] == "DualPipeV") == written
    if "schedule_not_offered" in exported.notes:
        report = plan.report if hasattr(plan, "report") else plan
        assert f"{round(100 * report.bubble_fraction, 1)}%" in exported.text


@pytest.mark.parametrize("modules, recipe", [(("layernorm", "mla_up_proj", "moe_act"), "tensorwise"),
                                             (("mla_up_proj", "mlp"), "delayed"), (("core_attn",), "delayed")])
def test_recompute_modules_are_megatrons_flag_and_a_note_elsewhere(modules, recipe):
    """Megatron-Core takes the modules as --recompute-modules (nargs, one word each); its delayed FP8
    scaling refuses layernorm and moe_act recompute, so the file scales FP8 per tensor then. torchtitan
    and DeepSpeed have no modules: a note in each language names them."""
    w = _preset("deepseek-v3", gpus=2048, gpu="h800_80gb", global_batch_tokens=15360 * 4096, precision="fp8",
                recompute_modules=modules)
    plan = evaluate(w, Parallelism(pp=16, dp=128, ep=64, zero=1, recompute="selective", micro_batch=1,
                                   first_stage_layers=2, last_stage_layers=3))
    for lang in LANGUAGES:
        out = export(plan, w, "megatron", TEXTS[lang])
        line = next(line for line in out.text.splitlines() if "--recompute-granularity" in line)
        assert "selective" in line
        modules_lines = [line.strip() for line in out.text.splitlines() if "--recompute-modules" in line]
        if modules == ("core_attn",):
            assert not modules_lines and "recompute_modules_elsewhere" not in out.notes
        else:
            assert modules_lines == ["--recompute-modules " + " ".join(modules) + " \\"]
        assert f"--fp8-recipe {recipe}" in out.text
        assert ("megatron_fp8_current_scaling" in out.notes) == (recipe == "tensorwise")
        for fmt in ("torchtitan", "deepspeed"):
            other = export(plan, w, fmt, TEXTS[lang])
            assert ("recompute_modules_elsewhere" in other.notes) == (modules != ("core_attn",))
            if modules != ("core_attn",):
                assert ", ".join(modules) in other.text
        plan_line = next(line for line in out.text.splitlines() if "PP 16" in line)
        if modules != ("core_attn",):
            assert TEXTS[lang]["recompute"]["selective_modules"].format(modules=", ".join(modules)) in plan_line


@pytest.mark.parametrize("interleave", [1, 2])
def test_multi_token_prediction_is_megatrons_flag_and_a_note_elsewhere(interleave):
    """Megatron-Core takes the modules as --mtp-num-layers, on the last stage: in a flexible layout an
    "m" before the loss. torchtitan and DeepSpeed have none: a note in each language says the file
    trains without them. Without modules, neither."""
    layout = dict(pp=8, dp=128, ep=64, zero=1, micro_batch=1, interleave=interleave,
                  first_stage_layers=8, last_stage_layers=5)
    for mtp in (1, 0):
        w = _preset("deepseek-v3", gpus=1024, gpu="h800_80gb", global_batch_tokens=8192 * 4096, precision="fp8",
                    mtp_layers=mtp)
        plan = evaluate(w, Parallelism(**layout))
        for lang in LANGUAGES:
            out = export(plan, w, "megatron", TEXTS[lang])
            flags, _ = megatron_flags(out.text)
            assert flags.get("--mtp-num-layers") == (str(mtp) if mtp else None)
            if interleave > 1:
                assert flags["--pipeline-model-parallel-layout"].endswith("mL" if mtp else "tL")
            read = megatron_layout(out.text, 61)
            assert (read["pp"], read["interleave"], read["first"], read["last"]) == (8, interleave, 8, 5)
            for fmt in ("torchtitan", "deepspeed"):
                other = export(plan, w, fmt, TEXTS[lang])
                assert ("mtp_elsewhere" in other.notes) == bool(mtp)
                if mtp:
                    note = TEXTS[lang]["notes"]["mtp_elsewhere"].format(mtp=mtp)
                    assert " ".join(note.split()[:6]) in " ".join(other.text.split())


def test_megatron_says_it_runs_no_multi_token_prediction_with_context_parallelism():
    w = _preset("llama3-8b", gpus=64, global_batch_tokens=64 * 16384, seq_len=16384, mtp_layers=1)
    for cp, noted in ((2, True), (1, False)):
        plan = evaluate(w, Parallelism(tp=2, cp=cp, dp=32 // cp, zero=1, sequence_parallel=True))
        for lang in LANGUAGES:
            out = export(plan, w, "megatron", TEXTS[lang])
            assert ("megatron_mtp_context_parallel" in out.notes) == noted
            assert "--mtp-num-layers 1" in out.text


@pytest.mark.parametrize("overlap", [True, False])
def test_gradient_reduce_overlap_is_written_or_noted(overlap):
    """Workload.grad_reduce_overlap: Megatron-LM's --overlap-grad-reduce (the parameter gather keeps
    --overlap-param-gather), DeepSpeed's zero_optimization.overlap_comm; torchtitan's FSDP2
    reduce-scatters in the backward whatever the plan, so a plan without the overlap gets a note."""
    workload = _preset("llama3-8b", gpus=64, gpu="h100_80gb", global_batch_tokens=64 * 8192,
                       grad_reduce_overlap=overlap)
    plan = evaluate(workload, Parallelism(tp=1, pp=1, dp=64, zero=1, micro_batch=1))
    for lang in LANGUAGES:
        megatron = export(plan, workload, "megatron", TEXTS[lang])
        flags, _ = megatron_flags(megatron.text)
        assert ("--overlap-grad-reduce" in flags) == overlap
        assert "--overlap-param-gather" in flags
        deepspeed = json.loads(export(plan, workload, "deepspeed", TEXTS[lang]).text)
        assert deepspeed["zero_optimization"]["overlap_comm"] == overlap
        torchtitan = export(plan, workload, "torchtitan", TEXTS[lang])
        assert ("torchtitan_grad_reduce_overlapped" in torchtitan.notes) == (not overlap)
        if not overlap:
            assert TEXTS[lang]["notes"]["torchtitan_grad_reduce_overlapped"][:12] in torchtitan.text
