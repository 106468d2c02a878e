"""Mixture-of-experts mechanisms of issues 14 and 15: the token permutation's
memory traffic (step_time.expert_permutation_seconds) and whether the
expert-parallel all-to-all overlaps other micro-batches' compute
(Workload.moe_comm_overlap)."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.step_time import expert_alltoall_times, expert_permutation_seconds, micro_batch_times
from lab_core.parallelism import check_layout

# Qwen3-30B-A3B (its config.json): 48 layers, hidden 2,048, 128 experts of 768 (gated: 1,152), top-8.
QWEN3_30B = dict(params=30e9, layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn_hidden=6144,
                 vocab=151936, experts=128, experts_per_token=8, expert_ffn_hidden=1152, gpus=16,
                 global_batch_tokens=1024 * 4096, seq_len=4096, gpu="h100_80gb", inter_node_gbps=400,
                 precision="fp8", dropout=False)
LAYOUT = dict(dp=16, ep=16)


def _times(workload, par):
    return micro_batch_times(context_for(workload), par, check_layout(workload, par))


def test_permutation_moves_3k_plus_1_copies_of_each_token_at_the_hbm_rate():
    w = Workload(**QWEN3_30B)
    ctx = context_for(w)
    par = Parallelism(micro_batch=2, **LAYOUT)
    expected = 2.0 * (3 * 8 + 1) * 2048 * 2 * 4096 / ctx.hbm_rate
    assert expert_permutation_seconds(ctx, par) == pytest.approx(expected, rel=1e-12)
    # It follows the copies per token, not the experts' FLOPs.
    top4 = Workload(**dict(QWEN3_30B, experts_per_token=4))
    assert expert_permutation_seconds(context_for(top4), par) == pytest.approx(expected * 13 / 25, rel=1e-12)
    wide = Workload(**dict(QWEN3_30B, expert_ffn_hidden=4608))
    assert expert_permutation_seconds(context_for(wide), par) == pytest.approx(expected, rel=1e-12)


def test_permutation_is_charged_in_each_moe_layer_forward_and_backward():
    w = Workload(**QWEN3_30B)
    par = Parallelism(**LAYOUT)
    one = expert_permutation_seconds(context_for(w), par)
    with_moe = _times(w, par)
    assert with_moe.layers == 48 and one > 0.0
    # A full recompute replays it with the forward.
    full = _times(w, Parallelism(recompute="full", **LAYOUT))
    assert full.recompute - with_moe.recompute > 48 * one


def test_without_overlap_the_whole_all_to_all_is_exposed():
    overlapped = Workload(**QWEN3_30B)
    exposed = Workload(**dict(QWEN3_30B, moe_comm_overlap=False))
    par = Parallelism(**LAYOUT)
    total, hidden = expert_alltoall_times(context_for(overlapped), par)
    assert 0.0 < hidden < total
    assert expert_alltoall_times(context_for(exposed), par) == (total, total)
    assert evaluate(exposed, par).step_s > evaluate(overlapped, par).step_s
    # The 2021 stack never overlapped it, whatever the switch says.
    legacy = Workload(**dict(QWEN3_30B, stack="megatron_lm_2021", precision="bf16"))
    total, shown = expert_alltoall_times(context_for(legacy), par)
    assert shown == total > 0.0


def test_the_overlap_switch_changes_nothing_for_a_dense_model():
    dense = dict(params=7e9, gpus=64, global_batch_tokens=1 << 22, seq_len=4096, gpu="h100_80gb")
    par = Parallelism(tp=2, dp=32)
    assert evaluate(Workload(**dense), par).step_s == evaluate(Workload(**dict(dense, moe_comm_overlap=False)),
                                                               par).step_s
