"""Every pipeline stage syncs its gradients and steps its optimizer at once, so the
step waits for the slowest stage's (sync.gradient_sync over
step_time.stage_micro_batch_times), each stage with its own parameters, its own
compute to hide behind and its own layers to gather under ZeRO-3; not the
bottleneck stage's alone nor the one with the most parameters. Found by a sweep of
evaluate() over inputs that add work: before, each of the three cases below made
the step shorter."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.parallelism import check_layout
from lab_core.step_time import pipeline_times, stage_micro_batch_times
from lab_core.gpu_memory import stage_memories
from lab_core.sync import gradient_sync, modern_sync

# Three leading dense layers with a 4x MLP, 8 narrow experts in the rest: the first stage holds
# more shared weights, a last stage with a multi-token-prediction module more parameters in all.
WIDE_DENSE = dict(params=175e9, layers=128, hidden=16384, heads=128, kv_heads=128, ffn_hidden=65536, vocab=51200,
                  experts=8, experts_per_token=8, expert_ffn_hidden=1024, dense_layers=3, gpus=512, seq_len=1024,
                  global_batch_tokens=131072, gpu="a100_80gb", inter_node_gbps=200, stack="torch_native",
                  tp_comm_overlap=False)
WIDE_DENSE_PLAN = Parallelism(tp=8, pp=4, dp=16, zero=0, sequence_parallel=True, micro_batch=2)
# ZeRO-3 on a pipeline whose last stage (output layer, module) is the busiest with fewer layers.
FSDP_PIPELINE = dict(params=20e9, layers=44, hidden=6144, heads=48, kv_heads=48, ffn_hidden=24576, vocab=51200,
                     gpus=128, seq_len=8192, global_batch_tokens=4194304, gpu="b200_192gb", inter_node_gbps=400)
FSDP_PIPELINE_PLAN = Parallelism(tp=2, pp=8, dp=8, zero=3, recompute="full", sequence_parallel=True, micro_batch=2,
                                 first_stage_layers=4, last_stage_layers=4)
MOE_FSDP = dict(params=70e9, layers=72, hidden=9216, heads=72, kv_heads=72, ffn_hidden=36864, vocab=51200,
                experts=16, experts_per_token=8, expert_ffn_hidden=2048, dense_layers=3, mtp_layers=1, gpus=32,
                seq_len=1024, global_batch_tokens=524288, gpu="h100_80gb", precision="fp8", inter_node_gbps=200)
MOE_FSDP_PLAN = Parallelism(tp=2, pp=2, dp=8, zero=3, sequence_parallel=True, micro_batch=2, interleave=2, ep=8,
                            first_stage_layers=38, last_stage_layers=34)


def _waits(times):
    return times.dp_exposed + times.zero_exposed + times.optimizer


def test_the_step_waits_for_the_stage_whose_sync_is_slowest():
    workload = Workload(**dict(WIDE_DENSE, mtp_layers=1))
    ctx, layout = context_for(workload), check_layout(workload, WIDE_DENSE_PLAN)
    pairs = [pair for _, pair in stage_memories(ctx, WIDE_DENSE_PLAN, layout)]
    first, last = pairs[0], pairs[-1]
    # The last stage holds more parameters, the first more shared weights, which sync slower.
    assert sum(last) > sum(first) and first[0] > last[0]
    bottleneck, stage_times = stage_micro_batch_times(ctx, WIDE_DENSE_PLAN, layout)
    pipe = pipeline_times(bottleneck, WIDE_DENSE_PLAN.pp, 1, ctx.pipeline_schedule)
    each = [_waits(modern_sync(ctx, WIDE_DENSE_PLAN, layout.micro_batches, mb, pipe, pair))
            for mb, pair in zip(stage_times, pairs)]
    assert each[0] > each[-1]
    chosen = gradient_sync(ctx, WIDE_DENSE_PLAN, layout.micro_batches, stage_times, pipe, pairs)
    assert _waits(chosen) == pytest.approx(max(each))


@pytest.mark.parametrize("workload, plan, more", [
    (WIDE_DENSE, WIDE_DENSE_PLAN, dict(mtp_layers=1)),
    (FSDP_PIPELINE, FSDP_PIPELINE_PLAN, dict(mtp_layers=1)),
    (MOE_FSDP, MOE_FSDP_PLAN, dict(vocab=102400)),
])
def test_more_work_on_the_last_stage_never_shortens_the_step(workload, plan, more):
    before, after = (evaluate(Workload(**dict(workload, **extra)), plan) for extra in ({}, more))
    assert after.step_s >= before.step_s
    assert after.memory_bytes >= before.memory_bytes


def test_the_busiest_stage_with_fewer_layers_is_not_the_one_zero3_waits_for():
    workload = Workload(**dict(MOE_FSDP, vocab=102400))
    ctx, layout = context_for(workload), check_layout(workload, MOE_FSDP_PLAN)
    bottleneck, stage_times = stage_micro_batch_times(ctx, MOE_FSDP_PLAN, layout)
    assert bottleneck.stage == "last" and stage_times[0].layers > bottleneck.layers
    report = evaluate(workload, MOE_FSDP_PLAN)
    # The first stage's 38 layers are gathered and reduced per micro-batch, not the last stage's 34.
    first_only = gradient_sync(ctx, MOE_FSDP_PLAN, layout.micro_batches, stage_times[:1],
                               pipeline_times(bottleneck, 2, 2, ctx.pipeline_schedule),
                               [pair for _, pair in stage_memories(ctx, MOE_FSDP_PLAN, layout)][:1])
    assert report.zero_comm_total_s == pytest.approx(first_only.zero_total)
