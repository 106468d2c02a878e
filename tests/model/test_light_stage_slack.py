"""Every pipeline stage's slots last as long as the slowest stage's: a lighter stage waits in
each for its input (sync.gradient_sync). Two consequences, each found by a sweep of random
plans where more compute on a stage that does not set the pace shortened the step:
  - its stalls inside the slots (ZeRO-3's per-layer traffic, ZeRO-2's repeats) run in its own
    waits first (sync._hold_in_own_slack): twice the dense layers' MLP on a light first stage
    hid more of its ZeRO-3 gathers behind its layers, 0.329983 -> 0.326229 s;
  - its end-of-step syncs hide behind the slowest stage's passes (PipelineTimes.forward,
    backward), not its own: a wider MLP on the light stage of a ZeRO-0 pipeline hid more of
    its all-reduce, 0.080020 -> 0.079886 s."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.gpu_memory import memory_of
from lab_core.parallelism import check_layout
from lab_core.step_time import pipeline_times, stage_micro_batch_times
from lab_core.sync import gradient_sync, legacy_sync

# What the three cases share: the 2021 stack, 16-bit, flash attention, every overlap on.
COMMON = dict(stack="megatron_lm_2021", precision="bf16", flash_attention=True, tp_comm_overlap=True,
              grad_reduce_overlap=True, vocab=51200)
ZERO3_LIGHT_FIRST = (
    dict(COMMON, params=8e9, gpus=512, seq_len=4096, inter_node_gbps=800, gpu="h100_80gb", dropout=False,
         global_batch_tokens=4194304, experts=128, experts_per_token=4, expert_ffn_hidden=4096, shared_experts=0,
         dense_layers=3, moe_comm_overlap=True, mtp_layers=0, layers=10, hidden=1024, heads=8, kv_heads=8,
         ffn_hidden=4096),
    Parallelism(tp=2, pp=4, dp=64, zero=3, recompute="selective", sequence_parallel=True, micro_batch=8, ep=64,
                first_stage_layers=2, last_stage_layers=2))
ZERO3_TWO_STAGES = (
    dict(COMMON, params=20e9, gpus=64, seq_len=16384, inter_node_gbps=400, gpu="h800_80gb", dropout=False,
         global_batch_tokens=1048576, experts=8, experts_per_token=1, expert_ffn_hidden=2048, shared_experts=1,
         dense_layers=3, moe_comm_overlap=False, mtp_layers=1, layers=52, hidden=6144, heads=48, kv_heads=48,
         ffn_hidden=24576),
    Parallelism(tp=1, pp=2, dp=32, zero=3, recompute="full", micro_batch=2, ep=8, first_stage_layers=28,
                last_stage_layers=24))
ZERO0_LIGHT_FIRST = (
    dict(COMMON, params=350e6, gpus=32, seq_len=2048, inter_node_gbps=400, gpu="h100_80gb", dropout=True,
         global_batch_tokens=262144, experts=16, experts_per_token=2, expert_ffn_hidden=4096, shared_experts=0,
         dense_layers=3, moe_comm_overlap=True, mtp_layers=1, layers=8, hidden=512, heads=4, kv_heads=4,
         ffn_hidden=2048),
    Parallelism(tp=2, pp=2, dp=8, zero=0, recompute="full", sequence_parallel=True, micro_batch=8, interleave=2,
                first_stage_layers=6, last_stage_layers=2))
CASES = [ZERO3_LIGHT_FIRST, ZERO3_TWO_STAGES, ZERO0_LIGHT_FIRST]


def _wider(fields, change):
    if change == "vocab":
        return dict(fields, vocab=2 * fields["vocab"])
    return dict(fields, ffn_hidden=2 * fields["ffn_hidden"])


@pytest.mark.parametrize("stack", ["megatron_lm_2021", "modern"])
@pytest.mark.parametrize("change", ["ffn", "vocab"])
@pytest.mark.parametrize("case", CASES)
def test_more_work_on_a_stage_never_shortens_the_step(case, change, stack):
    fields, plan = case
    fields = dict(fields, stack=stack)
    base = evaluate(Workload(**fields), plan).step_s
    assert evaluate(Workload(**_wider(fields, change)), plan).step_s >= base * (1.0 - 1e-12)


def _parts(fields, plan):
    workload = Workload(**fields)
    ctx = context_for(workload)
    layout = check_layout(workload, plan)
    memory = memory_of(ctx, plan, layout)
    slowest, stages = stage_micro_batch_times(ctx, plan, layout)
    pipe = pipeline_times(slowest, plan.pp, plan.interleave, ctx.pipeline_schedule)
    return ctx, layout.micro_batches, memory, slowest, stages, pipe


def test_a_light_stage_holds_its_zero3_stalls_in_its_own_waits():
    fields, plan = ZERO3_LIGHT_FIRST
    ctx, m, memory, slowest, stages, pipe = _parts(fields, plan)
    light = stages[0]
    assert light.busy < slowest.busy
    slack = m * (pipe.busy - light.busy)
    params = memory.sync_params[0]
    alone = legacy_sync(ctx, plan, m, light, pipe, params[0] + params[1])
    assert 0.0 < alone.stall <= slack
    # Its whole stall fits in its waits: the step waits for another stage's sync.
    sync = gradient_sync(ctx, plan, m, stages, pipe, memory.sync_params)
    assert sync.dp_exposed + sync.zero_exposed - sync.held < alone.dp_exposed + alone.zero_exposed


@pytest.mark.parametrize("case", CASES)
def test_the_report_still_adds_up(case):
    fields, plan = case
    r = evaluate(Workload(**fields), plan)
    assert r.pp_p2p_s >= 0.0 and r.dp_comm_s >= 0.0 and r.zero_comm_s >= 0.0
    parts = (r.forward_s + r.backward_s + r.recompute_s + r.tp_comm_s + r.cp_comm_s + r.ep_comm_s + r.pp_p2p_s
             + r.pipeline_bubble_s + r.dp_comm_s + r.zero_comm_s + r.optimizer_s)
    assert parts == pytest.approx(r.step_s, rel=1e-12)


def test_end_of_step_syncs_hide_behind_the_slowest_stage_passes():
    fields, plan = ZERO0_LIGHT_FIRST
    ctx, m, memory, slowest, stages, pipe = _parts(fields, plan)
    assert (pipe.forward, pipe.backward) == (slowest.forward, slowest.backward + slowest.recompute)
    light = next(stage for stage in stages if stage.busy < slowest.busy)
    params = memory.sync_params[stages.index(light)]
    # The light stage's all-reduce does not depend on its own backward: the same stage with
    # a longer backward exposes the same.
    before = legacy_sync(ctx, plan, m, light, pipe, params[0] + params[1]).dp_exposed
    light.backward *= 1.5
    assert legacy_sync(ctx, plan, m, light, pipe, params[0] + params[1]).dp_exposed == before
