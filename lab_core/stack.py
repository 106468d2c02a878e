"""Software stacks and number formats: what a framework overlaps, and in what format it computes.

STACKS (Workload.stack):
- ``modern``: Megatron-Core with Transformer Engine (NeMo, Megatron-Bridge; 2023 on). Data-parallel
  gradients are reduce-scattered bucket by bucket while the last
  micro-batch's backward runs, and the distributed optimizer's parameter
  all-gather runs under the next step's first forward (Megatron-Core
  --overlap-grad-reduce / --overlap-param-gather, docs of
  megatron/core/distributed/distributed_data_parallel_config.py); FSDP / ZeRO-3
  gathers each layer's weights one layer ahead and reduce-scatters its
  gradients right after its backward (PyTorch FSDP, arXiv:2304.11277 Sec 3.3-3.4);
  tensor-parallel collectives overlap the GEMMs around them where
  Workload.tp_comm_overlap is on (Transformer Engine userbuffers; torchtitan
  async TP); pipeline sends are asynchronous.
- ``torch_native``: the PyTorch-native stack (torchtitan, FSDP/FSDP2 as in
  llm-foundry/Composer, torch.compile, torchao float8). The same overlap as
  ``modern``; its kernels (SDPA flash attention, compiled element-wise ops,
  torchao casts) reach a different fraction of the GPU, fitted on its own
  published runs (calibration.STACK_COMPUTE_EFFICIENCY, STACK_ATTENTION_EFFICIENCY). Its attention
  kernel is FlashAttention-2's (PyTorch SDPA's flash backend, flash-attn 2 in llm-foundry); with
  Workload.te_attention it is Transformer Engine's fused attention, as on ``modern`` (NeMo
  AutoModel: FSDP2 with TE layers). Its Llama
  computes the query, key and value projections as three GEMMs, not one (efficiency.layer_gemm_seconds).
  Its hybrid sharding all-reduces across the replicas after every backward (syncs_replicas_every_backward).
- ``megatron_lm_2021``: Megatron-LM as the 2021-2023 papers ran it (arXiv:2104.04473,
  arXiv:2205.05198, MegaScale's baseline arXiv:2402.15627): one calibrated
  overlap window for data-parallel traffic (calibration.DP_OVERLAP_FRACTION),
  tensor-parallel collectives exposed, DeepSpeed-style ZeRO-3 gathers.

PRECISIONS (Workload.precision): ``bf16`` GEMMs, or ``fp8`` GEMMs (Transformer
Engine / torchao float8: the transformer layers' matrix multiplies in FP8 with
their own peak; attention, the output layer, optimizer state and gradient
reduction stay in 16/32-bit, arXiv:2209.05433 Sec 4).

MEMORY (what a stack keeps for the backward pass, activations.py):
- selective recompute: the Megatron stacks drop the attention core and keep
  the rest (arXiv:2205.05198 Sec 5); torchtitan's "selective" is PyTorch's
  per-op selective checkpointing, which keeps the block input and every
  other matrix multiply's output and recomputes the rest
  (activations.per_op_selective_bytes); the backward pays for that replay:
  every second GEMM of the forward (efficiency.per_op_replayed_gemms; the
  element-wise ops it replays fuse into the compiled backward, timing.layer_times).
- fp8: Transformer Engine keeps the FP8 copies of the GEMM inputs it
  multiplied with (arXiv:2209.05433 Sec 4); torchao's float8 linear keeps its
  high-precision input (torchao/float8/float8_linear.py), so FP8 saves no
  activation memory on ``torch_native``.
- tensor parallelism with sequence parallelism: Megatron keeps each GEMM's
  input as its sequence shard; PyTorch's eager TP (``torch_native`` without
  Workload.tp_comm_overlap) keeps the all-gathered input of the attention and
  the MLP (activations.gathered_input_bytes; stack.gathers_tp_inputs).
- the loss: calibration.LOSS_BYTES_PER_LOGIT.

MOE_DISPATCHERS (Workload.moe_dispatcher): how mixture-of-experts tokens
travel to their experts (step_time.expert_alltoall_times). ``all_to_all``:
one copy per routed expert, as NCCL's all-to-all sends it (Megatron-Core's
default --moe-token-dispatcher-type alltoall). ``per_node``: one copy per
target node over the fabric, forwarded over NVLink inside it (DeepSeek-V3,
arXiv:2412.19437 Sec 3.2.2; DeepEP, Megatron-Core's flex dispatcher).
Workload.moe_comm_overlap: whether those all-to-alls hide behind another
micro-batch's compute (Megatron-Core v0.14 on, DualPipe) or are exposed
(step_time.expert_alltoall_times); a modern-stack feature.
"""

from .calibration import FLOAT8_GATHER_BYTES
from .memory import WEIGHT_BYTES
from .parallelism import RECOMPUTE_MODES

STACKS = ("modern", "torch_native", "megatron_lm_2021")
PRECISIONS = ("bf16", "fp8")
MOE_DISPATCHERS = ("all_to_all", "per_node")


def is_modern(stack):
    """Overlap derived from the schedule (both modern stacks), not the 2021 window."""
    return stack != "megatron_lm_2021"


def syncs_replicas_every_backward(stack):
    """Hybrid sharding with sharded gradients (ZeRO-2/3 over dp_shard of the ranks)
    all-reduces each shard across the replicas after every backward: PyTorch FSDP2 does
    unless set_requires_all_reduce(False) (torch/distributed/fsdp/_fully_shard, the
    documented way to skip it under gradient accumulation), which torchtitan never calls;
    Megatron-FSDP reduces across its outer data-parallel group once per step."""
    return stack == "torch_native"


def per_op_selective(stack):
    """Selective recompute is PyTorch's per-op selective checkpointing (torchtitan)."""
    return stack == "torch_native"


def keeps_fp8_inputs(stack, precision):
    """The GEMMs keep their inputs for the backward in FP8 (Transformer Engine), not torchao."""
    return precision == "fp8" and stack != "torch_native"


def attention_kernels(stack, te_attention):
    """The stack whose attention kernel runs (calibration.STACK_ATTENTION_EFFICIENCY's key):
    Workload.te_attention gives the PyTorch-native stack Transformer Engine's, the modern stack's."""
    return "modern" if te_attention and stack == "torch_native" else stack


def gathers_tp_inputs(stack, tp_overlap, precision):
    """Bytes per value of the all-gathered inputs tensor parallelism saves for its
    column-parallel GEMMs (activations.gathered_input_bytes), 0 for none: PyTorch's
    eager TP, in FP8 with torchao's float8 TP (tensorwise scaling, torchtitan's
    default float8 recipe), not its asynchronous TP (tp_overlap, fused all-gather
    GEMMs) and not Megatron's."""
    if stack != "torch_native" or tp_overlap:
        return 0.0
    return FLOAT8_GATHER_BYTES if precision == "fp8" else WEIGHT_BYTES


def compiles_loss(stack, compiled_loss):
    """Workload.compiled_loss applies: torch.compile compiles the loss (torchtitan);
    the Megatron stacks run their own loss (calibration.LOSS_BYTES_PER_LOGIT)."""
    return compiled_loss and stack == "torch_native"


def tp_overlap_waiting_share(stack, recompute):
    """Share of an overlapped layer's tensor-parallel collectives whose first or last
    ring step the GEMMs wait for (step_time.tensor_parallel_exposed); the other
    collectives hide whole. A layer's traffic is all-gather + reduce-scatter pairs,
    2 per forward pass and 2 per backward (timing.layer_times), one more forward
    pass with full recompute.

    modern (Transformer Engine userbuffers, --tp-comm-overlap, with TE's default
    methods: transformer_engine/pytorch/module/base.py initialize_ub): the
    all-gathers before the column-parallel GEMMs and of the output gradients
    (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad) are ring exchanges that
    multiply the local chunk first while the next one arrives
    (common/comm_gemm_overlap/comm_gemm_overlap.cpp, CommOverlapP2PBase::
    split_overlap_ag); the backward's all-gather of the input and reduce-scatter
    of the input gradient run whole beside the dgrad and wgrad GEMMs (bulk:
    qkv/fc1_dgrad, qkv/fc1_wgrad; CommOverlapBase::bulk_overlap); only the
    reduce-scatter after each forward row-parallel GEMM (pipeline: proj_fprop,
    fc2_fprop; CommOverlapBase::split_overlap_rs) waits for its last chunk: 2 of
    the 4 collectives of a forward pass, none of the backward's. (Megatron-Bridge's
    H100 configs, src/megatron/bridge/training/comm_overlap.py, keep these
    roles.)

    torch_native (PyTorch async TP, torch.distributed._symmetric_memory
    fused_all_gather_matmul / fused_matmul_reduce_scatter): the fused all-gather
    GEMM consumes its local shard first, the fused GEMM reduce-scatter waits for
    its last chunk; the backward of each is the other, so one reduce-scatter of
    each pair waits, forward and backward alike."""
    forwards = 2.0 if recompute == "full" else 1.0
    if stack == "torch_native":
        return 0.5
    return forwards / (2.0 * (forwards + 1.0))


def least_tp_overlap_waiting_share(stack):
    """The smallest tp_overlap_waiting_share of a stack over recompute modes (planner bounds)."""
    return min(tp_overlap_waiting_share(stack, mode) for mode in RECOMPUTE_MODES)


def fuses_qkv(stack):
    """Whether the stack's attention runs one fused query/key/value GEMM
    (Megatron-LM and Megatron-Core, linear_qkv) or three (torchtitan's Llama)."""
    return stack != "torch_native"
