"""A GPU that outclasses another (at least its peaks and memory bandwidth) never runs a
kernel, or a step whose links are also no slower, slower than it (efficiency.outclasses).

Each GPU's size dependence was fitted on different measurements and the curves crossed
on small GEMMs: before the floor in efficiency.gemm_rate, a fine-grained mixture of
experts ran 41% faster on A100s than on H100s (8 of 300 random plans), and B200s were
slower than H100s on a few."""
import pytest
from hypothesis import given, settings, strategies as st

from lab_core import Parallelism, Workload, evaluate
from lab_core import calibration as cal
from lab_core.efficiency import attention_rate, gemm_rate, outclassed_by, outclasses
from lab_core.hardware import GPU_PRESETS

ROWS = st.floats(min_value=1.0, max_value=1_048_576.0)
WIDTHS = st.floats(min_value=16.0, max_value=131_072.0)
DEVICES = st.sampled_from(sorted(GPU_PRESETS))
ROUNDING = 1e-12  # the test's own curve multiplies in another order
# Pairs whose every resource the step uses (peaks, HBM, NVLink) is at least the first's.
UPGRADES = (("a100_80gb", "h100_80gb"), ("h100_80gb", "h200_141gb"), ("h100_80gb", "b200_192gb"),
            ("a100_80gb", "b200_192gb"))


def _fitted_rate(device, precision, rows, width):
    """The device's own curve, E / (1 + T0 / rows + W0 / width) of its peak (calibration.py)."""
    fp8 = precision == "fp8"
    peak = device.fp8_peak_flops if fp8 else device.peak_flops
    base = (cal.FP8_GEMM_EFFICIENCY if fp8 else cal.GEMM_EFFICIENCY)[device.id]
    return peak * base / (1.0 + cal.GEMM_TOKEN_SCALE[device.id] / rows + cal.GEMM_WIDTH_SCALE[device.id] / width)


def test_which_presets_outclass_which():
    names = {gpu: [other.id for other in outclassed_by(GPU_PRESETS[gpu])] for gpu in GPU_PRESETS}
    assert names["a100_80gb"] == []
    assert names["h100_80gb"] == ["a100_80gb", "h100_96gb_500w"]
    assert names["h200_141gb"] == ["a100_80gb", "h100_80gb", "h100_96gb_500w", "h800_80gb"]
    assert names["b200_192gb"] == ["a100_80gb", "h100_80gb", "h100_96gb_500w", "h800_80gb", "h200_141gb"]
    # The H100 and the H800 have the same compute and memory: neither outclasses the other.
    assert not outclasses(GPU_PRESETS["h100_80gb"], GPU_PRESETS["h800_80gb"])
    assert not outclasses(GPU_PRESETS["h800_80gb"], GPU_PRESETS["h100_80gb"])


@given(DEVICES, ROWS, WIDTHS, st.sampled_from(("bf16", "fp8")))
def test_a_gemm_never_runs_slower_on_a_gpu_that_outclasses_another(gpu, rows, width, precision):
    device = GPU_PRESETS[gpu]
    if precision == "fp8" and device.fp8_peak_flops is None:
        return
    rate = gemm_rate(device, precision, rows, width) * (1.0 + ROUNDING)
    assert rate >= _fitted_rate(device, precision, rows, width)
    for other in outclassed_by(device):
        if precision == "fp8" and other.fp8_peak_flops is None:
            continue
        assert rate >= gemm_rate(other, precision, rows, width)


@given(DEVICES, ROWS, WIDTHS)
def test_fp8_never_runs_a_gemm_slower_than_16_bits_on_the_same_gpu(gpu, rows, width):
    device = GPU_PRESETS[gpu]
    if device.fp8_peak_flops is not None:
        assert gemm_rate(device, "fp8", rows, width) >= gemm_rate(device, "bf16", rows, width)


@given(DEVICES, ROWS, ROWS)
def test_the_floor_keeps_longer_gemms_and_sequences_no_slower(gpu, a, b):
    """The planner's bounds rely on rates that grow with a GEMM's rows and an attention's
    sequence (planner/bounds.py); the floor is a maximum of such curves, so it keeps that."""
    device = GPU_PRESETS[gpu]
    short, long = sorted((a, b))
    assert gemm_rate(device, "bf16", short, 1024.0) <= gemm_rate(device, "bf16", long, 1024.0)
    assert attention_rate(device, short) <= attention_rate(device, long)


@given(DEVICES, ROWS)
def test_attention_never_runs_slower_on_a_gpu_that_outclasses_another(gpu, tokens):
    device = GPU_PRESETS[gpu]
    for other in outclassed_by(device):
        assert attention_rate(device, tokens) >= attention_rate(other, tokens)
        assert attention_rate(device, tokens, causal=False) >= attention_rate(other, tokens, causal=False)


def test_the_floor_binds_on_a_small_expert_gemm_and_not_on_a_large_one():
    """128 rows by 512 wide: the H100's own curve gives 154 TFLOP/s (16% of peak), the A100's 218."""
    h100, a100 = GPU_PRESETS["h100_80gb"], GPU_PRESETS["a100_80gb"]
    assert _fitted_rate(h100, "bf16", 128, 512) == pytest.approx(154.4e12, rel=1e-3)
    assert gemm_rate(h100, "bf16", 128, 512) == pytest.approx(_fitted_rate(a100, "bf16", 128, 512), rel=1e-12)
    assert gemm_rate(a100, "bf16", 128, 512) == pytest.approx(218.4e12)
    assert gemm_rate(h100, "bf16", 8192, 8192) == _fitted_rate(h100, "bf16", 8192, 8192)


FINE_GRAINED = dict(params=70e9, gpus=32, seq_len=1024, global_batch_tokens=1048576, inter_node_gbps=200,
                    stack="modern", precision="bf16", flash_attention=True, dropout=False, experts=64,
                    experts_per_token=8, expert_ffn_hidden=2048, dense_layers=1, layers=48, hidden=5120, heads=40,
                    kv_heads=40, ffn_hidden=20480, vocab=51200)


def test_the_fine_grained_mixture_of_experts_that_ran_faster_on_a100s():
    """TP 4 x PP 8, 128 tokens per expert per micro-batch, 512-wide expert GEMMs: 23.0 s on
    A100s against 38.0 s on H100s and 39.4 s on B200s before the floor."""
    plan = Parallelism(tp=4, pp=8, dp=1, zero=0, recompute="full", sequence_parallel=True, micro_batch=1)
    step = {gpu: evaluate(Workload(**dict(FINE_GRAINED, gpu=gpu)), plan).step_s
            for gpu in ("a100_80gb", "h100_80gb", "h200_141gb", "b200_192gb")}
    assert step["a100_80gb"] > step["h100_80gb"] >= step["h200_141gb"] > step["b200_192gb"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(UPGRADES), st.sampled_from((8, 16, 64)), st.sampled_from((1, 2, 4)), st.sampled_from((1, 2, 4)),
       st.sampled_from((1, 2, 8)), st.sampled_from((1, 2)), st.sampled_from(("none", "selective", "full")))
def test_a_plan_never_runs_slower_after_an_upgrade(pair, experts, tp, pp, ep, micro_batch, recompute):
    """Same plan, every resource at least as good: never a longer step (dense and MoE)."""
    shape = dict(FINE_GRAINED, experts=experts, experts_per_token=min(8, experts), gpus=tp * pp * 8)
    if experts % ep or (tp * 8) % ep:
        return
    plan = Parallelism(tp=tp, pp=pp, dp=8, zero=1, recompute=recompute, sequence_parallel=tp > 1,
                       micro_batch=micro_batch, ep=ep)
    slow, fast = (evaluate(Workload(**dict(shape, gpu=gpu)), plan).step_s for gpu in pair)
    assert fast <= slow * (1.0 + 1e-12)
