"""ZeRO-2 under gradient accumulation (sync.earlier_syncs): a GPU that keeps only its
shard of the gradients reduce-scatters every micro-batch's gradients (arXiv:1910.02054 Sec 5.2;
DeepSpeed stage 2, FSDP without resharding, Megatron-FSDP optim_grads), where ZeRO-1 accumulates
whole gradients and reduce-scatters once per step (Megatron's distributed optimizer)."""
import pytest
from hypothesis import assume, given, settings, strategies as st

from lab_core import Parallelism, Workload, evaluate
from lab_core.planner import recommend
from lab_core.sync import earlier_syncs
from lab_core.step_time import MicroBatchTimes

STACKS = ("modern", "megatron_lm_2021", "torch_native")


def _workload(stack, sequences=128, **extra):
    return Workload(**dict(dict(params=7.5e9, gpus=64, seq_len=2048, global_batch_tokens=2048 * sequences,
                                inter_node_gbps=200, stack=stack), **extra))


@pytest.mark.parametrize("stack", STACKS)
def test_one_micro_batch_costs_what_stage_one_costs(stack):
    w = _workload(stack, sequences=64)
    one, two = (evaluate(w, Parallelism(dp=64, zero=z, micro_batch=1)) for z in (1, 2))
    assert two.micro_batches == 1
    assert two.step_s == pytest.approx(one.step_s, rel=1e-12)
    assert two.dp_comm_total_s == pytest.approx(one.dp_comm_total_s, rel=1e-12)
    assert two.memory_bytes < one.memory_bytes


@pytest.mark.parametrize("stack", STACKS)
def test_each_further_micro_batch_adds_one_reduce_scatter(stack):
    """Stage 1's traffic does not depend on the micro-batches; stage 2 adds the same reduce-scatter
    for each micro-batch after the first (the lab's sync, 2, 4 and 8 micro-batches per step)."""
    totals = {}
    for sequences in (128, 256, 512):
        w = _workload(stack, sequences=sequences)
        one, two = (evaluate(w, Parallelism(dp=64, zero=z, micro_batch=1)) for z in (1, 2))
        totals[two.micro_batches] = (one.dp_comm_total_s, two.dp_comm_total_s)
    assert sorted(totals) == [2, 4, 8]
    stage1 = [totals[m][0] for m in (2, 4, 8)]
    assert stage1 == pytest.approx([stage1[0]] * 3, rel=1e-12)
    reduce = totals[4][1] - totals[2][1]
    assert reduce > 0.0
    assert totals[8][1] - totals[4][1] == pytest.approx(2.0 * reduce, rel=1e-9)
    assert totals[2][1] - totals[2][0] == pytest.approx(reduce / 2.0, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(STACKS), st.sampled_from((64, 128, 512)), st.sampled_from((1, 2, 4)),
       st.sampled_from((25.0, 100.0, 400.0)), st.sampled_from((1, 2)), st.sampled_from(("none", "full")))
def test_stage_two_is_never_faster_than_stage_one(stack, sequences, micro_batch, gbps, pp, recompute):
    w = _workload(stack, sequences=sequences, inter_node_gbps=gbps)
    plans = [Parallelism(dp=64 // pp, pp=pp, zero=z, micro_batch=micro_batch, recompute=recompute)
             for z in (1, 2)]
    # The PyTorch-native stack runs no ZeRO-2 with a pipeline (test_pipelined_fsdp.py).
    assume(not (stack == "torch_native" and pp > 1))
    assume((sequences // (64 // pp)) % micro_batch == 0)
    one, two = (evaluate(w, par) for par in plans)
    assert two.step_s >= one.step_s * (1.0 - 1e-12)


def test_earlier_syncs_hide_behind_the_next_micro_batch():
    mb = MicroBatchTimes()
    mb.forward, mb.backward, mb.recompute = 0.1, 0.2, 0.0
    assert earlier_syncs(0.25, 5, mb) == pytest.approx((1.0, 0.0))
    assert earlier_syncs(0.5, 5, mb) == pytest.approx((2.0, 0.8))
    # The 2021 stack's window is its overlap share of that compute.
    assert earlier_syncs(0.25, 5, mb, 0.5) == pytest.approx((1.0, 0.4))
    assert earlier_syncs(0.25, 1, mb) == (0.0, 0.0)


def test_planner_keeps_stage_one_when_it_fits():
    """13B on 64 GPUs: ZeRO-1 fits, so the planner no longer picks ZeRO-2 for its memory alone
    (it did while ZeRO-2 synced once per step)."""
    plan = recommend(Workload(params=13e9, gpus=64))
    assert plan.fits and plan.parallelism.zero == 1
    if plan.report.micro_batches > 1:
        par = plan.parallelism
        stage2 = evaluate(Workload(params=13e9, gpus=64), Parallelism(**dict(par.to_dict(), zero=2)))
        assert stage2.step_s > plan.report.step_s


@pytest.mark.parametrize("zero", [2, 3])
def test_pytorch_hybrid_sharding_all_reduces_the_replicas_every_backward(zero):
    """HSDP (ZeRO-2/3 over 8 of 64 ranks, 8 replicas): FSDP2 all-reduces across the replicas
    after each of the step's micro-batches (stack.syncs_replicas_every_backward), Megatron-FSDP
    once per step; with one micro-batch the two stacks move the same bytes."""
    extra = {}
    for sequences in (64, 256, 512):
        totals = {}
        for stack in ("modern", "torch_native"):
            r = evaluate(_workload(stack, sequences=sequences, inter_node_gbps=100),
                         Parallelism(dp=64, dp_shard=8, zero=zero, micro_batch=1))
            totals[stack] = r.dp_comm_total_s + r.zero_comm_total_s
        extra[sequences // 64] = totals["torch_native"] - totals["modern"]
    assert extra[1] == pytest.approx(0.0, abs=1e-12)
    assert extra[4] > 0.0
    # One more all-reduce for every micro-batch after the first: 3 at 4 micro-batches, 7 at 8.
    assert extra[8] == pytest.approx(extra[4] * 7.0 / 3.0, rel=1e-9)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_gradient_sync_decision_says_stage_two_repeats(lang):
    """A plan pinned to ZeRO-2 with several micro-batches says it reduce-scatters after each
    (how many, in both languages); with one micro-batch it reads as before."""
    from lab_view.view import decision_items
    from labsite.catalog import load_catalogs
    catalog = load_catalogs()[lang]
    texts = catalog["decisions"]["gradient_sync"]["reasons"]
    for sequences, repeated in ((256, True), (64, False)):
        w = _workload("modern", sequences=sequences)
        plan = recommend(w, {"zero": 2, "micro_batch": 1, "tp": 1, "pp": 1}).to_dict()
        decision = next(d for d in plan["decisions"] if d["id"] == "gradient_sync")
        assert decision["reason"].startswith("repeated_") == repeated, decision["reason"]
        why = next(i["why"] for i in decision_items(plan, catalog) if i["id"] == "gradient_sync")
        assert "{" not in why
        if repeated:
            assert decision["numbers"]["micro_batches"] == 4
            assert texts[decision["reason"]].split("{")[0] in why and "4" in why
