"""Workload.grad_reduce_overlap: the data-parallel gradient reduction behind the backward (on,
Megatron-Core's --overlap-grad-reduce) or after it, waited for in full (off, sync.py)."""
import pytest
from hypothesis import given, settings, strategies as st

from lab_core import Parallelism, Workload, evaluate
from lab_core.comms import group_time
from lab_core.context import context_for
from lab_core.errors import LabInputError
from lab_core.memory import WEIGHT_BYTES
from lab_core.sync import Room, bucket_times, replica_sync

LLAMA_8B = dict(params=8e9, layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=21504, vocab=128256,
                seq_len=8192, gpu="h100_80gb", gpus=64)


def _time(workload, par):
    return evaluate(workload, par).to_dict()["time"]


def test_on_is_the_default_and_changes_nothing():
    par = Parallelism(tp=1, pp=1, dp=64, zero=1, micro_batch=1)
    base = Workload(**LLAMA_8B, global_batch_tokens=64 * 8192)
    assert _time(base, par) == _time(Workload(**LLAMA_8B, global_batch_tokens=64 * 8192, grad_reduce_overlap=True), par)


@pytest.mark.parametrize("zero", [0, 1, 2])
def test_off_exposes_the_whole_reduction_however_long_the_backward(zero):
    """Behind a backward far longer than the traffic, the overlapped reduction shows one bucket
    (and what its hiding costs in contention); without the overlap all of it is exposed."""
    params = 1e9
    on = context_for(Workload(**LLAMA_8B))
    off = context_for(Workload(**LLAMA_8B, grad_reduce_overlap=False))
    total_on, exposed_on = replica_sync(on, params, 64, 8, zero, Room(1e3, 1e3, 2e3), 4)
    total_off, exposed_off = replica_sync(off, params, 64, 8, zero, Room(1e3, 1e3, 2e3), 4)
    reduce_off = bucket_times(off, params * off.grad_bytes, 64, 8, 2.0 if zero == 0 else 1.0)[0]
    reduces = 4 if zero == 2 else 1  # ZeRO-2 reduce-scatters every micro-batch
    assert exposed_off >= reduces * reduce_off
    assert exposed_on < reduces * bucket_times(on, params * on.grad_bytes, 64, 8, 2.0 if zero == 0 else 1.0)[0]


def _gather_s(workload, report, dp):
    """Seconds of the ZeRO-1/2 parameter all-gather, which keeps its own overlap (sync.replica_sync)."""
    ctx = context_for(workload)
    return bucket_times(ctx, WEIGHT_BYTES * report["memory"]["params_per_gpu"], dp, min(8, dp), 1.0)[0]


@pytest.mark.parametrize("stack", ["modern", "torch_native", "megatron_lm_2021"])
@pytest.mark.parametrize("zero", [0, 1, 3])
def test_off_leaves_every_gradient_second_exposed(stack, zero):
    """With the overlap off, the gradient reduction is charged whole as exposed time on every stack:
    dp_comm_s is at least dp_comm_total_s less the ZeRO-1 parameter gather (which keeps
    --overlap-param-gather); ZeRO-3's per-layer gathers keep their prefetch."""
    workload = Workload(**LLAMA_8B, global_batch_tokens=64 * 8192, stack=stack, grad_reduce_overlap=False)
    report = evaluate(workload, Parallelism(tp=1, pp=1, dp=64, zero=zero, micro_batch=1, recompute="full")).to_dict()
    times = report["time"]
    gather = _gather_s(workload, report, 64) if zero in (1, 2) and stack != "megatron_lm_2021" else 0.0
    assert times["dp_comm_s"] >= times["dp_comm_total_s"] - gather > 0.0
    if zero == 3:
        assert times["zero_comm_s"] < times["zero_comm_total_s"]


@settings(max_examples=60, deadline=None)
@given(zero=st.sampled_from([0, 1, 2, 3]), dp=st.sampled_from([8, 16, 64]), batches=st.sampled_from([1, 4, 16]),
       stack=st.sampled_from(["modern", "torch_native", "megatron_lm_2021"]))
def test_off_hides_none_of_the_reduction_and_never_shortens_a_step(zero, dp, batches, stack):
    """Whatever the plan, with the overlap off no second of gradient reduction is hidden (the
    exposed data-parallel time is at least its total less the parameter gather), the traffic is
    the same, and the step is never shorter than with the overlap."""
    workload = dict(LLAMA_8B, gpus=dp, global_batch_tokens=dp * batches * 8192, stack=stack)
    par = Parallelism(tp=1, pp=1, dp=dp, zero=zero, micro_batch=1, recompute="full")
    off_workload = Workload(**workload, grad_reduce_overlap=False)
    off = evaluate(off_workload, par).to_dict()
    on = evaluate(Workload(**workload), par).to_dict()["time"]
    gather = _gather_s(off_workload, off, dp) if zero in (1, 2) and stack != "megatron_lm_2021" else 0.0
    assert off["time"]["dp_comm_s"] >= off["time"]["dp_comm_total_s"] - gather - 1e-12
    assert off["time"]["dp_comm_total_s"] == on["dp_comm_total_s"]
    assert off["time"]["step_s"] >= on["step_s"] - 1e-12


def test_not_a_boolean_is_refused_by_name():
    with pytest.raises(LabInputError, match="grad_reduce_overlap"):
        Workload(**LLAMA_8B, grad_reduce_overlap="sometimes")


@pytest.mark.parametrize("zero", [1, 2])
def test_fp8_weight_gather_halves_the_updated_weights_all_gather(zero):
    """ZeRO-1/2 all-gather the updated weights after the optimizer step: in FP8 with
    Workload.fp8_weight_gather (Megatron-Core's --fp8-param-gather), one byte per weight instead of two;
    the gradient reduce-scatter is unchanged."""
    params = 1e9
    fp8 = dict(LLAMA_8B, precision="fp8")
    on = context_for(Workload(**fp8, fp8_weight_gather=True))
    off = context_for(Workload(**fp8))
    reduce = bucket_times(on, params * on.grad_bytes, 64, 8, 1.0)[0]
    total_on = replica_sync(on, params, 64, 8, zero)[0]
    total_off = replica_sync(off, params, 64, 8, zero)[0]
    assert total_off - reduce == pytest.approx(bucket_times(off, WEIGHT_BYTES * params, 64, 8, 1.0)[0])
    assert total_on - reduce == pytest.approx(bucket_times(on, 1.0 * params, 64, 8, 1.0)[0])
    assert total_on < total_off
    # In 16-bit training the switch changes nothing.
    bf16 = context_for(Workload(**LLAMA_8B, fp8_weight_gather=True))
    assert replica_sync(bf16, params, 64, 8, zero)[0] == replica_sync(context_for(Workload(**LLAMA_8B)),
                                                                       params, 64, 8, zero)[0]
