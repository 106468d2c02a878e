"""Hypothesis properties over the whole input space."""
import math

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lab_core import GPU_PRESETS, LabInputError, Parallelism, Workload, evaluate
from lab_core.activations import per_layer_bytes
from lab_core.context import context_for
from lab_core.report import refailed

SETTINGS = dict(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
POW2 = lambda lo, hi: st.integers(lo, hi).map(lambda k: 2 ** k)  # noqa: E731


@st.composite
def workloads(draw):
    return dict(
        params=draw(st.floats(125e6, 2e12)),
        gpus=draw(POW2(0, 15)),
        global_batch_tokens=draw(POW2(16, 25)),
        seq_len=draw(POW2(9, 17)),
        inter_node_gbps=draw(st.floats(25, 3200)),
        checkpoint_interval_min=draw(st.floats(1, 1440)),
        gpu=draw(st.sampled_from(sorted(GPU_PRESETS))),
        state_bytes_per_param=draw(st.sampled_from([16, 18])),
        gpu_failures_per_hour=draw(st.floats(0, 1e-2)),
        restart_min=draw(st.one_of(st.none(), st.floats(0, 1440))),
        checkpoint_mode=draw(st.sampled_from(["blocking", "async", "in_memory"])),
        checkpoint_storage_gbps=draw(st.floats(0.1, 1e5)),
        flash_attention=draw(st.booleans()),
        dropout=draw(st.booleans()),
        # Grouped-query attention over the derived heads (0 = as many as heads).
        kv_heads=draw(st.sampled_from([0, 0, 1, 2, 8])),
    )


@st.composite
def layouts(draw, gpus):
    tp = draw(POW2(0, 3))
    pp = draw(POW2(0, 6))
    assume(gpus % (tp * pp) == 0)
    return dict(tp=tp, pp=pp, dp=gpus // (tp * pp), zero=draw(st.integers(0, 3)),
                recompute=draw(st.sampled_from(["none", "selective", "full"])),
                sequence_parallel=draw(st.booleans()), micro_batch=draw(POW2(0, 3)),
                interleave=draw(st.sampled_from([1, 1, 2])))


def _numbers(tree):
    for value in tree.values():
        if isinstance(value, dict):
            yield from _numbers(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield value


@settings(**SETTINGS)
@given(st.data())
def test_only_input_errors_and_finite_non_negative_outputs(data):
    w = data.draw(workloads())
    try:
        workload = Workload(**w)
        report = evaluate(workload, Parallelism(**data.draw(layouts(w["gpus"]))))
    except LabInputError:
        return
    for value in _numbers(report.to_dict()):
        assert math.isfinite(value) and value >= 0


def _valid(w, par):
    try:
        return evaluate(Workload(**w), Parallelism(**par))
    except LabInputError:
        assume(False)


@settings(**SETTINGS)
@given(st.data())
def test_memory_never_grows_with_zero_stage(data):
    w = data.draw(workloads())
    par = data.draw(layouts(w["gpus"]))
    previous = None
    for stage in (0, 1, 2, 3):
        r = _valid(w, dict(par, zero=stage))
        if previous is not None:
            assert r.memory_bytes <= previous * (1 + 1e-12)
        previous = r.memory_bytes


@settings(**SETTINGS)
@given(st.data())
def test_memory_never_grows_with_dp_under_zero3(data):
    w = data.draw(workloads())
    par = data.draw(layouts(w["gpus"]))
    assume(w["gpus"] >= 2 and par["dp"] >= 2)
    small = dict(w, gpus=w["gpus"] // 2)
    # Same global batch and layout, half the data-parallel replicas: per-GPU
    # activations are per micro-batch, so only the ZeRO-3 shards change.
    a = _valid(small, dict(par, dp=par["dp"] // 2, zero=3))
    b = _valid(w, dict(par, zero=3))
    state_a = a.weights_bytes + a.gradients_bytes + a.optimizer_bytes
    state_b = b.weights_bytes + b.gradients_bytes + b.optimizer_bytes
    assert state_b <= state_a * (1 + 1e-12)
    assert b.memory_bytes <= a.memory_bytes * (1 + 1e-12)


@settings(**SETTINGS)
@given(st.data(), st.floats(1, 1440))
def test_a_report_refailed_for_a_new_checkpoint_interval_is_evaluates_own(data, interval):
    """report.refailed (what the planner's reuse gives a checkpoint-interval move) equals
    evaluate() for the new interval, every figure, exactly."""
    w = data.draw(workloads())
    par = data.draw(layouts(w["gpus"]))
    before = _valid(w, par)
    moved = Workload(**dict(w, checkpoint_interval_min=interval))
    assert refailed(before, context_for(moved)).to_dict() == evaluate(moved, Parallelism(**par)).to_dict()


@settings(**SETTINGS)
@given(st.data(), st.floats(0.05, 0.95))
def test_step_time_never_falls_when_bandwidth_falls(data, factor):
    w = data.draw(workloads())
    par = data.draw(layouts(w["gpus"]))
    fast = _valid(w, par)
    slow_bw = max(25.0, w["inter_node_gbps"] * factor)
    slow = _valid(dict(w, inter_node_gbps=slow_bw), par)
    assert slow.step_s >= fast.step_s * (1 - 1e-12)


@settings(**SETTINGS)
@given(st.data(), st.sampled_from(["modern", "torch_native", "megatron_lm_2021"]),
       st.sets(st.sampled_from(["core_attn", "layernorm", "mlp"]), min_size=1))
def test_recompute_time_ordered_none_selective_full(data, stack, modules):
    """What the backward replays grows from none to selective to full, so full recompute's replay
    (the whole forward) is never shorter than selective's (part of it): the planner skips every
    recompute mode above the least that fits on that ordering (planner/search.py). It did not hold
    without flash attention and dropout: selective's replay charged the 5 bytes per score of the
    dropout's tensors while the forward wrote 2 (1.3x the forward in a 1B, 32K-token example)."""
    w = dict(data.draw(workloads()), stack=stack)
    if stack == "modern" and data.draw(st.booleans()):
        w["recompute_modules"] = sorted(modules)
    par = data.draw(layouts(w["gpus"]))
    none, selective, full = (_valid(w, dict(par, recompute=mode)).recompute_s
                             for mode in ("none", "selective", "full"))
    assert none <= selective * (1 + 1e-12) + 1e-15
    assert selective <= full * (1 + 1e-12) + 1e-15


@settings(**SETTINGS)
@given(st.data(), st.sampled_from(["modern", "torch_native", "megatron_lm_2021"]), st.sampled_from([0, 8, 64]))
def test_more_recompute_never_shortens_the_step(data, stack, experts):
    """Without a pipeline, recompute adds its replay to every micro-batch and hides at most that
    much communication once, so more of it never makes a step shorter: the planner skips every
    recompute mode above the least that fits on that (planner/search.py). It did not hold on the
    modern stack with experts: the shared weights' and the experts' gradient syncs each hid
    behind the whole backward, so a longer backward hid its time twice (a 19B mixture of experts
    at ZeRO-3 ran 0.3% faster with full recompute than without); they now share one step's
    compute (sync.Room). With a pipeline whose sends outlast a slot's compute, recompute filled
    the wait and could shorten a step a little, until the syncs inside the micro-batches ran in
    that wait (test below)."""
    w = dict(data.draw(workloads()), stack=stack)
    if experts:
        w.update(experts=experts, experts_per_token=data.draw(st.sampled_from([1, 2, 8])),
                 shared_experts=data.draw(st.sampled_from([0, 1])))
    tp = data.draw(POW2(0, 3))
    assume(w["gpus"] % tp == 0)
    par = dict(tp=tp, pp=1, dp=w["gpus"] // tp, zero=data.draw(st.integers(0, 3)), sequence_parallel=True,
               micro_batch=data.draw(POW2(0, 3)))
    none, selective, full = (_valid(w, dict(par, recompute=mode)).step_s for mode in ("none", "selective", "full"))
    assert selective >= none * (1 - 1e-12)
    assert full >= selective * (1 - 1e-12)


def test_in_a_send_bound_pipeline_recompute_no_longer_shortens_the_step():
    """The exception the property above found when it drew pipelines: 125M parameters on two
    stages over a 25 Gb/s fabric, where a slot's sends outlast its compute. At ZeRO-2 full
    recompute read 1.2% faster: the replay ran while the stage waited on its sends, and the
    reduce-scatter after every micro-batch hid behind it, exposed after the slot when it did
    not. That reduce-scatter stalls compute inside the micro-batch, so it now runs in the
    slot's wait itself (sync.held_by_sends): the wait is filled, and more recompute only
    adds its replay."""
    w = Workload(params=125e6, gpus=32, global_batch_tokens=65536, seq_len=512, inter_node_gbps=25.0,
                 gpu="a100_80gb", stack="modern", flash_attention=False, dropout=False)
    for zero in (1, 2):
        reports = [evaluate(w, Parallelism(tp=1, pp=2, dp=16, zero=zero, recompute=mode, micro_batch=1))
                   for mode in ("none", "selective", "full")]
        steps = [r.step_s for r in reports]
        assert steps == sorted(steps), (zero, steps)
    assert reports[0].pp_p2p_s == 0.0  # ZeRO-2: the reduce-scatters fill every slot's wait


def test_shared_and_expert_syncs_share_one_backward():
    """The 19B mixture of experts the sweep found (ZeRO-3 over two nodes of A100 at 39 Gb/s,
    where the sync dwarfs the compute): full recompute's replay is charged whole again."""
    w = Workload(params=19.2e9, gpus=16, inter_node_gbps=39.1, gpu="a100_80gb", stack="modern", seq_len=8192,
                 global_batch_tokens=32768, experts=8, experts_per_token=2, shared_experts=1,
                 recompute_modules=["shared_experts"])
    steps = [evaluate(w, Parallelism(tp=2, cp=2, pp=1, dp=4, zero=3, recompute=mode, sequence_parallel=True,
                                     micro_batch=1)).step_s for mode in ("none", "selective", "full")]
    assert steps == sorted(steps)


@settings(**SETTINGS)
@given(st.integers(512, 131072), st.integers(1, 16), st.sampled_from([1024, 4096, 12288, 25600]),
       st.sampled_from([8, 32, 96, 160]), st.sampled_from([1, 2, 4, 8, 16, 32, 64]), st.booleans(), st.booleans(),
       st.sampled_from([1.0, 0.25, 0.125]), st.booleans())
def test_activation_memory_ordered_none_selective_full(s, b, h, a, t, sp, flash, kv_ratio, dropout):
    none = per_layer_bytes(s, b, h, a, t, sp, "none", flash, None, kv_ratio, dropout)
    selective = per_layer_bytes(s, b, h, a, t, sp, "selective", flash, None, kv_ratio, dropout)
    full = per_layer_bytes(s, b, h, a, t, sp, "full", flash, None, kv_ratio, dropout)
    assert none >= selective > full
    if not flash:
        assert none > selective
