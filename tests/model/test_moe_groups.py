"""Group-limited routing (DeepSeek-V2 arXiv:2405.04434 Sec 2.2.2, DeepSeek-V3 arXiv:2412.19437
Sec 2.1.2; Megatron-Core's group_limited_topk): a token's experts come from its best few groups
of experts, so with the per-node dispatcher its copies cross the fabric to the nodes of those
groups only. The counts below are worked by hand from the balanced-routing assumption."""
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lab_core import LabInputError, Parallelism, Workload
from lab_core.context import context_for
from lab_core.moe import Experts
from lab_core.presets import PRESETS
from lab_core.step_time import expert_alltoall_links, expert_alltoall_times

DEEPSEEK_V3 = dict(PRESETS["deepseek-v3"]["inputs"], gpus=2048, global_batch_tokens=15360 * 4096, gpu="h800_80gb",
                   inter_node_gbps=400, precision="fp8", moe_dispatcher="per_node")


def _experts(groups=0, chosen=0, count=256, per_token=8):
    return Experts(7168, 61, count, per_token, 3072, 1, 3, groups, chosen)


def test_deepseek_v3s_preset_routes_within_four_of_eight_groups():
    experts = Workload(**DEEPSEEK_V3).shape.experts
    assert (experts.groups, experts.groups_per_token) == (8, 4)


def test_one_group_per_node_caps_a_token_at_its_groups_nodes():
    """Expert parallelism 64 on nodes of 8: 8 nodes, one group of 32 experts each. A token's 8
    experts come from 4 groups, so 4 of the 8 nodes, the sender's own among them with chance 4/8:
    4 x 7/8 = 3.5 others, against 7 (1 - C(224,8)/C(256,8)) = 4.63 without the limit."""
    assert _experts(8, 4).remote_nodes_per_token(8) == pytest.approx(3.5, rel=1e-12)
    unlimited = 7.0 * (1.0 - math.comb(224, 8) / math.comb(256, 8))
    assert _experts().remote_nodes_per_token(8) == pytest.approx(unlimited, rel=1e-12)


def test_two_groups_per_node():
    """Expert parallelism 32: 4 nodes of 2 groups. A node holds none of the 4 chosen groups with
    chance C(6,4)/C(8,4) = 15/70: 4 (1 - 15/70) nodes, 3/4 of them others."""
    assert _experts(8, 4).remote_nodes_per_token(4) == pytest.approx(4 * (1 - 15 / 70) * 3 / 4, rel=1e-12)


def test_a_group_over_two_nodes():
    """Expert parallelism 128: 16 nodes, each group of 32 experts over 2 nodes of 16. A token's 2
    experts in each of its 4 groups miss one of the group's nodes with chance 16/32 x 15/31."""
    distinct = 4 * 2 * (1 - 16 / 32 * 15 / 31)
    assert _experts(8, 4).remote_nodes_per_token(16) == pytest.approx(distinct * 15 / 16, rel=1e-12)


def test_groups_that_do_not_line_up_with_the_nodes_or_every_group_change_nothing():
    unlimited = _experts()
    assert _experts(8, 4).remote_nodes_per_token(3) == unlimited.remote_nodes_per_token(3)
    assert _experts(8, 8).remote_nodes_per_token(8) == unlimited.remote_nodes_per_token(8)
    assert _experts(8, 4).remote_nodes_per_token(1) == 0.0


@settings(max_examples=200, deadline=None)
@given(groups_log=st.integers(0, 6), chosen=st.integers(1, 64), per_token=st.integers(1, 16),
       nodes_log=st.integers(0, 7), per_group_log=st.integers(0, 4))
def test_a_group_limit_never_sends_a_token_to_more_nodes(groups_log, chosen, per_token, nodes_log, per_group_log):
    groups = 2 ** groups_log
    count = groups * 2 ** per_group_log * 4
    nodes = 2 ** nodes_log
    per_token = min(per_token, count)
    chosen = min(chosen, groups)
    assume(per_token <= chosen * count // groups and nodes <= count)
    limited, unlimited = _experts(groups, chosen, count, per_token), _experts(0, 0, count, per_token)
    remote = limited.remote_nodes_per_token(nodes)
    assert 0.0 <= remote <= unlimited.remote_nodes_per_token(nodes) + 1e-12
    assert remote <= min(nodes - 1, per_token)


def test_the_limit_shortens_deepseek_v3s_all_to_all_where_the_fabric_sets_its_time():
    """DeepSeek-V3's layout (TP 1, PP 16, EP 64, arXiv:2412.19437 Sec 3.2): at 400 Gb/s the fabric sets
    the all-to-all's time, and 3.5 copies per token instead of 4.63 shorten it: by that ratio, 0.76, at the
    fabric's full rate, a little less as the smaller messages reach less of it (comms.size_efficiency)."""
    par = Parallelism(pp=16, dp=128, ep=64, first_stage_layers=2, last_stage_layers=3)
    limited, unlimited = (context_for(Workload(**dict(DEEPSEEK_V3, expert_groups=groups))) for groups in (8, 0))
    nvlink, fabric = expert_alltoall_links(limited, par)
    assert fabric > nvlink
    ratio = expert_alltoall_times(limited, par)[0] / expert_alltoall_times(unlimited, par)[0]
    assert 3.5 / (7.0 * (1.0 - math.comb(224, 8) / math.comb(256, 8))) < ratio < 0.8


@pytest.mark.parametrize("fields, field, allowed", [
    ({"expert_groups": 7}, "expert_groups", "a divisor of experts=256"),
    ({"expert_groups": 8, "expert_groups_per_token": 9}, "expert_groups_per_token", "0 … expert_groups=8"),
    ({"expert_groups": 64, "expert_groups_per_token": 1}, "expert_groups_per_token", "2 … expert_groups=64"),
])
def test_group_counts_that_cannot_route_are_refused_with_the_field_and_what_is_allowed(fields, field, allowed):
    with pytest.raises(LabInputError) as caught:
        Workload(**dict(DEEPSEEK_V3, **fields))
    assert caught.value.field == field and caught.value.allowed == allowed


def test_a_dense_model_ignores_the_groups():
    assert Workload(params=7e9, expert_groups=8, expert_groups_per_token=4).shape.experts is None
