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
    for gpu in ("h100_80gb", "h800_80gb", "h200_141gb", "b200_192gb"):
        assert cal.GEMM_TOKEN_SCALE[gpu] == pytest.approx(tokens, rel=REL)
        assert cal.GEMM_WIDTH_SCALE[gpu] == pytest.approx(width, rel=REL)


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
