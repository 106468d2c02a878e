"""What Megatron-Core's selective recompute replays in the backward, per layer and micro-batch.

recompute_modules.py names the modules; activations.module_savings counts what
they drop. Each module's forward runs again before its backward needs it:
- layernorm: the two norms, element-wise (their outputs written again);
- mla_up_proj: the latent attention's up-projection GEMMs (q_rank x A and
  kv_rank x (A + A_v), split by tensor parallelism) and the rotary embedding
  and concatenation that write the queries, keys and values again;
- moe_act: the routed experts' activation function (its output written again);
- mlp: a dense layer's MLP, its GEMMs, activation and its tensor-parallel
  collective (one of the layer's two forward all-reduce equivalents,
  arXiv:2104.04473 Sec 2.3);
- shared_experts: the shared experts' GEMMs and activation;
- moe: the router, the experts (shared and routed), the token permutation and
  the dispatch and combine all-to-alls (step_time.expert_alltoall_times counts
  those with the recompute).
Element-wise work is charged as the rest of the model charges it: traffic
proportional to the bytes written (calibration.ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE,
timing.layer_times) at the achievable HBM rate; GEMMs at the rate of their own
shape (efficiency.py). Sources: megatron/core/transformer/transformer_config.py
(recompute_modules), transformer_layer.py, multi_latent_attention.py, moe/experts.py.
"""
from . import calibration as cal
from .efficiency import expert_gemm_seconds, expert_gemms, gemms_seconds


class Replay:
    """Seconds one layer's selective recompute replays (compute and
    element-wise), and the forward tensor-parallel collectives it repeats."""

    __slots__ = ("seconds", "collectives")


def module_replay(ctx, tokens, tp, sequence_parallel, ep, ffn_hidden, moe):
    """Replay of one layer (moe: a mixture-of-experts layer, else dense with an MLP
    ffn_hidden wide) of `tokens` tokens (micro-batch x sequence / cp) on one GPU."""
    modules = ctx.recompute_modules
    h = ctx.hidden
    per_value = cal.ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * 2.0 / ctx.hbm_rate
    seq_shard = tp if sequence_parallel else 1
    written = 0.0  # values written again by element-wise ops
    gemm_s = 0.0
    out = Replay()
    out.collectives = 0.0
    if "layernorm" in modules:
        written += 2.0 * tokens * h / seq_shard
    attention = ctx.attention
    if "mla_up_proj" in modules and attention.kv_rank:
        # The up-projections (attention.AttentionShape.matrices): kv_rank to keys and values, q_rank to queries.
        ups = [_split_up(attention.kv_rank, attention.width + attention.value_width, tp)]
        if attention.q_rank:
            ups.append(_split_up(attention.q_rank, attention.width, tp))
        gemm_s += gemms_seconds(ctx.device, ctx.precision, tokens, ups)
        written += tokens * (2.0 * attention.width + attention.value_width) / tp
    experts = ctx.shape.experts
    if moe:
        routed = experts.per_token * cal.MOE_CAPACITY_FACTOR * experts.ffn_hidden
        shared = experts.shared * experts.ffn_hidden
        if "moe" in modules:
            gemm_s += expert_gemm_seconds(ctx.device, ctx.precision, expert_gemms(tokens, h, tp, experts, ep))
            written += 2.0 * tokens * (routed + shared) / tp
        else:
            if "moe_act" in modules:
                written += tokens * cal.GATED_MLP_INNER_SHARE * routed / tp
            if "shared_experts" in modules and shared:
                gemm_s += expert_gemm_seconds(ctx.device, ctx.precision,
                                              expert_gemms(tokens, h, tp, experts, ep, router=False, routed=False))
                written += 2.0 * tokens * shared / tp
    elif "mlp" in modules:
        gemm_s += gemms_seconds(ctx.device, ctx.precision, tokens,
                                [(2.0 * h * ffn_hidden / tp, min(h, ffn_hidden / tp))])
        written += 2.0 * tokens * ffn_hidden / tp
        out.collectives = 1.0
    out.seconds = gemm_s / ctx.compute_factor + per_value * written
    return out


def _split_up(rank, outputs, tp):
    """(weights on one GPU, width) of an up-projection from a latent of `rank` to `outputs`
    split by tensor parallelism (attention.AttentionShape.gemms)."""
    return rank * outputs / tp, min(rank, outputs / tp)
