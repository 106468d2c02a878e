"""A pipeline whose sends outlast a slot's compute waits in every slot; sync traffic that
stalls compute inside the micro-batches (ZeRO-3's per-layer gathers and reduce-scatters,
a sync after every micro-batch) runs in that wait (sync.held_by_sends). Before, it was
added after the slots, so more compute (more experts per token, dropout, a slower GPU)
hid more of it in slots whose length the sends set and made the step shorter."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.gpu_memory import memory_of
from lab_core.parallelism import check_layout
from lab_core.step_time import pipeline_times, stage_micro_batch_times
from lab_core.sync import gradient_sync, modern_sync

# A small mixture of experts at ZeRO-3 over a slow fabric: TP 8 x PP 2, 8-way expert
# parallelism, three interleaved chunks; the sends set the slot (found by a sweep of
# random plans: the step was 0.9% shorter with twice the experts per token).
SEND_BOUND = dict(params=350e6, gpus=32, seq_len=4096, inter_node_gbps=100, gpu="h100_80gb", stack="modern",
                  global_batch_tokens=524288, experts=16, experts_per_token=4, expert_ffn_hidden=1024,
                  shared_experts=0, dense_layers=0, dropout=False, mtp_layers=1, layers=8, hidden=1024, heads=8,
                  kv_heads=8, ffn_hidden=4096, vocab=51200)
PLAN = Parallelism(tp=8, pp=2, dp=2, zero=3, sequence_parallel=True, micro_batch=1, interleave=3, ep=8,
                   first_stage_layers=6, last_stage_layers=2)


def _parts(workload, par):
    layout = check_layout(workload, par)
    ctx = context_for(workload)
    memory = memory_of(ctx, par, layout)
    mb, stages = stage_micro_batch_times(ctx, par, layout)
    pipe = pipeline_times(mb, par.pp, par.interleave, ctx.pipeline_schedule)
    sync = gradient_sync(ctx, par, layout.micro_batches, stages, pipe, memory.sync_params)
    return layout.micro_batches, pipe, sync


def test_the_plan_is_send_bound_and_its_zero3_stalls_fill_the_wait():
    m, pipe, sync = _parts(Workload(**SEND_BOUND), PLAN)
    wait = m * (pipe.steady - pipe.busy)
    assert wait > 0.0 and sync.stall > 0.0
    report = evaluate(Workload(**SEND_BOUND), PLAN)
    absorbed = min(sync.stall, wait)
    assert sync.held == absorbed
    unabsorbed = m * pipe.steady + pipe.bubble + sync.dp_exposed + sync.zero_exposed + sync.optimizer
    assert report.step_s == pytest.approx(unabsorbed - absorbed, rel=1e-12)
    # The slots' wait is what the stall did not fill.
    assert report.pp_p2p_s == pytest.approx(wait - absorbed, abs=1e-12)


@pytest.mark.parametrize("change", [{"experts_per_token": 8}, {"dropout": True}, {"expert_ffn_hidden": 2048}])
def test_more_compute_never_shortens_a_send_bound_step(change):
    base = evaluate(Workload(**SEND_BOUND), PLAN).step_s
    assert evaluate(Workload(**dict(SEND_BOUND, **change)), PLAN).step_s >= base


def test_a_faster_gpu_never_lengthens_a_send_bound_step():
    base = evaluate(Workload(**SEND_BOUND), PLAN).step_s
    assert evaluate(Workload(**dict(SEND_BOUND, gpu="h200_141gb")), PLAN).step_s <= base


def test_report_parts_still_sum_to_the_step():
    r = evaluate(Workload(**SEND_BOUND), PLAN)
    parts = r.forward_s + r.backward_s + r.recompute_s + r.waiting_s() + r.optimizer_s
    assert parts == pytest.approx(r.step_s, rel=1e-9)


def test_without_a_wait_nothing_is_absorbed():
    """The same plan on a fast fabric: compute sets the slot, the stall stays after it."""
    workload = Workload(**dict(SEND_BOUND, inter_node_gbps=3200))
    m, pipe, sync = _parts(workload, PLAN)
    assert pipe.steady == pipe.busy
    r = evaluate(workload, PLAN)
    assert r.step_s == pytest.approx(m * pipe.steady + pipe.bubble + sync.dp_exposed + sync.zero_exposed
                                     + sync.optimizer, rel=1e-12)


# ZeRO-2 on a send-bound pipeline: TP 2 x PP 8 over 50 Gb/s, 32 micro-batches, each but the
# last followed by a reduce-scatter that hides in the next one's compute (found by a sweep of
# random plans: turning the overlap off made the step 4.8% shorter, 0.1915 s against 0.2011 s).
ZERO2_SEND_BOUND = dict(params=3e9, gpus=32, seq_len=1024, inter_node_gbps=50, gpu="b200_192gb", stack="modern",
                        flash_attention=False, dropout=True, global_batch_tokens=65536, layers=24, hidden=3072,
                        heads=24, kv_heads=24, ffn_hidden=12288, vocab=51200)
ZERO2_PLAN = Parallelism(tp=2, pp=8, dp=2, zero=2, sequence_parallel=True, micro_batch=1)


def test_the_contention_of_what_hides_in_a_slot_is_held_by_its_wait_too():
    """The reduce-scatters that hide in the micro-batches cost COMM_CONTENTION of their time
    in those slots; a slot that waits for its sends holds that as it holds an exposed stall.
    Before, with the overlap on the contention came after the slots while with it off the
    whole stall ran in the wait, so off was faster."""
    workload = Workload(**ZERO2_SEND_BOUND)
    m, pipe, sync = _parts(workload, ZERO2_PLAN)
    assert pipe.steady > pipe.busy  # send-bound
    assert sync.held == sync.stall  # all of it in the waits
    # The slowest stage's repeats stall its slots, and its wait for the sends holds them all.
    ctx = context_for(workload)
    layout = check_layout(workload, ZERO2_PLAN)
    slowest, stages = stage_micro_batch_times(ctx, ZERO2_PLAN, layout)
    params = memory_of(ctx, ZERO2_PLAN, layout).sync_params[stages.index(slowest)]
    own = modern_sync(ctx, ZERO2_PLAN, m, slowest, pipe, params)
    assert 0.0 < own.stall <= m * (pipe.steady - pipe.busy)
    on = evaluate(workload, ZERO2_PLAN).step_s
    off = evaluate(Workload(**ZERO2_SEND_BOUND, grad_reduce_overlap=False), ZERO2_PLAN).step_s
    assert on <= off
