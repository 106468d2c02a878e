"""A ring between nodes pays calibration.INTER_NODE_STEP_LATENCY_S per step (comms.group_time),
counted as NCCL's tuner counts inter-node steps: 2 (nodes - 1) for an all-reduce, nodes - 1 for a
reduce-scatter or all-gather (NVIDIA/nccl src/graph/tuning.cc); a ring inside one node pays none."""
import pytest

from lab_core import calibration as cal
from lab_core import comms

NVLINK, NIC = 400e9, 45e9


@pytest.mark.parametrize("volume_factor, steps_per_node", [(2.0, 2), (1.0, 1)])
@pytest.mark.parametrize("ranks, per_node", [(16, 8), (64, 8), (336, 2), (48, 1)])
def test_the_latency_is_nccls_count_of_inter_node_steps(monkeypatch, volume_factor, steps_per_node, ranks, per_node):
    size = 100e6
    with_latency = comms.group_time(size, ranks, per_node, NVLINK, NIC, volume_factor)
    monkeypatch.setattr(comms, "INTER_NODE_STEP_LATENCY_S", 0.0)
    without = comms.group_time(size, ranks, per_node, NVLINK, NIC, volume_factor)
    nodes = ranks / per_node
    # The inter-node ring is the slower part here (it sets the time; the intra-node part is unchanged).
    assert with_latency - without == pytest.approx(steps_per_node * (nodes - 1) * cal.INTER_NODE_STEP_LATENCY_S)


def test_a_ring_inside_one_node_pays_no_step_latency(monkeypatch):
    inside = comms.group_time(100e6, 8, 8, NVLINK, NIC, 2.0)
    monkeypatch.setattr(comms, "INTER_NODE_STEP_LATENCY_S", 1.0)
    assert comms.group_time(100e6, 8, 8, NVLINK, NIC, 2.0) == inside


def test_a_ring_over_a_thousand_nodes_is_latency_bound(monkeypatch):
    """Without the step latency a ring over 1,024 nodes took at most twice as long as one over
    two (the (n - 1)/n factor); with it, a 100 MB reduce-scatter there is latency-bound."""
    def times():
        return [comms.group_time(100e6, nodes * 8, 8, NVLINK, NIC, 1.0) for nodes in (2, 1024)]
    two, thousand = times()
    monkeypatch.setattr(comms, "INTER_NODE_STEP_LATENCY_S", 0.0)
    two_free, thousand_free = times()
    assert thousand_free <= 2.0 * two_free
    assert thousand > 2.0 * thousand_free
