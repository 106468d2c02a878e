"""FLOP counts of one training iteration (dense GPT-style transformer)."""
from .efficiency import per_op_replayed_gemms
from .shape import layer_matrix_params, mtp_module_extra_params


def model_flops_eq7(B, s, l, h, V):
    """Model FLOPs of one iteration: 72 B s l h^2 (1 + s/6h + V/12lh).

    Source: Korthikanti et al. arXiv:2205.05198 Appendix A Eq 7 (forward +
    backward, no recompute; the numerator of MFU).
    """
    return 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h))


def hardware_flops_selective_eq8(B, s, l, h, V):
    """Hardware FLOPs with selective recompute: 72 B s l h^2 (1 + s/3h + V/12lh).

    Source: arXiv:2205.05198 Appendix A Eq 8 (numerator of HFU).
    """
    return 72.0 * B * s * l * h * h * (1.0 + s / (3.0 * h) + V / (12.0 * l * h))


def hardware_flops_full_eq3(B, s, l, h, V):
    """FLOPs with full recompute: 96 B s l h^2 (1 + s/6h + V/16lh).

    Source: Narayanan et al. arXiv:2104.04473 Eq 3 (an extra forward pass).
    """
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h))


def layer_forward_flops(b, s, h, ffn_hidden, kv_ratio=1.0, attention=None):
    """Forward FLOPs of one layer, split (GEMMs, attention core).

    Source: arXiv:2205.05198 Appendix A: 24 b s h^2 + 4 b s^2 h at f = 4h;
    the GEMM part is 2 FLOPs per matrix weight per token,
    2 b s ((2 + 2r) h^2 + 2 h f) in general (shape.layer_matrix_params); with
    `attention` (attention.AttentionShape) its matrices and its core.
    """
    gemm = 2.0 * b * s * layer_matrix_params(h, ffn_hidden, kv_ratio, attention)
    core = 4.0 * b * s * s * h if attention is None else attention.core_flops(b, s)
    return gemm, core


def logits_forward_flops(b, s, h, V):
    """Forward FLOPs of the output layer: 2 b s h V (arXiv:2205.05198 Appendix A)."""
    return 2.0 * b * s * h * V


def model_flops(B, s, l, h, V, ffn_hidden, kv_ratio=1.0, attention=None):
    """Eq 7 generalised to any MLP size, key/value heads and attention shape;
    equal to model_flops_eq7 when f = 4h, r = 1 and the attention is h wide."""
    gemm, attention = layer_forward_flops(B, s, h, ffn_hidden, kv_ratio, attention)
    return 3.0 * (l * (gemm + attention) + logits_forward_flops(B, s, h, V))


def training_time_eq4(tokens, params, gpus, flops_per_gpu):
    """End-to-end training time in seconds: 8 T P / (n X).

    Source: Narayanan et al. arXiv:2104.04473 Eq 4 (assumes full recompute,
    so 8 = 2 forward + 4 backward + 2 recompute FLOPs per parameter-token).
    """
    return 8.0 * tokens * params / (gpus * flops_per_gpu)


def recompute_flops(B, s, l, h, ffn_hidden, kv_ratio, recompute, flash_attention, attention=None):
    """FLOPs the backward pass repeats, on top of model_flops (hardware = model + this).

    Full recompute replays every layer's forward (arXiv:2104.04473 Eq 3 less
    Eq 7: the output layer is not replayed); selective recompute replays the
    attention core, as flash attention does in its backward (arXiv:2205.05198
    Eq 8 less Eq 7: 3 x 4 B s^2 h per layer; arXiv:2205.14135).
    """
    gemm, attention = layer_forward_flops(B, s, h, ffn_hidden, kv_ratio, attention)
    if recompute == "full":
        return l * (gemm + attention)
    if recompute == "selective" or flash_attention:
        return 3.0 * l * attention
    return 0.0


def moe_layer_forward_flops(b, s, h, kv_ratio, experts, attention=None):
    """Forward FLOPs of one mixture-of-experts layer, split (GEMMs, attention core).

    The attention GEMMs and core as in a dense layer; the router's h x E
    projection; and each token's top-k routed plus shared experts, 2 h f_e
    weights each (arXiv:2101.03961 Sec 2: compute per token follows the
    experts it uses, not the experts there are).
    """
    attention_gemm, core = layer_forward_flops(b, s, h, 0.0, kv_ratio, attention)
    used = experts.used_per_token * 2.0 * h * experts.ffn_hidden
    return attention_gemm + 2.0 * b * s * (h * experts.count + used), core


def mtp_extra_forward_flops(B, s, shape):
    """Forward FLOPs of the multi-token-prediction modules besides their layers and
    output passes: 2 per weight per token of their projections and norms
    (shape.mtp_module_extra_params; Megatron-Core counts the same in
    num_floating_point_operations, megatron/training/training.py)."""
    return 2.0 * B * s * shape.mtp_layers * mtp_module_extra_params(shape.hidden)


def shape_model_flops(B, s, shape):
    """model_flops for any shape: its dense layers by Eq 7 generalised and,
    with experts, its MoE layers by moe_layer_forward_flops (3 x forward); the
    multi-token-prediction modules' layers, output passes and projections too
    (arXiv:2412.19437 Sec 2.2; Megatron-Core's count: a layer of the last
    layer's kind and one more logit pass per module)."""
    experts = shape.experts
    if experts is None and not shape.mtp_layers:
        return model_flops(B, s, shape.layers, shape.hidden, shape.vocab, shape.ffn_hidden, shape.kv_ratio,
                           shape.attention)
    gemm, attention = layer_forward_flops(B, s, shape.hidden, shape.ffn_hidden, shape.kv_ratio,
                                          shape.attention)
    per_pass = shape.dense_layer_count * (gemm + attention)
    if experts is not None:
        moe_gemm, moe_attention = moe_layer_forward_flops(B, s, shape.hidden, shape.kv_ratio, experts,
                                                           shape.attention)
        per_pass += shape.moe_layer_count * (moe_gemm + moe_attention)
    per_pass += shape.output_passes * logits_forward_flops(B, s, shape.hidden, shape.vocab)
    return 3.0 * (per_pass + mtp_extra_forward_flops(B, s, shape))


def causal_masked_flops(B, s, shape):
    """The half of the attention core's FLOPs in shape_model_flops that a causal mask zeroes
    (forward and backward, every layer with attention, the multi-token-prediction ones
    included): Korthikanti's Eq 7 counts the whole score matrix, a causal kernel computes
    about half of it (FlashAttention-2, arXiv:2307.08691 Sec 4.2: the standard formula
    over-counts). Megatron-Core counts the core once, "/ 2 # causal mask"
    (megatron/training/training.py, num_floating_point_operations, 2026), as MaxText has
    since July 2025 (AI-Hypercomputer/maxtext pull request 1988); torchtitan and PaLM's
    formula count all of it."""
    core = layer_forward_flops(B, s, shape.hidden, 0.0, shape.kv_ratio, shape.attention)[1]
    return 1.5 * (shape.dense_layer_count + shape.moe_layer_count) * core


def shape_recompute_flops(B, s, shape, recompute, flash_attention):
    """recompute_flops for any shape (full recompute replays each layer's forward,
    the multi-token-prediction layers' too)."""
    experts = shape.experts
    if experts is None or recompute != "full":
        layers = shape.dense_layer_count + shape.moe_layer_count
        return recompute_flops(B, s, layers, shape.hidden, shape.ffn_hidden, shape.kv_ratio, recompute,
                               flash_attention, shape.attention)
    gemm, attention = layer_forward_flops(B, s, shape.hidden, shape.ffn_hidden, shape.kv_ratio,
                                          shape.attention)
    moe_gemm, moe_attention = moe_layer_forward_flops(B, s, shape.hidden, shape.kv_ratio, experts,
                                                       shape.attention)
    return shape.dense_layer_count * (gemm + attention) + shape.moe_layer_count * (moe_gemm + moe_attention)


def partial_recompute_flops(B, s, shape, flash_attention, dense_recomputed, moe_recomputed):
    """shape_recompute_flops when only some layers recompute fully (partial_recompute.py):
    the forwards of `dense_recomputed` dense and `moe_recomputed` mixture-of-experts
    layers (as full recompute replays them), and what the other layers' backward
    replays without recompute (recompute_flops "none": flash attention's core)."""
    h, r, attention = shape.hidden, shape.kv_ratio, shape.attention
    gemm, core = layer_forward_flops(B, s, h, shape.ffn_hidden, r, attention)
    total = dense_recomputed * (gemm + core)
    if moe_recomputed:
        moe_gemm, moe_core = moe_layer_forward_flops(B, s, h, r, shape.experts, attention)
        total += moe_recomputed * (moe_gemm + moe_core)
    kept = shape.dense_layer_count + shape.moe_layer_count - dense_recomputed - moe_recomputed
    if kept > 0:
        total += recompute_flops(B, s, kept, h, shape.ffn_hidden, r, "none", flash_attention, attention)
    return total


def per_op_replayed_flops(B, s, shape):
    """FLOPs per-op selective checkpointing adds to shape_recompute_flops'
    selective count: the GEMMs it replays (efficiency.per_op_replayed_gemms),
    2 per weight per token, in every layer (a mixture-of-experts layer's MLP
    as wide as the experts a token uses, as step_time counts its time)."""
    h, r, attention = shape.hidden, shape.kv_ratio, shape.attention
    experts = shape.experts
    kinds = ((shape.dense_layer_count, shape.ffn_hidden),)
    if experts is not None:
        kinds += ((shape.moe_layer_count, experts.used_per_token * experts.ffn_hidden),)
    total = 0.0
    for layers, ffn_hidden in kinds:
        for weights, _ in per_op_replayed_gemms(h, ffn_hidden, r, 1, attention):
            total += 2.0 * B * s * layers * weights
    return total


def module_replayed_flops(B, s, shape, modules):
    """GEMM FLOPs Megatron-Core's selective recompute of these modules
    (recompute_modules.py) adds to shape_recompute_flops' selective count, 2
    per weight per token (recompute_replay.module_replay replays the same
    GEMMs): mla_up_proj the latent attention's up-projections in every layer,
    mlp the dense layers' MLP, shared_experts the shared experts and moe the
    router and every expert a token uses, in each mixture-of-experts layer."""
    h, attention, experts = shape.hidden, shape.attention, shape.experts
    dense_layers = shape.dense_layer_count
    weights = 0.0
    if "mla_up_proj" in modules and attention.kv_rank:
        up_projections = attention.q_rank * attention.width + attention.kv_rank * (attention.width
                                                                                  + attention.value_width)
        weights += (dense_layers + shape.moe_layer_count) * up_projections
    if "mlp" in modules:
        weights += dense_layers * 2.0 * h * shape.ffn_hidden
    if experts is not None:
        expert = 2.0 * h * experts.ffn_hidden
        if "moe" in modules:
            weights += shape.moe_layer_count * (h * experts.count + experts.used_per_token * expert)
        elif "shared_experts" in modules:
            weights += shape.moe_layer_count * experts.shared * expert
    return 2.0 * B * s * weights
