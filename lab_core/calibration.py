"""Every constant the model did not derive from a formula — in one place.

Each entry says where it comes from and whether it is *calibrated* (fitted to
a measured figure in content/validation/published.yaml) or a *teaching
assumption* (a round, defensible value a reader may change in their head).
The fits are reproduced by tools/fit_calibration.py.
"""

# --- Compute -------------------------------------------------------------

# Fraction of peak dense 16-bit FLOP/s a large transformer GEMM reaches.
# a100_80gb: CALIBRATED, least-squares fit of the per-layer forward/backward
# times of the 22B model in Korthikanti et al. arXiv:2205.05198 Table 4
# (5 rows x fwd/bwd), jointly with the element-wise constants below.
# Hopper and Blackwell: derived from the FP8 fit below by the ratio of the
# best achievable matmul efficiency in 16-bit and in FP8 measured on the same
# GPU (stas00/ml-engineering compute/accelerator "Maximum Achievable Matmul
# FLOPS": H100 80.3% bf16 vs 70.9% fp8; B200 77.6% vs 76.3%), so no 16-bit
# run is in the fit and the 16-bit Megatron-style runs are out of sample.
GEMM_EFFICIENCY = {
    "a100_80gb": 0.70,
    "h100_80gb": 0.697,
    "h100_96gb_500w": 0.697,
    "h800_80gb": 0.697,
    "h200_141gb": 0.697,
    "b200_192gb": 0.670,
}

# Dense 16-bit peak of Meta's 500 W H100 96 GB (hardware.GPU_PRESETS["h100_96gb_500w"]).
# TorchTitan (arXiv:2410.06511) says of its benchmark GPUs: "limited to a lower TDP. The actual
# peak TFLOPs should be between SXM and NVL, and we don't know the exact value". TEACHING
# ASSUMPTION: the midpoint of H100 SXM's 989 and H100 NVL's 835 TFLOP/s (NVIDIA datasheets).
POWER_CAPPED_H100_PEAK_FLOPS = 0.5 * (989e12 + 835e12)

# GEMM efficiency depends on the GEMM's size: few rows (tokens of one
# micro-batch on one GPU, b s / cp) or a narrow weight dimension on the GPU
# (its smaller side after tensor parallelism) fill the tensor cores less.
# Efficiency = E / (1 + GEMM_TOKEN_SCALE / tokens + GEMM_WIDTH_SCALE / width).
# CALIBRATED (Hopper, Blackwell): log least-squares fit to DeepGEMM's FP8 GEMM
# throughput on H800 by shape at M = 128 and 4,096 rows (deepseek-ai/DeepGEMM
# README, "Normal GEMMs for dense models", commit a9967bc; 12 shapes, rms 13%;
# content/validation/gemm_measurements.yaml, tools/fit_modern_stack.py); the
# same shape dependence is assumed in 16-bit. b200: both scales 2.63 times the
# Hopper ones, CALIBRATED on OpenXLA's matmul table, which measured H100 and B200
# with one harness (48 training-sized 16-bit shapes, m >= 1,024 rows and
# min(n, k) >= 512; log least squares of each shape's B200 / H100 efficiency,
# rms 9.5%): B200's tensor cores do twice the H100's work per SM per cycle, so a
# GEMM must be larger to fill them. a100: 0 (one size, above). The curves cross
# on small GEMMs; efficiency.gemm_rate never lets a GPU run a GEMM slower than a
# GPU it outclasses (a teaching assumption, not a fit).
GEMM_TOKEN_SCALE = {
    "a100_80gb": 0.0,
    "h100_80gb": 276.0,
    "h100_96gb_500w": 276.0,
    "h800_80gb": 276.0,
    "h200_141gb": 276.0,
    "b200_192gb": 724.0,
}
GEMM_WIDTH_SCALE = {
    "a100_80gb": 0.0,
    "h100_80gb": 670.0,
    "h100_96gb_500w": 670.0,
    "h800_80gb": 670.0,
    "h200_141gb": 670.0,
    "b200_192gb": 1758.0,
}

# Fraction of the FP8 dense peak FP8 transformer GEMMs reach before the size
# terms above, casts and scaling included. CALIBRATED (tools/fit_modern_stack.py,
# jointly with ATTENTION_EFFICIENCY, COMM_CONTENTION and the torch_native
# factors): log least-squares over the in-sample groups of
# content/validation/end_to_end.yaml - NeMo 24.07 on H100 (12 runs), NeMo 25.02
# on B200 (6; the b200 value), NeMo's long-sequence table (6) and llm-foundry
# on H100 (77). Every other modern group is out of sample. h200: the H100 value
# times the two GPUs' measured best FP8 matmul, 1,453.4 / 1,402.6 TFLOP/s
# (stas00/ml-engineering, the table below the GEMM shape's; its 16-bit row says
# the H200 is the same as the H100, so GEMM_EFFICIENCY keeps the H100 value).
FP8_GEMM_EFFICIENCY = {
    "h100_80gb": 0.615,
    "h100_96gb_500w": 0.615,
    "h800_80gb": 0.615,
    "h200_141gb": 0.637,
    "b200_192gb": 0.659,
}

# How a flash-attention kernel's rate grows with the query tokens of one
# sequence on one GPU (s / cp): efficiency x 1 / (1 + ATTENTION_SEQ_SCALE / tokens),
# short sequences leave tiles and SMs idle. CALIBRATED (Hopper, Blackwell):
# log least-squares fit to FlashAttention-3's forward throughput on H100 at
# head dimension 128, 16 heads, batch x sequence = 16K tokens, sequence 512 to
# 16K (pytorch/benchmark commit ff65cb6, PR #2391, flash_v3 column: 430 to 621
# TFLOP/s, not causal; 6 rows, largest miss 0.9%;
# content/validation/gemm_measurements.yaml, tools/fit_modern_stack.py); the
# same shape is assumed for the backward and on B200. a100: 0 (its value below
# is the GEMM one, not a flash-attention measurement).
ATTENTION_SEQ_SCALE = {
    "a100_80gb": 0.0,
    "h100_80gb": 234.0,
    "h100_96gb_500w": 234.0,
    "h800_80gb": 234.0,
    "h200_141gb": 234.0,
    "b200_192gb": 234.0,
}

# Rows and columns of the tiles a causal flash-attention kernel computes: a
# tile the causal mask cuts is computed whole, so the s / tile tiles on the
# diagonal add tile / s to the causal half's work. TEACHING ASSUMPTION
# (FlashAttention-3's causal forward tile for head dimension 128 on Hopper is
# 128 x 128: Dao-AILab/flash-attention hopper/tile_size.h, tile_size_fwd_sm90,
# commit 0251105; kept for every GPU and head size).
ATTENTION_CAUSAL_TILE = 128.0

# Fraction of the 16-bit dense peak a flash-attention kernel reaches on the
# causal half it computes, in the limit of long sequences (ATTENTION_SEQ_SCALE
# and ATTENTION_CAUSAL_TILE above lower it on short ones; FlashAttention-2/3,
# arXiv:2307.08691, arXiv:2407.08608; Transformer Engine's fused attention). a100: the GEMM value (the 2021 A100
# rows run without flash attention). Others: CALIBRATED with FP8_GEMM_EFFICIENCY.
ATTENTION_EFFICIENCY = {
    "a100_80gb": 0.70,
    "h100_80gb": 0.376,
    "h100_96gb_500w": 0.376,
    "h800_80gb": 0.376,
    "h200_141gb": 0.376,
    "b200_192gb": 0.376,
}

# The software stack's kernels: factors on the GEMM and element-wise rates
# (compute) and on the attention rate above; 1 for Megatron-Core with
# Transformer Engine and for the 2021 stack the A100 fit describes.
# torch_native (torchtitan, FSDP, torch.compile, PyTorch's flash attention):
# CALIBRATED with FP8_GEMM_EFFICIENCY on llm-foundry's runs (torchtitan's are
# out of sample). Its attention factor stands for the PyTorch-native kernels
# (PyTorch SDPA's FlashAttention-2 in torchtitan) against Transformer Engine's
# fused attention on Hopper; the fit lands near the 1/2 to 2/3 implied by the
# 1.5-2.0x by which FlashAttention-3 outruns FlashAttention-2 on H100
# (arXiv:2407.08608, abstract). TEACHING ASSUMPTION: one factor for two kernels.
# Most llm-foundry rows ran MPT's Triton flash attention (its benchmarking
# scripts: submit_benchmarks.py --attn_impl defaults to triton; the 2024 sweep.py
# runs 13b and 30b on triton, 1b, 3b, 7b and 70b on flash-attn 2). Fitted apart,
# FlashAttention-2 came out at 0.440 against Triton's 0.483 (the 2K-token rows
# hardly pin it) and the out-of-sample torchtitan rows missed by more, so one
# factor is kept.
# A PyTorch-native run on Transformer Engine's attention (Workload.te_attention)
# takes the "modern" factor (stack.attention_kernels).
STACK_COMPUTE_EFFICIENCY = {
    "modern": 1.0,
    "torch_native": 1.033,
    "megatron_lm_2021": 1.0,
}
STACK_ATTENTION_EFFICIENCY = {
    "modern": 1.0,
    "torch_native": 0.483,
    "megatron_lm_2021": 1.0,
}

# Bytes per value of the all-gather torchao's float8 tensor parallelism sends
# (tensorwise scaling, torchtitan's default float8 recipe: PrepareFloat8ModuleInput
# casts the sequence shard to FP8 before gathering it, torchao/float8/
# float8_tensor_parallel.py), and so of the gathered GEMM input eager PyTorch TP
# keeps for the backward (activations.gathered_input_bytes; 16-bit otherwise).
FLOAT8_GATHER_BYTES = 1.0

# Bytes of HBM traffic per byte of stored activation in the forward pass
# (element-wise ops: layernorm, dropout, GeLU, softmax read and write their
# tensors). CALIBRATED on arXiv:2205.05198 Table 4: sequence parallelism
# shortens the forward pass by exactly the element-wise work it shards.
ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE = 2.0

# Backward element-wise traffic relative to forward. CALIBRATED (Table 4).
BACKWARD_ELEMENTWISE_RATIO = 0.9

# Fraction of achievable HBM bandwidth element-wise kernels reach.
# TEACHING ASSUMPTION (memory-bound kernels typically reach 80-90%).
HBM_EFFICIENCY = 0.85

# Forward passes of the attention core a flash-attention backward adds to the
# two every backward is charged (timing.layer_times): the kernel recomputes the
# scores instead of storing them. TEACHING ASSUMPTION: FlashAttention's own
# count is 2.5 forwards for its backward (5 matmuls against the forward's 2;
# Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py, flops()),
# i.e. 0.5 here. Under full recompute the replayed forward stands in for it:
# four forwards of attention in either case, where the kernels' count gives 3.5
# and 4.5. Refitted with the kernels' count (0.5 here, and 0.5 added under full
# recompute; tools/fit_modern_stack.py), the modern constants miss the
# out-of-sample runs by more (make validation), so the round count is kept.
FLASH_BACKWARD_RECOMPUTE = 1.0

# Fixed time per transformer layer per pass (kernel launches, small ops).
# TEACHING ASSUMPTION: ~10 kernels x ~4 us; matters only for small models.
LAYER_PASS_OVERHEAD_S = 40e-6

# --- Communication -------------------------------------------------------

# Size dependence of NCCL bus bandwidth:
#   busbw(S) = asymptote * S / (S + C * sqrt(S * MiB) + D * MiB)
# CALIBRATED: log least-squares fit to the H200 8-GPU all-reduce busbw by
# message size (1 MiB..16 GiB) in hw.nccl_busbw_measured (stas00/ml-engineering
# network/benchmarks); within 6% at every measured size. D*MiB/asymptote is the
# ~6 us latency; the sqrt term is the protocol/chunking ramp.
NCCL_SIZE_C = 3.3
NCCL_SIZE_D = 2.85
MIB = 1048576.0

# Asymptotic all-reduce bus bandwidth inside a node, as a fraction of the
# preset's one-way NVLink bandwidth.
# CALIBRATED: h200 514/450 (fit above; NVLS/SHARP lifts it above the link
# spec); b200 from its 1-node 16 GiB busbw 838.97 GB/s (/0.975 curve value).
# h100: same NVLink4/NVSwitch as H200 (assumption). a100: CALIBRATED with the
# Table 4 fit (no NVLS on NVLink3).
NVLINK_BUSBW_FRACTION = {
    "a100_80gb": 0.95,
    "h100_80gb": 1.142,
    "h100_96gb_500w": 1.142,
    "h200_141gb": 1.142,
    "b200_192gb": 0.956,
    # h800: 160 GB/s achieved of its 200 GB/s one-way NVLink (arXiv:2412.19437 Sec 3.2.1).
    "h800_80gb": 0.8,
}

# Asymptotic fraction of the per-GPU inter-node NIC rate (IB/RoCE) a ring
# collective reaches. TEACHING ASSUMPTION (~90% of line rate is typical).
INTER_NODE_EFFICIENCY = 0.9

# A collective spanning nodes runs an intra-node reduce-scatter/all-gather and
# an inter-node ring; NCCL pipelines them partly. Time = max + this * min.
# CALIBRATED on the B200 4-node (32-rank) 16 GiB busbw 376.71 GB/s of
# hw.nccl_busbw_measured.
HIERARCHICAL_SERIAL_FRACTION = 0.43

# Latency of one step of a ring between nodes: NCCL's tuner charges a ring
# collective (nsteps - nInterSteps) intra-node and nInterSteps inter-node step
# latencies, nInterSteps = 2 (nodes - 1) for an all-reduce and nodes - 1 for a
# reduce-scatter or all-gather (NVIDIA/nccl src/graph/tuning.cc, commit
# 5067397c, ncclTopoTuneModel). The size curve above, measured inside one node,
# already holds the intra-node steps; comms.group_time adds the inter-node ones.
# TEACHING ASSUMPTION: NCCL's own estimate for a ring step over the network with
# its LL128 protocol, hwLatencies[NET][RING][LL128] = 4.0 us (2.7 for LL, 14.0
# for Simple, the protocol of its largest messages).
INTER_NODE_STEP_LATENCY_S = 4.0e-6

# Fraction of the tensor-parallel all-reduce time hidden in the backward pass
# (Megatron overlaps the input-gradient all-reduce with the weight-gradient
# GEMM). CALIBRATED (Table 4 fit): the fit finds none is hidden.
TP_BACKWARD_OVERLAP = 0.0

# Modern stacks run collectives on the GPU's own SMs and HBM while compute
# runs: each second of overlapped (hidden) communication slows the compute it
# hides behind by this many seconds. CALIBRATED with FP8_GEMM_EFFICIENCY.
COMM_CONTENTION = 0.406

# Gradient buckets: data-parallel gradients go out in buckets of this size,
# which sets the message size seen by NCCL. TEACHING ASSUMPTION (Megatron's
# default bucket of 40M parameters x 2-4 bytes is 80-160 MB; PyTorch DDP 25 MB).
DP_BUCKET_BYTES = 100e6

# Fraction of a compute window during which overlappable communication (DP
# gradient buckets, ZeRO-3 weight gathers and gradient reduce-scatters) runs
# alongside it. One window is shared by all of that traffic, so compute hides
# communication at most once: without ZeRO-3 the window is the backward of
# the last micro-batch (gradients become final only then); with ZeRO-3 it is
# each micro-batch's own forward (gathers) and backward (gathers +
# reduce-scatters), prefetching one layer ahead (DeepSpeed/FSDP prefetch;
# arXiv:1910.02054 Sec 7.2.2 for the volume). Below 1, so extra compute never
# shortens a step. CALIBRATED: log least-squares fit to the six DeepSpeed
# ZeRO-3 rows of arXiv:2104.04473 Table 2 (175B and 530B on 384-2,240 A100s),
# where the weight gathers are as long as the compute and so isolate how much
# of them compute hides (content/validation/end_to_end.yaml, group
# table2_zero3; tools/fit_calibration.py). Compute and NCCL share SMs and
# HBM, so well under half of a window hides traffic. The Megatron-style runs
# are nearly insensitive to it (their mean error moves by 0.1 point from 0.8).
DP_OVERLAP_FRACTION = 0.40

# --- Memory: the loss ----------------------------------------------------

# Bytes per logit (one token x one vocabulary entry on one GPU, after the
# vocabulary-parallel split over tensor parallelism) held at the loss's peak,
# by software stack (Workload.stack), on one GPU per vocabulary and with the
# vocabulary split over tensor parallelism;
# activations.loss_bytes. TEACHING ASSUMPTIONS read from the code each stack runs:
# - Megatron (modern, megatron_lm_2021): vocab_parallel_cross_entropy upcasts
#   the bf16 logits to an fp32 copy and computes the softmax, then the
#   gradient, in place in that copy (megatron/core/tensor_parallel/
#   cross_entropy.py): 2 (bf16 logits) + 4 (fp32 copy) = 6, with or without
#   tensor parallelism. Korthikanti et al. arXiv:2205.05198 Sec 4.2.3 count
#   the fp32 copy only (4).
# - torch_native, one GPU per vocabulary: torchtitan's eager
#   cross_entropy(pred.float()) (train.py as of 2024-12: "compiling loss
#   function causes CUDA errors, turning off for now"): the backward of
#   log-softmax holds its saved fp32 output, the fp32 gradient nll_loss
#   returns and its own fp32 result, 3 x 4 = 12 (the forward's bf16 logits +
#   fp32 copy + fp32 output, 10, is below).
# - torch_native with tensor parallelism: torchtitan's loss_parallel runs
#   DTensor's decomposition (torch/distributed/tensor/_ops/_math_ops.py):
#   _log_softmax keeps the fp32 copy, the shifted logits, their exp and the
#   result (with the bf16 logits, 14), _nll_loss_and_log_softmax_backward
#   the saved output, a zeros_like gradient, the exp of the output and the
#   update: 4 x 4 = 16.
LOSS_BYTES_PER_LOGIT = {
    "modern": {"one_gpu": 6.0, "vocab_parallel": 6.0},
    "megatron_lm_2021": {"one_gpu": 6.0, "vocab_parallel": 6.0},
    "torch_native": {"one_gpu": 12.0, "vocab_parallel": 16.0},
}

# The same with the loss compiled (Workload.compiled_loss, torch_native only):
# torchtitan wraps cross_entropy(pred.float(), labels) in torch.compile when
# training.compile is on (torchtitan/components/loss.py, build_cross_entropy_loss;
# later versions when compile.components holds "loss"). Inductor fuses the fp32
# upcast, the log-softmax, the gather of the labels' entries and the backward
# into kernels that keep their fp32 values in registers: what stays in memory
# is the bf16 logits saved for the backward and the bf16 gradient it writes,
# 2 + 2 = 4 (and a few fp32 numbers per token). TEACHING ASSUMPTION, the same
# with the vocabulary split over tensor parallelism. Not fitted: the measured
# peaks of the two compiled runs of content/validation/end_to_end.yaml
# (torchtitan_memory, H200) are out of sample.
COMPILED_LOSS_BYTES_PER_LOGIT = {"one_gpu": 4.0, "vocab_parallel": 4.0}

# Per-op selective checkpointing keeps the output of the gated MLP's first
# GEMM (w1), whose width is the MLP's inner size: this share of ffn_hidden,
# as the lab enters a gated MLP of inner size f as ffn_hidden = 1.5 f
# (shape.py). TEACHING ASSUMPTION: the MLP is gated (SwiGLU), as in every
# model torchtitan ships (Llama 3, Qwen3, DeepSeek-V3); activations.per_op_selective_bytes.
GATED_MLP_INNER_SHARE = 2.0 / 3.0

# Peak memory the PyTorch caching allocator reserves over the peak its tensors
# occupy (torch.cuda.memory_stats "reserved_bytes.all.peak" over
# "allocated_bytes.all.peak"): freed blocks stay cached for reuse and large
# blocks are split and rounded up (PyTorch docs, "CUDA semantics: memory
# management"), so the peak a framework logs is above the allocated peak the
# lab computes (gpu_memory.reserved_bytes; only the validation against such
# readings uses it: the planner's MEMORY_SAFETY_MARGIN budgets for it).
# CALIBRATED: the geometric mean of torchtitan's Table 1 readings (Llama 3.1 8B
# on 8 H100, 77.0 GiB bf16 and 76.8 GiB fp8) over the lab's allocated peak of
# those runs, group torchtitan_memory_fit of content/validation/end_to_end.yaml
# (reproduced by tools/fit_calibration.py, fit_reserved_ratio).
ALLOCATOR_RESERVED_RATIO = 1.09

# --- Mixture of experts -------------------------------------------------

# Tokens an expert processes relative to a perfectly even share: the capacity
# factor of GShard / Switch Transformer (arXiv:2101.03961 Sec 2.2). 1.0: the
# published benchmarks force-balance routing and drop no token (Megatron-Bridge
# performance summary footnote). TEACHING ASSUMPTION: real routing is uneven.
MOE_CAPACITY_FACTOR = 1.0

# Fraction of the expert-parallel all-to-all (token dispatch and combine) the
# step waits for on the modern stacks with Workload.moe_comm_overlap; the rest
# overlaps other micro-batches' compute (Megatron-Core's
# --overlap-moe-expert-parallel-comm, DeepSeek-V3's DualPipe, arXiv:2412.19437
# Sec 3.2.1). Without that overlap, and on the 2021 stack, the step waits for
# all of it. Fitted with the token permutation's memory traffic in the MoE
# layers (step_time.expert_permutation_seconds).
# CALIBRATED: log least-squares on the two in-sample MoE runs of
# content/validation/end_to_end.yaml (group moe_mbridge_h100: DeepSeek-V3 on
# 1,024 H100s with multi-head latent attention, the per-node dispatcher and its
# node-limited routing (8 expert groups, 4 per token: moe.py), Qwen3-235B on 256
# with heads of 128 and the plain all-to-all, Megatron-Bridge;
# step_time.expert_alltoall_times for the volumes, attention.py for the shapes);
# the other MoE runs are out of sample. (0.194 before the routing's node limit
# was modelled: the limit leaves fewer copies on the fabric, and the fit waits
# for a larger share of them; 0.258 before the activations took the attention's
# own widths and DeepSeek-V3's row its recipe's selective recompute of
# mla_up_proj and mlp, recompute_modules.py, which slow that row, and before
# both rows took the recipes' 16-bit gradient reduction; 0.2236 before Qwen3-235B's
# row took its recipe's tensor-parallel overlap, off; 0.2002 before DeepSeek-V3's row
# took its multi-token-prediction module and its recipe's layout; 0.1956 before it
# took its recipe's gradient reduce-scatter without overlap, grad_reduce_overlap off;
# 0.1950 before rings between nodes paid INTER_NODE_STEP_LATENCY_S per step and the
# modern constants were refitted with it.)
MOE_ALLTOALL_EXPOSED = 0.2011

# --- Optimizer -----------------------------------------------------------

# HBM bytes moved per locally owned parameter in one optimizer step of
# mixed-precision Adam (state layout of arXiv:1910.02054 Sec 3.1), pass by pass:
# unscale and inf-check the fp32 gradient (read 4), its norm for clipping
# (read 4), Adam (read master, grad, m, v: 16; write master, m, v: 12), copy
# the master into the 16-bit weight (read 4, write 2), zero the gradient
# buffer (write 4). TEACHING ASSUMPTION: every pass streams from HBM once.
OPTIMIZER_BYTES_PER_PARAM = 46.0

# --- Data ----------------------------------------------------------------

# Bytes read from storage per training token (pre-tokenized uint32 ids).
# TEACHING ASSUMPTION.
DATA_BYTES_PER_TOKEN = 4.0

# --- Failures and checkpoints -------------------------------------------

# Unexpected interruptions of Llama 3 405B pre-training by root cause: 54 days
# on up to 16,384 H100 (arXiv:2407.21783 Sec 3.3.4, Table 5): (component,
# category, count). The counts sum to the 419 unexpected interruptions of the
# text; the per-GPU rate below is fitted to that total. (Table 5 prints 30.1%
# for the 148 faulty GPUs, which is 35.3% of 419; the counts are used here.)
LLAMA3_INTERRUPTIONS_BY_COMPONENT = (
    ("faulty_gpu", "gpu", 148),
    ("gpu_hbm3", "gpu", 72),
    ("software_bug", "dependency", 54),
    ("network_switch_cable", "network", 35),
    ("host_maintenance", "unplanned_maintenance", 32),
    ("gpu_sram", "gpu", 19),
    ("gpu_system_processor", "gpu", 17),
    ("nic", "host", 7),
    ("nccl_watchdog_timeout", "unknown", 7),
    ("silent_data_corruption", "gpu", 6),
    ("gpu_thermal_sensor", "gpu", 6),
    ("ssd", "host", 3),
    ("power_supply", "host", 3),
    ("server_chassis", "host", 2),
    ("io_expansion_board", "host", 2),
    ("dependency", "dependency", 2),
    ("cpu", "host", 2),
    ("system_memory", "host", 2),
)

# Unexpected interruptions of Llama 3 405B pre-training: 419 in 54 days on
# 16,384 H100 (arXiv:2407.21783 Sec 3.3.4, Table 5). CALIBRATED per-GPU rate.
# The same window had 47 planned interruptions (maintenance, configuration or
# dataset updates; Sec 3.3.4): the validation of effective training time counts them.
LLAMA3_UNEXPECTED_INTERRUPTIONS = 419
LLAMA3_PLANNED_INTERRUPTIONS = 47
LLAMA3_WINDOW_HOURS = 54 * 24
LLAMA3_GPUS = 16384
GPU_FAILURES_PER_HOUR = LLAMA3_UNEXPECTED_INTERRUPTIONS / (LLAMA3_WINDOW_HOURS * LLAMA3_GPUS)

# Bytes per parameter in a checkpoint: 16-bit weights (2) + fp32 master
# weights, momentum and variance (12). Matches BLOOM-176B's 14 B/param
# (bigscience tr11 README) and Megatron's 13.8 TB for 1T (arXiv:2104.04473 Sec 5.10).
CHECKPOINT_BYTES_PER_PARAM = 14.0

# The pause of a device-to-host snapshot (the blocking part of an async or
# in-memory checkpoint): a fixed part (planning, synchronisation, pinned
# buffers) plus the GPU's shard of the checkpoint at an effective rate.
# CALIBRATED: two-point fit to the blocking times of ByteCheckpoint
# (arXiv:2407.20143 Table 8): 0.59 s for a 405B model on 8,960 GPUs
# (Megatron-LM, TP 8, DP 70, PP 16) and 0.34 s for a 7B model on 1,488 GPUs
# (FSDP ZeRO-2), with CHECKPOINT_BYTES_PER_PARAM x parameters / GPUs per GPU.
# The rate is well below PCIe's because it counts serialisation of many small
# tensors, not only the copy.
CHECKPOINT_SNAPSHOT_OVERHEAD_S = 0.311
CHECKPOINT_SNAPSHOT_BYTES_PER_S = 2.27e9

# In-memory checkpoints (GEMINI, SOSP'23, doi:10.1145/3600006.3613145 Sec 4):
# copies of each GPU's snapshot held in host memory, its own machine's and
# one peer's, the fewest that survive the loss of one machine.
# TEACHING ASSUMPTION (GEMINI's placement keeps m copies per group; 2 here).
IN_MEMORY_COPIES = 2

# In-memory checkpointing still persists to storage, less often: every this
# many in-memory checkpoints (GEMINI Sec 2.2: storage for the failures that
# lose every copy; Megatron-LM's non-persistent local checkpoints next to
# --save-interval). TEACHING ASSUMPTION.
IN_MEMORY_PERSIST_EVERY = 10

# Time from a failure to the job knowing it must restart. Crashes are seen at
# once; hangs only when a collective times out (PyTorch's default NCCL
# timeout is 10 minutes). MegaScale reports detection plus diagnostic tests
# under 10 minutes on average (arXiv:2402.15627 Sec 6.3). TEACHING ASSUMPTION.
RECOVERY_DETECTION_S = 300.0

# Replacing the failed machine and relaunching the job: scheduling onto a
# spare, starting the processes, importing, building the model; the
# communicator set-up and the checkpoint load are counted apart. Meta's
# research clusters put the whole restart overhead at 5-20 minutes
# (arXiv:2410.21680); ByteRobust often sees failovers of more than 10 minutes
# at 10,000 GPUs (arXiv:2509.16293). TEACHING ASSUMPTION.
RECOVERY_JOB_RESTART_S = 300.0

# Communicator set-up after a restart grows with the GPU count (TCPStore
# barriers and process-group creation over every rank). With MegaScale's
# O(n) initialisation (arXiv:2402.15627 Sec 3.5) it takes under 5 s on
# 2,048 GPUs. CALIBRATED: seconds per GPU, fitted to that figure (the same
# section's "under 30 s on more than 10,000 GPUs" is out of sample).
COMM_INIT_S_PER_GPU = 5.0 / 2048
