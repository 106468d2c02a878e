"""The modern-stack constants of lab_core/calibration.py are what their fits give.

labtools.fit_modern_stack reruns each least-squares fit on the published
figures it names; a constant edited by hand, or a model change that moves a
fit, fails here by name."""
import pytest

from lab_core import calibration as cal
from labtools import fit_modern_stack as fit

REL = 0.02   # the shipped constants are rounded to three digits


def test_gemm_shape_constants_are_the_deepgemm_fit():
    _, tokens, width = fit.fit_gemm_shape()
    for gpu in ("h100_80gb", "h800_80gb", "h200_141gb"):
        assert cal.GEMM_TOKEN_SCALE[gpu] == pytest.approx(tokens, rel=REL)
        assert cal.GEMM_WIDTH_SCALE[gpu] == pytest.approx(width, rel=REL)


def test_b200_gemm_shape_is_the_hopper_one_scaled_by_xla_s_table_of_both_gpus():
    """B200's size terms are the Hopper ones times the factor fitted on XLA's measured 16-bit
    matmuls of both GPUs; a larger GEMM is needed to fill B200's faster tensor cores."""
    _, tokens, width = fit.fit_gemm_shape()
    ratio, scale = fit.fit_b200_shape(tokens, width)
    assert 2.0 < scale < 3.5
    assert cal.GEMM_TOKEN_SCALE["b200_192gb"] == pytest.approx(tokens * scale, rel=REL)
    assert cal.GEMM_WIDTH_SCALE["b200_192gb"] == pytest.approx(width * scale, rel=REL)


def test_b200_over_h100_fp8_efficiency_fitted_end_to_end_agrees_with_xla_s_large_gemm_ratio():
    """Two independent sources agree: the FP8 GEMM efficiencies fitted to NeMo's B200 and H100
    runs stand in the ratio XLA's table extrapolates for large GEMMs (within 5%)."""
    _, tokens, width = fit.fit_gemm_shape()
    ratio, _ = fit.fit_b200_shape(tokens, width)
    end_to_end = cal.FP8_GEMM_EFFICIENCY["b200_192gb"] / cal.FP8_GEMM_EFFICIENCY["h100_80gb"]
    assert end_to_end == pytest.approx(ratio, rel=0.05)


def test_attention_sequence_scale_is_the_flash_attention_3_fit():
    _, scale = fit.fit_attention_shape()
    for gpu in ("h100_80gb", "h800_80gb", "h200_141gb", "b200_192gb"):
        assert cal.ATTENTION_SEQ_SCALE[gpu] == pytest.approx(scale, rel=REL)


def test_modern_constants_are_the_end_to_end_fit():
    fitted = fit.fit_modern()
    for name, value, shipped in zip(fit.MODERN_NAMES, fitted, fit.shipped_modern()):
        assert shipped == pytest.approx(value, rel=REL), name


def test_sixteen_bit_gemm_efficiency_follows_from_fp8_by_the_measured_ratio():
    for gpu, fp8_of in (("h100_80gb", "h100_80gb"), ("h800_80gb", "h800_80gb"), ("h200_141gb", "h100_80gb"),
                        ("b200_192gb", "b200_192gb")):
        derived = fit.bf16_from_fp8(cal.FP8_GEMM_EFFICIENCY[fp8_of], gpu)
        assert cal.GEMM_EFFICIENCY[gpu] == pytest.approx(derived, rel=0.002), gpu


def test_h200_fp8_gemms_run_faster_than_h100_by_their_measured_best_matmul_and_16_bit_ones_do_not():
    ratio = fit.best_matmul_efficiency("h200_141gb", "fp8") / fit.best_matmul_efficiency("h100_80gb", "fp8")
    assert ratio == pytest.approx(1453.4 / 1402.6)
    assert cal.FP8_GEMM_EFFICIENCY["h200_141gb"] == pytest.approx(cal.FP8_GEMM_EFFICIENCY["h100_80gb"] * ratio,
                                                                  rel=0.002)
    assert fit.hopper_fp8(0.5, "h800_80gb") == 0.5   # no measured row: the H100 value
    assert cal.GEMM_EFFICIENCY["h200_141gb"] == cal.GEMM_EFFICIENCY["h100_80gb"]


def test_moe_alltoall_share_is_its_fit():
    assert cal.MOE_ALLTOALL_EXPOSED == pytest.approx(fit.fit_moe()[0], rel=REL)


def test_fits_leave_every_constant_as_it_was():
    before = {name: repr(getattr(cal, name)) for name in fit._TOUCHED}
    fit.fit_moe()
    assert {name: repr(getattr(cal, name)) for name in fit._TOUCHED} == before
