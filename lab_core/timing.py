"""Time of one micro-batch on the bottleneck pipeline stage, per part.

Per layer and micro-batch, on one GPU (Megatron-style GPT layer):
  forward  = FLOPs / (peak x GEMM efficiency)              [compute]
           + element-wise traffic / (HBM bandwidth x eff.)   [memory-bound ops]
           + fixed per-layer overhead
  backward = 2 x forward FLOPs (arXiv:2104.04473 Sec 5.1: backward = 2 forward)
           + calibration.cal.BACKWARD_ELEMENTWISE_RATIO x element-wise traffic
  recompute: full = one more forward (arXiv:2104.04473 Eq 3); selective = the
           attention core again (arXiv:2205.05198 Sec 5); flash attention
           recomputes the attention core in its backward (arXiv:2205.14135);
           PyTorch's per-op selective checkpointing (torch_native) replays
           every second GEMM (efficiency.per_op_replayed_gemms).
  tensor parallel: 2 all-reduces of b s h 16-bit values forward, 2 backward
           (arXiv:2104.04473 Sec 2.3), 2 more when full recompute replays the
           forward (arXiv:1910.02054 Sec 8); sequence parallelism replaces each by
           a reduce-scatter + all-gather of the same ring volume
           (arXiv:2205.05198 Sec 4.2.2). The backward ones overlap the
           weight-gradient GEMMs in part (calibration.cal.TP_BACKWARD_OVERLAP).
Element-wise traffic is proportional to the activation bytes a layer writes
(activations.per_layer_bytes without recompute), which is how sequence
parallelism and flash attention speed up the forward pass (arXiv:2205.05198
Table 4). The constants are calibrated there (see calibration.py).
"""
from dataclasses import dataclass

from .activations import per_layer_bytes, scores_units
from . import calibration as cal
from .comms import ring_time
from .flops import layer_forward_flops, logits_forward_flops


@dataclass(slots=True)
class LayerTimes:
    """Seconds per layer per micro-batch: forward, backward, recompute, TP comm,
    and the forward GEMMs and attention kernel alone (the work tensor- and
    context-parallel overlap hides behind)."""

    forward: float
    backward: float
    recompute: float
    tp_comm: float
    gemm_forward: float = 0.0
    attention_forward: float = 0.0


def layer_times(s, b, h, a, f, t, sequence_parallel, recompute, flash_attention,
                flops_rate, hbm_rate, nvlink_rate, kv_ratio=1.0, dropout=True,
                attention_rate=None, causal=False, cp=1, gemm_seconds=None, attention_shape=None,
                replay_seconds=None, modules=None):
    """Per-layer times (see module docstring for the sources).

    flops_rate: achieved FLOP/s of the GEMMs; attention_rate: of the attention
    core (default flops_rate); causal: the attention kernel skips the masked
    half of the scores (FlashAttention's causal mode, arXiv:2307.08691 Sec 3.1);
    cp: context-parallel ranks sharing the sequence, each with s / cp tokens
    (load-balanced, so each does 1/cp of the attention, Megatron-Core's CP);
    gemm_seconds: the forward GEMMs' time when each runs at its own rate
    (efficiency.layer_gemm_seconds), else GEMM FLOPs / flops_rate;
    attention_shape: the attention block's own sizes (attention.AttentionShape;
    flops.layer_forward_flops), None for h wide;
    replay_seconds: with selective recompute, the forward seconds of the GEMMs
    per-op selective checkpointing replays (efficiency.per_op_replayed_gemms),
    None for Megatron's selective recompute. Per-op checkpointing saves the
    outputs of matrix multiplies and attention only, so the element-wise ops
    (norms, rotary embedding, activation, residual adds) are replayed too,
    but under torch.compile (the torch_native stack, stack.py) AOTAutograd's
    min-cut partitioner fuses recomputed pointwise ops into the backward's
    kernels, which read the same inputs (pytorch/pytorch
    torch/_functorch/partitioners.py, min_cut_rematerialization_partition):
    no extra memory traffic is charged for them. Flash attention still
    recomputes its core in its backward: calibration.FLASH_BACKWARD_RECOMPUTE
    more forwards of it, except under full recompute, whose replayed forward
    stands in for them (a teaching assumption; the constant says why).
    modules: with selective recompute, Megatron-Core's recompute modules
    (recompute_modules.py) whose replay replay_seconds is
    (recompute_replay.module_replay); the attention core is replayed only
    with core_attn (or by flash attention's backward).
    """
    gemm, attention = layer_forward_flops(b, s, h, f, kv_ratio, attention_shape)
    gemm /= t * cp
    attention /= t * cp
    if causal:
        attention *= 0.5
    gemm_s = gemm / flops_rate if gemm_seconds is None else gemm_seconds
    attention_s = attention / (attention_rate or flops_rate)
    compute = gemm_s + attention_s
    tokens = s / cp
    written = per_layer_bytes(tokens, b, h, a, t, sequence_parallel, "none", flash_attention, f, kv_ratio, dropout,
                              attention=attention_shape)
    elementwise = cal.ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * written / hbm_rate
    forward = compute + elementwise + cal.LAYER_PASS_OVERHEAD_S
    backward = 2.0 * compute + cal.BACKWARD_ELEMENTWISE_RATIO * elementwise + cal.LAYER_PASS_OVERHEAD_S
    all_reduce = ring_time(2.0 * b * tokens * h, t, nvlink_rate) if t > 1 else 0.0
    tp_comm = 2.0 * all_reduce + 2.0 * all_reduce * (1.0 - cal.TP_BACKWARD_OVERLAP)
    # The attention core's replay outside full recompute: flash attention's in its backward, or selective recompute's.
    core_replay = (cal.FLASH_BACKWARD_RECOMPUTE if flash_attention else 1.0) * attention_s
    if recompute == "full":
        extra = forward
        tp_comm += 2.0 * all_reduce
    elif recompute == "selective" and replay_seconds is not None:
        # Per-op checkpointing (modules None), or Megatron-Core's modules, which replay the core only
        # with core_attn (flash attention's backward replays it whatever the modules).
        extra = replay_seconds
        if flash_attention or modules is None:
            extra += core_replay
        elif "core_attn" in modules:
            extra += core_replay + _scores_traffic(a, s, b, t, hbm_rate, dropout)
    elif flash_attention:
        extra = core_replay
    elif recompute == "selective":
        extra = core_replay + _scores_traffic(a, s, b, t, hbm_rate, dropout)
    else:
        extra = 0.0
    return LayerTimes(forward, backward, extra, tp_comm, gemm_s, attention_s)


def _scores_traffic(a, s, b, t, hbm_rate, dropout):
    """Seconds of the attention core's score tensors written again when selective recompute
    replays it without flash attention: the ones the forward wrote, scores_units(dropout) a s^2 b / t
    bytes (5 with the softmax's dropout, 2 without: activations.per_layer_bytes). So the replay
    never costs more than the forward it is part of, which full recompute replays whole."""
    return cal.ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * scores_units(dropout) * a * s * s * b / t / hbm_rate


def logits_times(s, b, h, vocab, t, flops_rate, hbm_rate):
    """(forward, backward) seconds of the output layer and loss on the last stage.

    FLOPs 2 b s h V forward, twice that backward (arXiv:2205.05198 Appendix A);
    fp32 logits written and read once each way.
    """
    flops = logits_forward_flops(b, s, h, vocab) / t
    traffic = cal.ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * 4.0 * s * b * vocab / t / hbm_rate
    return flops / flops_rate + traffic, 2.0 * flops / flops_rate + traffic
