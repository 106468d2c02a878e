"""Parallelism.recompute_layers: full recompute of the first N layers of each model chunk
(Megatron-Core's --recompute-method block, lab_core/partial_recompute.py)."""
import pytest
from hypothesis import given, settings, strategies as st

from lab_core import Parallelism, Workload, evaluate
from lab_core.errors import LabInputError
from lab_core.gpu_memory import stages
from lab_core.partial_recompute import largest_chunk, recomputed_layers

# Llama 3 70B on 64 H100: 80 layers, 20 per stage at PP 4.
W70 = dict(params=70e9, layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=43008, vocab=128256, gpus=64,
           global_batch_tokens=4 * 1024 * 1024, seq_len=4096, gpu="h100_80gb")
PLAN = dict(tp=8, pp=4, dp=2, zero=1, sequence_parallel=True, micro_batch=1)
DEEPSEEK_LIKE = dict(layers=61, hidden=7168, heads=128, kv_heads=128, ffn_hidden=27648, vocab=129280,
                     experts=256, experts_per_token=8, expert_ffn_hidden=3072, shared_experts=1, dense_layers=3,
                     seq_len=4096, gpus=256, global_batch_tokens=1024 * 4096, gpu="h800_80gb", precision="fp8")


def _report(workload, **plan):
    return evaluate(workload, Parallelism(**plan)).to_dict()


def _without_field(report):
    report = dict(report, parallelism=dict(report["parallelism"]))
    report["parallelism"].pop("recompute_layers")
    return report


def test_default_is_every_layer_and_the_whole_chunk_is_full_recompute():
    """0 (the default) and N = the layers of a chunk both recompute every layer: the same figures."""
    workload = Workload(**W70)
    full = _report(workload, recompute="full", **PLAN)
    assert full["parallelism"]["recompute_layers"] == 0
    for interleave in (1, 2, 5):
        plan = dict(PLAN, interleave=interleave)
        chunk = 80 // (4 * interleave)
        whole = _report(workload, recompute="full", recompute_layers=chunk, **plan)
        assert _without_field(whole) == _without_field(_report(workload, recompute="full", **plan))


def test_more_layers_trade_memory_for_time_between_none_and_full():
    workload = Workload(**W70)
    none = _report(workload, recompute="none", **PLAN)
    full = _report(workload, recompute="full", **PLAN)
    previous = none
    for layers in range(1, 21):
        report = _report(workload, recompute="full", recompute_layers=layers, **PLAN)
        assert report["memory"]["activations_bytes"] < previous["memory"]["activations_bytes"]
        assert report["time"]["step_s"] > previous["time"]["step_s"]
        assert report["time"]["recompute_s"] > previous["time"]["recompute_s"]
        previous = report
    assert previous["memory"]["activations_bytes"] == pytest.approx(full["memory"]["activations_bytes"], rel=1e-12)
    assert previous["time"]["step_s"] == pytest.approx(full["time"]["step_s"], rel=1e-12)


def test_each_recomputed_layer_saves_what_it_kept_and_adds_its_forward():
    """Activations fall by the same amount per recomputed layer (a layer's stored bytes less its
    input), and the recompute time grows by one layer's forward each (before the largest working set
    and the pipeline pay for it)."""
    workload = Workload(**W70)
    parts = [_report(workload, recompute="full", recompute_layers=n, **PLAN) for n in (2, 3, 4)]
    saved = [a["memory"]["activations_bytes"] - b["memory"]["activations_bytes"] for a, b in zip(parts, parts[1:])]
    added = [b["time"]["recompute_s"] - a["time"]["recompute_s"] for a, b in zip(parts, parts[1:])]
    assert saved[0] == pytest.approx(saved[1], rel=1e-9) and saved[0] > 0
    assert added[0] == pytest.approx(added[1], rel=1e-9) and added[0] > 0


def test_hardware_flops_count_the_recomputed_layers_forwards():
    """A dense model with flash attention: full recompute repeats every layer's forward, none repeats the
    attention core (flash attention's backward); half the layers of one stage repeat half of each."""
    workload = Workload(**dict(W70, gpus=8, global_batch_tokens=32 * 4096))
    plan = dict(tp=8, pp=1, dp=1, zero=0, sequence_parallel=True, micro_batch=1)
    hardware = {n: _report(workload, recompute="full" if n else "none", recompute_layers=n if n != 80 else 0,
                           **plan)["throughput"]["hardware_flops_per_step"] for n in (0, 40, 80)}
    assert hardware[40] == pytest.approx((hardware[0] + hardware[80]) / 2.0, rel=1e-12)


def test_interleaving_recomputes_the_first_layers_of_every_chunk():
    """PP 4 x interleave 2: each stage holds two chunks of 10 layers; 3 per chunk is 6 per stage."""
    first, middle, last = stages(4, 20, 20, 20)
    for stage in (first, middle, last):
        assert recomputed_layers(stage, Parallelism(pp=4, interleave=2, recompute="full", recompute_layers=3)) == (6, 0)
        assert recomputed_layers(stage, Parallelism(pp=4, interleave=2, recompute="full")) == (20, 0)
        assert recomputed_layers(stage, Parallelism(pp=4, interleave=2, recompute="none")) == (0, 0)
    assert largest_chunk(20, 20, 20, 2) == 10
    assert largest_chunk(7, 8, 7, 2) == 4


def test_a_mixture_of_experts_stage_recomputes_its_dense_layers_first():
    """DeepSeek-V3's first 3 layers are dense and open the first stage's first chunk."""
    first, middle, last = stages(4, 16, 15, 15, dense_layers=3)
    assert (first.dense, first.moe) == (3, 13)
    par = Parallelism(pp=4, recompute="full", recompute_layers=5)
    assert recomputed_layers(first, par) == (3, 2)
    assert recomputed_layers(middle, par) == (0, 5)
    assert recomputed_layers(first, Parallelism(pp=4, recompute="full", recompute_layers=2)) == (2, 0)


def test_a_mixture_of_experts_model_recomputes_part_of_its_layers():
    workload = Workload(**DEEPSEEK_LIKE)
    plan = dict(tp=1, pp=8, dp=32, ep=32, zero=1, micro_batch=1, first_stage_layers=7, last_stage_layers=12)
    # The middle stages hold (61 - 7 - 12) / 6 = 7 layers.
    none = _report(workload, recompute="none", **plan)
    some = _report(workload, recompute="full", recompute_layers=3, **plan)
    full = _report(workload, recompute="full", **plan)
    for key in ("activations_bytes",):
        assert full["memory"][key] < some["memory"][key] < none["memory"][key]
    assert none["time"]["step_s"] < some["time"]["step_s"] < full["time"]["step_s"]
    # The all-to-alls of the recomputed mixture-of-experts layers run again (step_time.replays_moe_layer).
    assert none["time"]["ep_comm_total_s"] < some["time"]["ep_comm_total_s"] < full["time"]["ep_comm_total_s"]


@pytest.mark.parametrize("recompute", ["none", "selective"])
def test_recompute_layers_need_full_recompute(recompute):
    with pytest.raises(LabInputError) as err:
        Parallelism(tp=8, pp=4, dp=2, recompute=recompute, recompute_layers=4)
    assert err.value.field == "recompute_layers" and err.value.reason == "inconsistent"
    assert "full" in str(err.value)


@pytest.mark.parametrize("bad", [-1, 2.5, "five", True])
def test_recompute_layers_must_be_a_whole_number(bad):
    with pytest.raises(LabInputError) as err:
        Parallelism(tp=8, pp=4, dp=2, recompute="full", recompute_layers=bad)
    assert err.value.field == "recompute_layers"


def test_recompute_layers_beyond_a_chunk_name_the_chunk():
    workload = Workload(**W70)
    with pytest.raises(LabInputError) as err:
        evaluate(workload, Parallelism(recompute="full", recompute_layers=11, interleave=2, **PLAN))
    assert err.value.field == "recompute_layers" and err.value.reason == "inconsistent"
    assert err.value.allowed == "0 to 10"
    evaluate(workload, Parallelism(recompute="full", recompute_layers=10, interleave=2, **PLAN))


@settings(max_examples=40, deadline=None)
@given(layers=st.integers(1, 20), micro_batch=st.sampled_from([1, 2]), zero=st.sampled_from([0, 1, 2, 3]),
       seq_len=st.sampled_from([2048, 4096, 8192]))
def test_partial_recompute_lies_between_none_and_full(layers, micro_batch, zero, seq_len):
    """Property: whatever the layers, the activations and the step lie between no recompute and full."""
    workload = Workload(**dict(W70, seq_len=seq_len, global_batch_tokens=256 * seq_len))
    plan = dict(PLAN, micro_batch=micro_batch, zero=zero)
    none = _report(workload, recompute="none", **plan)
    full = _report(workload, recompute="full", **plan)
    some = _report(workload, recompute="full", recompute_layers=layers, **plan)
    low, high = full["memory"]["activations_bytes"], none["memory"]["activations_bytes"]
    assert low * (1 - 1e-12) <= some["memory"]["activations_bytes"] <= high * (1 + 1e-12)
    assert none["time"]["step_s"] * (1 - 1e-12) <= some["time"]["step_s"] <= full["time"]["step_s"] * (1 + 1e-12)
