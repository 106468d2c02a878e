"""FSDP under PyTorch's pipeline is ZeRO-1 (lab_core.parallelism.zero_stages): the
PyTorch-native stack runs no ZeRO-2 or ZeRO-3 with pp > 1. evaluate() refuses such a
layout with a specific error, the planner never answers one (nor accepts the pin), and
the other stacks keep every stage."""
import pytest

from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core.parallelism import zero_stages
from lab_core.planner import recommend

# Workloads whose PyTorch-native plan was pipelined with ZeRO-2 before the rule
# (bench/planner_cases.py cases 18, 19 and 32 on the torch_native stack).
WAS_PIPELINED_ZERO2 = (
    dict(params=329e9, gpus=890, global_batch_tokens=131072, seq_len=65536, inter_node_gbps=146.0),
    dict(params=748e9, gpus=751, global_batch_tokens=33554432, seq_len=65536, inter_node_gbps=43.4),
    dict(params=922e9, gpus=10245, global_batch_tokens=2097152, seq_len=2048, inter_node_gbps=32.4),
)
LLAMA_70B = dict(params=70e9, gpus=64, gpu="h100_80gb")


def test_the_stages_each_stack_runs():
    assert zero_stages("torch_native", 2, True) == (0, 1)
    assert zero_stages("torch_native", 1, True) == (0, 1, 2, 3)
    assert zero_stages("modern", 8, True) == zero_stages("megatron_lm_2021", 8, True) == (0, 1, 2, 3)
    assert zero_stages("torch_native", 2, False) == zero_stages("modern", 1, False) == (0,)


@pytest.mark.parametrize("zero", (2, 3))
def test_evaluate_refuses_zero_2_and_3_with_a_pipeline_on_the_pytorch_native_stack(zero):
    w = Workload(stack="torch_native", **LLAMA_70B)
    with pytest.raises(LabInputError) as raised:
        evaluate(w, Parallelism(tp=8, pp=2, dp=4, zero=zero))
    error = raised.value.to_dict()
    assert error["field"] == "zero" and error["reason"] == "inconsistent" and error["allowed"] == "0, 1"
    assert "pipeline" in error["detail"]
    # The same layout at ZeRO-1, or unpipelined at ZeRO-3, or on Megatron-Core, runs.
    evaluate(w, Parallelism(tp=8, pp=2, dp=4, zero=1))
    evaluate(w, Parallelism(tp=8, pp=1, dp=8, zero=zero))
    evaluate(Workload(stack="modern", **LLAMA_70B), Parallelism(tp=8, pp=2, dp=4, zero=zero))


@pytest.mark.parametrize("inputs", WAS_PIPELINED_ZERO2)
def test_the_planner_never_pipelines_zero_2_or_3_on_the_pytorch_native_stack(inputs):
    plan = recommend(Workload(stack="torch_native", **inputs))
    assert plan.fits
    par = plan.parallelism
    assert par.zero <= 1 or par.pp == 1, par
    for alternative in plan.to_dict()["alternatives"]:
        layout = alternative.get("parallelism") or {}
        assert layout.get("zero", 0) <= 1 or layout.get("pp", 1) == 1, alternative


def test_a_zero_3_pin_with_a_pipeline_names_the_stages_that_run():
    w = Workload(stack="torch_native", **LLAMA_70B)
    with pytest.raises(LabInputError) as raised:
        recommend(w, pins={"pp": 2, "zero": 3})
    assert raised.value.field == "zero" and raised.value.allowed == "0, 1"
    assert recommend(w, pins={"pp": 2, "zero": 1}).parallelism.zero == 1
    assert recommend(Workload(stack="modern", **LLAMA_70B), pins={"pp": 2, "zero": 3}).parallelism.zero == 3
