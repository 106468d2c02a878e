"""ZeRO-3's per-layer gathers and reduce-scatters hide behind each layer's wall time
(step_time.layer_windows): its compute plus the tensor-, context- and expert-parallel
time it leaves exposed, for each kind of layer the stage holds at that kind's own times.
Before, every layer of a stage counted the heavier kind's compute alone, so more compute
could hide more FSDP traffic than the step grew by (both found by sweeps of random plans):
  - twice the experts per token in a model whose first 3 of 6 layers are dense: the 3
    dense layers' windows grew with the expert layers' (0.374293 -> 0.374068 s);
  - a shared expert on a TP 8 plan whose overlapped TP traffic hid behind the larger
    GEMMs: the layer's wall time grew by 0.18 ms, its compute by 0.44 ms
    (27.4285 -> 27.4151 s)."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.parallelism import check_layout
from lab_core.step_time import layer_kinds, stage_micro_batch_times

MIXED = dict(params=350e6, gpus=8, seq_len=1024, inter_node_gbps=50, gpu="h800_80gb", stack="torch_native",
             precision="bf16", flash_attention=True, dropout=True, global_batch_tokens=262144, experts=64,
             experts_per_token=1, expert_ffn_hidden=2048, shared_experts=1, dense_layers=3, moe_comm_overlap=True,
             tp_comm_overlap=True, grad_reduce_overlap=True, mtp_layers=1, layers=5, hidden=512, heads=4,
             kv_heads=4, ffn_hidden=2048, vocab=51200)
MIXED_PLAN = Parallelism(tp=2, pp=1, dp=4, zero=3, recompute="full", sequence_parallel=True, micro_batch=2, ep=8)

OVERLAPPED_TP = dict(params=70e9, gpus=256, seq_len=4096, inter_node_gbps=200, gpu="h800_80gb", stack="modern",
                     precision="fp8", flash_attention=True, dropout=False, global_batch_tokens=524288, experts=8,
                     experts_per_token=8, expert_ffn_hidden=2048, shared_experts=0, dense_layers=0,
                     moe_comm_overlap=False, tp_comm_overlap=True, grad_reduce_overlap=True, mtp_layers=1, layers=80,
                     hidden=11264, heads=88, kv_heads=88, ffn_hidden=45056, vocab=51200)
OVERLAPPED_PLAN = Parallelism(tp=8, pp=4, dp=8, zero=3, recompute="none", sequence_parallel=True, micro_batch=1,
                              ep=8)


# Context and expert parallelism over a slow fabric: the layers wait mostly on their own
# exchanges. Split between the passes as the compute is, twice the experts per token moved
# window from the forward to the backward, where the gathers and reduce-scatters were
# exposed, and the step came out 0.11% shorter (170.878 -> 170.686 s).
EXCHANGE_BOUND = dict(params=1e9, gpus=32, seq_len=8192, inter_node_gbps=50, gpu="h200_141gb", stack="modern",
                      precision="bf16", flash_attention=True, dropout=False, global_batch_tokens=8388608,
                      experts=128, experts_per_token=8, expert_ffn_hidden=2048, shared_experts=0, dense_layers=0,
                      moe_comm_overlap=True, tp_comm_overlap=False, grad_reduce_overlap=True, mtp_layers=0,
                      layers=4, hidden=512, heads=4, kv_heads=4, ffn_hidden=2048, vocab=51200)
EXCHANGE_PLAN = Parallelism(tp=4, pp=1, dp=1, zero=3, recompute="selective", sequence_parallel=True,
                            micro_batch=1, cp=8, ep=8)


@pytest.mark.parametrize("fields, plan, change", [
    (EXCHANGE_BOUND, EXCHANGE_PLAN, {"experts_per_token": 16}),
    (EXCHANGE_BOUND, EXCHANGE_PLAN, {"expert_ffn_hidden": 4096}),
    (MIXED, MIXED_PLAN, {"experts_per_token": 2}),
    (MIXED, MIXED_PLAN, {"expert_ffn_hidden": 4096}),
    (OVERLAPPED_TP, OVERLAPPED_PLAN, {"shared_experts": 1}),
    (OVERLAPPED_TP, OVERLAPPED_PLAN, {"expert_ffn_hidden": 4096}),
])
def test_a_heavier_layer_never_shortens_a_zero3_step(fields, plan, change):
    base = evaluate(Workload(**fields), plan).step_s
    assert evaluate(Workload(**dict(fields, **change)), plan).step_s >= base


def test_windows_are_each_kind_of_layer_at_its_own_times():
    workload = Workload(**MIXED)
    ctx = context_for(workload)
    dense, moe = layer_kinds(ctx, MIXED_PLAN)
    _, (stage,) = stage_micro_batch_times(ctx, MIXED_PLAN, check_layout(workload, MIXED_PLAN))
    # The 3 dense layers and the 2 expert layers with the prediction module's, each at its own times.
    assert [count for count, _, _ in stage.layer_windows] == [3, 3]
    for (_, forward, backward), kind in zip(stage.layer_windows, (dense, moe)):
        # TP 2 x 4 data-parallel ranks fill one node: the gathers and the tensor-parallel
        # collectives share NVLink, as do the 8 experts' all-to-alls: the window is the
        # compute less what of those hides behind it.
        assert kind.shares[0] and kind.shares[2] == (kind is moe)
        hidden = kind.times.tp_comm - kind.tp_exposed + (kind.ep_total - kind.ep_exposed if kind is moe else 0.0)
        assert kind.times.tp_comm > kind.tp_exposed
        compute = kind.times.forward + kind.times.backward + kind.times.recompute
        assert forward + backward == pytest.approx(compute - hidden, rel=1e-12)


def test_windows_sum_to_a_stage_busy_time_without_the_output_layer():
    workload = Workload(**OVERLAPPED_TP)
    _, stages = stage_micro_batch_times(context_for(workload), OVERLAPPED_PLAN,
                                        check_layout(workload, OVERLAPPED_PLAN))
    inner = [stage for stage in stages if stage.stage != "last"]
    assert inner
    for stage in inner:
        walls = sum(count * (forward + backward) for count, forward, backward in stage.layer_windows)
        assert walls == pytest.approx(stage.busy, rel=1e-12)


def test_each_pass_window_holds_the_traffic_it_sends():
    """The forward's window is its compute and its share of the exposed exchanges: 2 of the 4
    tensor-parallel collectives (2 of 6 under full recompute), a third of the context-parallel
    traffic (the backward sends keys, values and their gradients), half the all-to-alls; an
    exchange on the gathers' own link counts all of its traffic against them."""
    workload = Workload(**EXCHANGE_BOUND)
    ctx = context_for(workload)
    for recompute, share in (("selective", 0.5), ("full", 1.0 / 3.0)):
        plan = Parallelism(tp=4, pp=1, dp=1, zero=3, recompute=recompute, sequence_parallel=True, micro_batch=1,
                           cp=8, ep=8)
        _, moe = layer_kinds(ctx, plan)
        assert moe.tp_forward_share == pytest.approx(share)
        # The gathers over the 8 context-parallel ranks (32 GPUs with TP 4) leave the node, as
        # the ring does; the tensor-parallel collectives stay on NVLink.
        assert moe.shares[:2] == (False, True)
        _, (stage,) = stage_micro_batch_times(ctx, plan, check_layout(workload, plan))
        (_, forward, backward), = stage.layer_windows
        ep = moe.ep_exposed - (moe.ep_total if moe.shares[2] else 0.0)
        cp = moe.cp_exposed - moe.cp_total
        assert moe.cp_total > moe.cp_exposed > 0.0
        expected = moe.times.forward + moe.tp_exposed * share + cp / 3.0 + ep / 2.0
        assert forward == pytest.approx(max(expected, 0.0), rel=1e-12)
        assert forward + backward <= moe.busy


# TP 8 x CP 16 over 146 Gb/s, one micro-batch per replica (a bench case): ZeRO-3's gathers
# and the context-parallel ring both leave the node. Counted at the layers' wall time the
# gathers hid behind the ring's waits on the same NICs, and ZeRO-3 won at 26.2 s a step.
LONG_CONTEXT = dict(params=329e9, gpus=768, global_batch_tokens=131072, seq_len=65536, inter_node_gbps=146.0)


def test_gathers_do_not_hide_behind_an_exchange_on_their_own_link():
    workload = Workload(**LONG_CONTEXT)
    plan = Parallelism(tp=8, cp=16, pp=3, dp=2, zero=3, sequence_parallel=True, micro_batch=1,
                       first_stage_layers=37, last_stage_layers=37)
    ctx = context_for(workload)
    dense, _ = layer_kinds(ctx, plan)
    assert dense.shares == (False, True, False)
    _, stages = stage_micro_batch_times(ctx, plan, check_layout(workload, plan))
    for stage in stages:
        walls = sum(count * (forward + backward) for count, forward, backward in stage.layer_windows)
        cp_hidden = stage.layers * (dense.cp_total - dense.cp_exposed)
        layers_busy = stage.layers * dense.busy
        assert walls == pytest.approx(layers_busy - stage.layers * dense.cp_exposed - cp_hidden, rel=1e-9)
