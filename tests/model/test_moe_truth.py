"""Mixture-of-experts terms (issue 15): the per-node token dispatch, the
attention block's shape (head size, multi-head latent attention) and the
pipeline split the planner needs for DeepSeek-V3."""
import math

import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.attention import AttentionShape
from lab_core.context import context_for
from lab_core.flops import layer_forward_flops
from lab_core.planner.space import expert_parallel_sizes, pipeline_splits
from lab_core.step_time import expert_alltoall_times

# DeepSeek-V3 (arXiv:2412.19437 Sec 4.2) on H800s, with its multi-head latent attention.
MLA = dict(head_dim=192, v_head_dim=128, q_lora_rank=1536, kv_lora_rank=512)
DSV3 = dict(params=671e9, layers=61, hidden=7168, heads=128, ffn_hidden=27648, **MLA, vocab=129280, experts=256,
            experts_per_token=8, expert_ffn_hidden=3072, shared_experts=1, dense_layers=3, gpus=2048,
            global_batch_tokens=15360 * 4096, seq_len=4096, gpu="h800_80gb", inter_node_gbps=400, precision="fp8",
            dropout=False, stack="modern")
# Qwen3-235B-A22B (its config.json): 64 query heads of 128 on a 4,096 hidden size, 4 key/value heads.
QWEN3 = dict(params=235e9, layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128, ffn_hidden=12288,
             vocab=151936, experts=128, experts_per_token=8, expert_ffn_hidden=2304, gpus=256,
             global_batch_tokens=2048 * 4096, seq_len=4096, gpu="h100_80gb", inter_node_gbps=400, dropout=False)


def _exchange(workload, ep, **layout):
    par = Parallelism(dp=workload.gpus // layout.get("pp", 1), ep=ep, **layout)
    return expert_alltoall_times(context_for(workload), par)[0]


def test_remote_nodes_per_token_is_the_expected_count_of_distinct_other_nodes():
    experts = Workload(**DSV3).shape.experts
    assert experts.remote_nodes_per_token(1) == 0.0
    # Drawing 8 of 256 experts, 32 on each of 8 nodes: 7 (1 - C(224, 8) / C(256, 8)) other nodes.
    expected = 7.0 * (1.0 - math.comb(224, 8) / math.comb(256, 8))
    assert experts.remote_nodes_per_token(8) == pytest.approx(expected, rel=1e-12)
    # Never more nodes than experts a token uses, nor than other nodes exist.
    for nodes in (2, 4, 8, 16, 32):
        assert experts.remote_nodes_per_token(nodes) <= min(nodes - 1, experts.per_token)
    assert experts.remote_nodes_per_token(32) > experts.remote_nodes_per_token(8)


def test_per_node_dispatch_sends_less_over_the_fabric_and_the_same_inside_a_node():
    plain = Workload(**DSV3)
    per_node = Workload(**dict(DSV3, moe_dispatcher="per_node"))
    layout = dict(pp=16, first_stage_layers=2, last_stage_layers=3)
    assert _exchange(per_node, 8, **layout) == _exchange(plain, 8, **layout)
    for ep in (16, 64, 128):
        assert _exchange(per_node, ep, **layout) < _exchange(plain, ep, **layout)
    # Deduplicated per node, the fabric traffic grows with the nodes the group spans.
    assert _exchange(per_node, 16, **layout) < _exchange(per_node, 64, **layout) < _exchange(per_node, 128, **layout)


def test_the_dispatcher_changes_nothing_for_a_dense_model():
    dense = dict(params=7e9, gpus=64, global_batch_tokens=1 << 22, seq_len=4096, gpu="h100_80gb")
    par = Parallelism(tp=2, dp=32)
    a = evaluate(Workload(**dense), par).step_s
    assert evaluate(Workload(**dict(dense, moe_dispatcher="per_node")), par).step_s == a


def test_head_dim_sets_the_attention_width():
    qwen = Workload(**QWEN3).shape
    narrow = Workload(**dict(QWEN3, head_dim=None)).shape
    assert qwen.attention.width == 8192.0 and narrow.attention.width == 4096.0 and qwen.head_dim == 128
    # 64 x 128 query heads: query and output projections h x 2h; 235B parameters as the name says.
    assert qwen.params == pytest.approx(235e9, rel=0.01)
    assert qwen.params - narrow.params == pytest.approx(94 * (2 + 2 * 4 / 64) * 4096 * 4096 + 94 * 9 * 4096 / 4,
                                                        rel=1e-3)
    gemm, attention = layer_forward_flops(1, 4096, 4096, 12288, 4 / 64, qwen.attention)
    gemm_h, attention_h = layer_forward_flops(1, 4096, 4096, 12288, 4 / 64)
    assert attention == 2.0 * attention_h and gemm > gemm_h


def test_head_dim_equal_to_hidden_over_heads_changes_nothing():
    base = dict(params=7e9, layers=32, hidden=4096, heads=32, kv_heads=8, gpus=64, global_batch_tokens=1 << 22,
                seq_len=4096, gpu="h100_80gb")
    par = Parallelism(tp=2, dp=32)
    a, b = evaluate(Workload(**base), par), evaluate(Workload(**dict(base, head_dim=128)), par)
    assert (a.step_s, a.memory_bytes, Workload(**base).shape.params) == (
        b.step_s, b.memory_bytes, Workload(**dict(base, head_dim=128)).shape.params)


def test_wider_attention_takes_longer():
    par = Parallelism(tp=2, pp=8, dp=16, ep=32, interleave=4, first_stage_layers=11, last_stage_layers=11)
    wide = evaluate(Workload(**QWEN3), par)
    narrow = evaluate(Workload(**dict(QWEN3, head_dim=None)), par)
    assert wide.step_s > narrow.step_s


def test_pipeline_splits_reach_deepseek_v3s_sixteen_stages():
    assert (16, 2, 3) in pipeline_splits(61)
    # Every split searched is one stage_split accepts: first and last at most a middle stage's layers.
    for layers in (27, 61, 94, 126):
        for pp, first, last in pipeline_splits(layers):
            if first or last:
                middle = (layers - first - last) / (pp - 2) if pp > 2 else max(first, last)
                assert middle == int(middle) and 1 <= first <= middle and 1 <= last <= middle
    # One split per pp.
    assert len({pp for pp, _, _ in pipeline_splits(61)}) == len(pipeline_splits(61))


def test_every_cross_node_expert_parallel_size_is_searched():
    assert expert_parallel_sizes(256, 128, 8) == (1, 8, 16, 32, 64, 128)
    assert expert_parallel_sizes(8, 64, 8) == (1, 8)
    assert expert_parallel_sizes(0, 64, 8) == (1,)


def test_multi_head_latent_attention_counts_deepseek_v3s_parameters():
    shape = Workload(**DSV3).shape
    # 671B in all and 37B activated per token (arXiv:2412.19437 Sec 1, 4.2).
    assert shape.params == pytest.approx(671e9, rel=0.005)
    assert shape.active_params == pytest.approx(37e9, rel=0.01)
    # Per layer: q 7,168 x 1,536 + 1,536 x 128 x 192, kv 7,168 x 512 + 512 x 128 x (192 + 128), out 128 x 128 x 7,168.
    expected = 7168 * 1536 + 1536 * 24576 + 7168 * 512 + 512 * 40960 + 16384 * 7168
    assert shape.attention.params(7168) == expected
    # The core: Q K^T over 192-wide heads and scores x V over 128-wide ones.
    assert shape.attention.core_flops(1, 4096) == 2.0 * 4096 * 4096 * 128 * (192 + 128)


def test_latent_down_projections_are_not_split_by_tensor_parallelism():
    mla = AttentionShape(128 * 192, 128 * 128, 1.0, 1536, 512)
    one, two = mla.gemms(7168, 1), mla.gemms(7168, 2)
    # Query down, query up, key/value down, key/value up, output: the two down-projections keep their size.
    assert len(one) == 5 and two[0] == one[0] and two[2] == one[2]
    assert [two[i][0] for i in (1, 3, 4)] == [one[i][0] / 2 for i in (1, 3, 4)]
    assert mla.gemms(7168, 2) == two  # cached, and a copy each call
    two.append(None)
    assert len(mla.gemms(7168, 2)) == 5


def test_the_default_attention_is_the_fused_projection_of_megatron():
    gemms = Workload(params=7e9, layers=32, hidden=4096, heads=32, kv_heads=8, gpus=8, global_batch_tokens=1 << 20,
                     seq_len=4096).shape.attention.gemms(4096, 2)
    # Query, key and value as one h x (1 + 2r) h GEMM split two ways, then the output projection h/2 x h.
    assert gemms == [(4096 * 6144 / 2, 3072.0), (2048 * 4096, 2048.0)]
