"""Every pipeline stage syncs its gradients and steps its optimizer at once, so the
step waits for the slowest stage's (sync.gradient_sync over
gpu_memory.unsurpassed_pairs), not for the stage with the most parameters: shared
weights sync over the data-parallel ranks, routed experts over their own, at other
speeds. Found by a sweep of evaluate(): turning on a multi-token-prediction module
moved the most parameters to the last stage (more expert weights, fewer shared than
the first stage's dense layers) and the step came out 1.6% shorter."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.gpu_memory import stage_memories, unsurpassed_pairs
from lab_core.parallelism import check_layout
from lab_core.sync import gradient_sync, modern_sync
from lab_core.step_time import micro_batch_times, pipeline_times

# Three leading dense layers with a 4x MLP; 8 narrow experts in the rest; PyTorch-native stack.
WORKLOAD = dict(params=175e9, layers=128, hidden=16384, heads=128, kv_heads=128, ffn_hidden=65536, vocab=51200,
                experts=8, experts_per_token=8, expert_ffn_hidden=1024, dense_layers=3, gpus=512, seq_len=1024,
                global_batch_tokens=131072, gpu="a100_80gb", inter_node_gbps=200, stack="torch_native",
                tp_comm_overlap=False)
PLAN = Parallelism(tp=8, pp=4, dp=16, zero=0, sequence_parallel=True, micro_batch=2)


def test_a_stage_with_more_parameters_can_sync_faster():
    workload = Workload(**dict(WORKLOAD, mtp_layers=1))
    ctx, layout = context_for(workload), check_layout(workload, PLAN)
    pairs = [pair for _, pair in stage_memories(ctx, PLAN, layout)]
    first, last = pairs[0], pairs[-1]
    assert sum(last) > sum(first) and first[0] > last[0] and last[1] > first[1]
    mb = micro_batch_times(ctx, PLAN, layout)
    pipe = pipeline_times(mb, PLAN.pp, PLAN.interleave, ctx.pipeline_schedule)
    waits = [modern_sync(ctx, PLAN, layout.micro_batches, mb, pipe, pair) for pair in (first, last)]
    seconds = [t.dp_exposed + t.zero_exposed + t.optimizer for t in waits]
    assert seconds[0] > seconds[1]
    # The step waits for the first stage's.
    chosen = gradient_sync(ctx, PLAN, layout.micro_batches, mb, pipe, unsurpassed_pairs(pairs))
    assert chosen.dp_exposed + chosen.zero_exposed + chosen.optimizer == pytest.approx(seconds[0])


def test_a_multi_token_prediction_module_never_shortens_the_step():
    without, with_module = (evaluate(Workload(**dict(WORKLOAD, mtp_layers=n)), PLAN) for n in (0, 1))
    assert with_module.step_s >= without.step_s
    assert with_module.memory_bytes >= without.memory_bytes


@pytest.mark.parametrize("pairs, kept", [
    ([(4.0, 1.0), (3.0, 2.0), (2.0, 0.5)], ((4.0, 1.0), (3.0, 2.0))),
    ([(4.0, 2.0), (3.0, 2.0), (4.0, 1.0)], ((4.0, 2.0),)),
    ([(1.0, 0.0), (1.0, 0.0)], ((1.0, 0.0),)),
])
def test_unsurpassed_pairs_keep_each_stage_no_other_outweighs_in_both(pairs, kept):
    assert unsurpassed_pairs(pairs) == kept
