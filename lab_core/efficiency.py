"""Achieved compute rates: how much of a device's peak a GEMM or an attention kernel reaches.

Constants and their sources: calibration.GEMM_EFFICIENCY, FP8_GEMM_EFFICIENCY,
GEMM_TOKEN_SCALE, GEMM_WIDTH_SCALE, ATTENTION_EFFICIENCY.
"""
from . import calibration as cal


def gemm_efficiency(device_id, precision, tokens, width):
    """Fraction of the format's dense peak a transformer GEMM reaches.

    tokens: rows of the GEMM on one GPU (b s / cp); width: its sharded
    dimension (h / t). Larger GEMMs fill the tensor cores better; the
    saturating form E / (1 + T0 / tokens + W0 / width) is a teaching
    assumption whose constants are fitted (calibration.py).
    """
    base = (cal.FP8_GEMM_EFFICIENCY if precision == "fp8" else cal.GEMM_EFFICIENCY)[device_id]
    return base / (1.0 + cal.GEMM_TOKEN_SCALE[device_id] / tokens + cal.GEMM_WIDTH_SCALE[device_id] / width)


def gemm_rate(device, precision, tokens, width):
    """Achieved FLOP/s of a transformer GEMM in `precision` on `device` (hardware.GpuSpec)."""
    peak = device.fp8_peak_flops if precision == "fp8" else device.peak_flops
    return peak * gemm_efficiency(device.id, precision, tokens, width)


def attention_rate(device):
    """Achieved FLOP/s of a flash-attention kernel (16-bit) on `device`."""
    return device.peak_flops * cal.ATTENTION_EFFICIENCY[device.id]
