"""Every input of the lab: unit, allowed range, default, slider scale.

One table, read by the model (validation), the build (slider markup, docs)
and the page (through the JSON the build exports). Ranges follow the slider
table of ARCHITECTURE.md; defaults are the teaching defaults named in the docs.

``minimum``/``maximum`` are the slider range; ``limit_min``/``limit_max`` (in
to_dict) are what validation accepts, wider for a few inputs.
``kind`` is ``number`` (the default), ``choice`` (one of ``choices``),
``bool`` or ``modules`` (any of ``choices``, as a tuple in their order). A number spec with ``derive_if_zero`` accepts 0 or None, meaning
"derive it from ``params``" (see shape.py).
"""
from dataclasses import dataclass

from .calibration import GPU_FAILURES_PER_HOUR
from .checkpoint_modes import CHECKPOINT_MODES
from .hardware import DEFAULT_GPU, GPU_PRESETS
from .pipeline import PIPELINE_SCHEDULES
from .recompute_modules import DEFAULT_RECOMPUTE_MODULES, RECOMPUTE_MODULES
from .stack import MOE_DISPATCHERS, PRECISIONS, STACKS


@dataclass(frozen=True)
class InputSpec:
    name: str
    unit: str
    minimum: float
    maximum: float
    default: float
    log_scale: bool = True
    integer: bool = False
    slider: bool = True
    kind: str = "number"
    choices: tuple = ()
    derive_if_zero: bool = False
    # Hard validation limits when wider than the slider range (None = slider range).
    limit_min: float = None
    limit_max: float = None

    @property
    def lowest(self):
        return self.minimum if self.limit_min is None else self.limit_min

    @property
    def highest(self):
        return self.maximum if self.limit_max is None else self.limit_max

    def to_dict(self):
        return {
            "name": self.name,
            "unit": self.unit,
            "min": self.minimum,
            "max": self.maximum,
            "default": self.default,
            "log": self.log_scale,
            "integer": self.integer,
            "slider": self.slider,
            "kind": self.kind,
            "choices": list(self.choices),
            "derive_if_zero": self.derive_if_zero,
            "limit_min": self.lowest,
            "limit_max": self.highest,
        }


def _advanced(name, unit, minimum, maximum, default, log_scale=False, integer=False, derive=False):
    return InputSpec(name, unit, minimum, maximum, default, log_scale, integer,
                     slider=False, derive_if_zero=derive)


INPUT_SPECS = (
    # The six sliders (ARCHITECTURE.md table).
    InputSpec("params", "parameters", 125e6, 2e12, 1.3e9),
    InputSpec("gpus", "GPUs", 1, 32768, 8, integer=True),
    # Published small-batch runs (arXiv:2205.05198 Table 3: 4 x 2048 tokens)
    # are below the slider's floor: the model accepts down to one sequence.
    InputSpec("global_batch_tokens", "tokens per optimizer step", 65536, 64e6, 1048576, integer=True,
              limit_min=512, limit_max=1e9),
    InputSpec("seq_len", "tokens", 512, 131072, 2048, integer=True),
    InputSpec("inter_node_gbps", "Gb/s per GPU (inter-node fabric)", 25, 3200, 200),
    # Typed intervals may go below the slider: async checkpoints at scale are
    # best taken every minute or two (failures.optimal_interval).
    InputSpec("checkpoint_interval_min", "minutes", 1, 1440, 60, limit_min=0.1),
    # Advanced inputs.
    InputSpec("gpu", "preset id", None, None, DEFAULT_GPU, log_scale=False, slider=False,
              kind="choice", choices=tuple(sorted(GPU_PRESETS))),
    _advanced("gpus_per_node", "GPUs per node", 1, 72, 8, integer=True),
    _advanced("layers", "transformer layers (0 = derive)", 1, 1024, 0, integer=True, derive=True),
    _advanced("hidden", "hidden size (0 = derive)", 64, 131072, 0, integer=True, derive=True),
    _advanced("heads", "attention heads (0 = derive)", 1, 1024, 0, integer=True, derive=True),
    # Grouped-query attention (arXiv:2305.13245): fewer key/value heads than
    # query heads; 0 = as many as heads (multi-head attention).
    _advanced("kv_heads", "key/value heads (0 = heads)", 1, 1024, 0, integer=True, derive=True),
    # The attention block's own sizes (attention.py): query/key head size when
    # heads x head size is not the hidden size (Qwen3: 64 heads of 128 on a
    # 4,096 hidden size), value head size, and multi-head latent attention's
    # ranks (DeepSeek-V2/V3: 1,536 and 512); 0 = hidden / heads, head size, full rank.
    _advanced("head_dim", "attention head size (0 = hidden / heads)", 8, 1024, 0, integer=True, derive=True),
    _advanced("v_head_dim", "value head size (0 = head_dim)", 8, 1024, 0, integer=True, derive=True),
    _advanced("q_lora_rank", "query latent rank (0 = full rank)", 16, 65536, 0, integer=True, derive=True),
    _advanced("kv_lora_rank", "key/value latent rank (0 = full rank)", 16, 65536, 0, integer=True, derive=True),
    _advanced("ffn_hidden", "MLP inner size (0 = 4 x hidden)", 64, 524288, 0, integer=True, derive=True),
    _advanced("vocab", "vocabulary size (0 = 51200)", 256, 1048576, 0, integer=True, derive=True),
    InputSpec("state_bytes_per_param", "bytes per parameter", 16, 18, 18, log_scale=False,
              integer=True, slider=False, kind="choice", choices=(16, 18)),
    _advanced("training_tokens", "tokens", 1e6, 1e15, 300e9, log_scale=True),
    _advanced("gpu_failures_per_hour", "interruptions per GPU-hour", 0, 1e-2, GPU_FAILURES_PER_HOUR),
    # A fixed time per interruption for detection, restart, communicator set-up
    # and checkpoint load; 0 / None = model those parts (recovery.py).
    _advanced("restart_min", "minutes (0 = model the recovery parts)", 0, 1440, 0, derive=True),
    _advanced("checkpoint_storage_gbps", "GB/s aggregate write (1e9 B/s)", 0.1, 100000, 100, log_scale=True),
    _advanced("storage_read_gbps", "GB/s aggregate read (1e9 B/s)", 0.1, 100000, 100, log_scale=True),
    _advanced("loader_tokens_per_s_per_node", "tokens/s per node", 1e3, 1e10, 5e6, log_scale=True),
    InputSpec("flash_attention", "on/off", None, None, True, log_scale=False, slider=False, kind="bool"),
    # Dropout masks are part of Korthikanti's activation accounting; many recent
    # LLMs (Llama, arXiv:2302.13971) train without dropout.
    InputSpec("dropout", "on/off", None, None, True, log_scale=False, slider=False, kind="bool"),
    # Mixture of experts (moe.py): routed experts (0 = a dense model), top-k,
    # one expert's MLP inner size (0 = ffn_hidden), shared experts, leading dense layers.
    _advanced("experts", "routed experts (0 = dense)", 0, 1024, 0, integer=True),
    _advanced("experts_per_token", "experts per token (top-k)", 1, 64, 2, integer=True),
    _advanced("expert_ffn_hidden", "one expert's MLP inner size (0 = ffn_hidden)", 64, 524288, 0, integer=True,
              derive=True),
    _advanced("shared_experts", "shared experts", 0, 16, 0, integer=True),
    _advanced("dense_layers", "leading dense layers", 0, 64, 0, integer=True),
    # Group-limited routing (DeepSeek-V3 arXiv:2412.19437 Sec 2.1.2, its released config n_group 8,
    # topk_group 4; Megatron-Core --moe-router-num-groups / --moe-router-group-topk): the routed
    # experts in equal groups, each token's top-k drawn from its best few groups (moe.py).
    _advanced("expert_groups", "expert groups (0 = routing over all experts)", 0, 1024, 0, integer=True),
    _advanced("expert_groups_per_token", "groups each token's experts come from (0 = all)", 0, 1024, 0,
              integer=True),
    # Multi-token prediction (DeepSeek-V3 arXiv:2412.19437 Sec 2.2: one module, D = 1; Megatron-Core
    # --mtp-num-layers): modules after the last layer, on the last pipeline stage (shape.py).
    _advanced("mtp_layers", "multi-token prediction modules", 0, 8, 0, integer=True),
    # How routed tokens reach their experts across nodes (stack.py).
    InputSpec("moe_dispatcher", "dispatcher id", None, None, MOE_DISPATCHERS[0], log_scale=False, slider=False,
              kind="choice", choices=MOE_DISPATCHERS),
    # The expert-parallel all-to-all overlapped with another micro-batch's compute
    # (Megatron-Core --overlap-moe-expert-parallel-comm, v0.14 on; DeepSeek-V3's
    # DualPipe); off: exposed, as Megatron-Core ran it before (stack.py).
    InputSpec("moe_comm_overlap", "on/off", None, None, True, log_scale=False, slider=False, kind="bool"),
    # The software stack: what its communication overlaps (stack.py).
    InputSpec("stack", "stack id", None, None, STACKS[0], log_scale=False, slider=False, kind="choice",
              choices=STACKS),
    # Number format of the transformer GEMMs (stack.py).
    InputSpec("precision", "format id", None, None, PRECISIONS[0], log_scale=False, slider=False, kind="choice",
              choices=PRECISIONS),
    # Tensor-parallel collectives overlapped with the GEMMs around them (Megatron-Core
    # --tp-comm-overlap, torchtitan async TP); needs sequence parallelism; the modern and torch_native stacks.
    InputSpec("tp_comm_overlap", "on/off", None, None, True, log_scale=False, slider=False, kind="bool"),
    # The data-parallel gradient reduction runs bucket by bucket while the backward still
    # computes (Megatron-Core --overlap-grad-reduce, DeepSpeed overlap_comm, FSDP's
    # per-layer reduce-scatter); off: it starts when the backward ends (sync.py).
    InputSpec("grad_reduce_overlap", "on/off", None, None, True, log_scale=False, slider=False, kind="bool"),
    # Context parallelism all-gathers keys and values before attention instead of
    # passing them round a ring behind it (Llama 3, arXiv:2407.21783 Sec 3.3.2;
    # Megatron-Core --cp-comm-type all_gather): the exchange is exposed.
    InputSpec("cp_all_gather", "on/off", None, None, False, log_scale=False, slider=False, kind="bool"),
    # With FP8 GEMMs, ZeRO-3/FSDP gathers each layer's weights already cast to FP8,
    # one byte per weight (torchao enable_fsdp_float8_all_gather; Megatron-Core
    # --fp8-param-gather); the embedding and output layer stay 16-bit.
    InputSpec("fp8_weight_gather", "on/off", None, None, False, log_scale=False, slider=False, kind="bool"),
    # torch.compile compiles the loss (torchtitan --training.compile, or compile.components
    # with "loss"): the fused cross-entropy keeps only the 16-bit logits and their gradient
    # (calibration.COMPILED_LOSS_BYTES_PER_LOGIT); torch_native stack only.
    InputSpec("compiled_loss", "on/off", None, None, False, log_scale=False, slider=False, kind="bool"),
    # The PyTorch-native stack runs Transformer Engine's fused attention (cuDNN), the
    # Megatron stacks' kernel, instead of PyTorch SDPA's FlashAttention-2 (NeMo AutoModel:
    # FSDP2 with TE layers); torch_native stack only.
    InputSpec("te_attention", "on/off", None, None, False, log_scale=False, slider=False, kind="bool"),
    # How checkpoints are taken (checkpoint_modes.py): blocking writes, async
    # (device-to-host snapshot, background persist) or in-memory copies on peers.
    InputSpec("checkpoint_mode", "mode id", None, None, "async", log_scale=False, slider=False, kind="choice",
              choices=CHECKPOINT_MODES),
    # The pipeline schedule the framework runs (pipeline.py): 1F1B (interleaved with
    # interleave > 1), DeepSeek-V3's DualPipe or the V-shaped DualPipeV.
    InputSpec("pipeline_schedule", "schedule id", None, None, PIPELINE_SCHEDULES[0], log_scale=False, slider=False,
              kind="choice", choices=PIPELINE_SCHEDULES),
    # What selective recompute recomputes (recompute_modules.py): Megatron-Core's
    # --recompute-modules, default the attention core alone; the modern stack only.
    InputSpec("recompute_modules", "module names", None, None, DEFAULT_RECOMPUTE_MODULES, log_scale=False,
              slider=False, kind="modules", choices=RECOMPUTE_MODULES),
)

SPEC_BY_NAME = {spec.name: spec for spec in INPUT_SPECS}

# How an on/off input may be written (the CLI's flags, the lab's boxes and links), lower case.
BOOL_WORDS = {"true": True, "1": True, "on": True, "yes": True, "false": False, "0": False, "off": False, "no": False}
