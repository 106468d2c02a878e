"""The flash-attention rate by sequence length (lab_core.efficiency.attention_rate):
the saturating shape fitted on FlashAttention-3's measured throughput, and the
causal kernel's diagonal tiles."""
import pytest
from hypothesis import given, strategies as st

from lab_core import calibration as cal
from lab_core.efficiency import attention_rate
from lab_core.hardware import GPU_PRESETS
from labtools.fit_modern_stack import measurements

H100 = GPU_PRESETS["h100_80gb"]
TOKENS = st.floats(min_value=64.0, max_value=1_048_576.0)


@given(TOKENS, TOKENS)
def test_longer_sequences_never_run_slower(a, b):
    short, long = sorted((a, b))
    assert attention_rate(H100, short) <= attention_rate(H100, long)
    assert attention_rate(H100, short, causal=False) <= attention_rate(H100, long, causal=False)


@given(TOKENS)
def test_a_causal_kernel_is_slower_per_useful_flop_and_both_stay_below_the_long_sequence_rate(tokens):
    ceiling = H100.peak_flops * cal.ATTENTION_EFFICIENCY["h100_80gb"]
    assert attention_rate(H100, tokens) < attention_rate(H100, tokens, causal=False) < ceiling


def test_the_shape_follows_the_measured_table():
    """Relative to its 16K row, each row of the measurement is within 2% of the model's shape
    (the level is fitted on whole runs, ATTENTION_EFFICIENCY, not on this kernel alone)."""
    rows = measurements()["flash_attention3_h100_bf16"]["rows"]
    last = rows[-1]
    for row in rows:
        measured = row["tflops"] / last["tflops"]
        model = attention_rate(H100, row["seq"], causal=False) / attention_rate(H100, last["seq"], causal=False)
        assert model == pytest.approx(measured, rel=0.02), row["seq"]


def test_at_a_4k_causal_sequence_the_kernel_runs_at_a_tenth_below_its_long_sequence_rate():
    """234 / 4,096 and 128 / 4,096: 1 / (1.057 x 1.031) = 0.917."""
    ceiling = H100.peak_flops * cal.ATTENTION_EFFICIENCY["h100_80gb"]
    assert attention_rate(H100, 4096) / ceiling == pytest.approx(1.0 / (1.0 + 234 / 4096) / (1.0 + 128 / 4096),
                                                                 rel=1e-3)
