"""Reproduce the modern-stack calibration of lab_core/calibration.py.

Three least-squares fits, each on the published figures it names (every other
row of content/validation/end_to_end.yaml stays out of sample):

1. GEMM shape: GEMM_TOKEN_SCALE and GEMM_WIDTH_SCALE from DeepGEMM's FP8 GEMM
   throughput on H800 at M = 128 and 4,096 rows (content/validation/gemm_measurements.yaml;
   two row counts so the token scale is identified; the M = 64 rows are memory-bound).
   B200's scales are those times the factor by which its size terms exceed the
   H100's in XLA's 16-bit matmul table of both GPUs (fit_b200_shape).
2. Attention shape: ATTENTION_SEQ_SCALE from FlashAttention-3's forward
   throughput on H100 by sequence length (the same file).
3. Modern runs: FP8_GEMM_EFFICIENCY (Hopper, B200), ATTENTION_EFFICIENCY,
   COMM_CONTENTION and the torch_native stack's factors on the groups in
   END_TO_END_GROUPS; the 16-bit GEMM efficiency follows from the FP8 one by
   the measured best-matmul ratio of the same GPU (bf16_from_fp8).
4. Mixture of experts: MOE_ALLTOALL_EXPOSED on MOE_GROUPS.

Each fit minimises squared log errors (scipy.optimize.least_squares). Run:
python -m labtools.fit_modern_stack   (prints fitted next to shipped values)
"""
import math
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import least_squares

from lab_core import calibration as cal
from labsite.validation import end_to_end_runs

ROOT = Path(__file__).resolve().parents[1]
GEMM_MEASUREMENTS = ROOT / "content" / "validation" / "gemm_measurements.yaml"
END_TO_END_GROUPS = ("nemo_h100_fp8", "nemo_b200_fp8", "nemo_longseq_h100", "llmfoundry_h100")
MOE_GROUPS = ("moe_mbridge_h100",)
HOPPER = ("h100_80gb", "h100_96gb_500w", "h800_80gb", "h200_141gb")
SHAPE_MIN_ROWS = 128


def measurements():
    with open(GEMM_MEASUREMENTS, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def best_matmul_efficiency(gpu, precision):
    for row in measurements()["best_achievable_matmul"]["rows"]:
        if row["gpu"] == gpu and row["precision"] == precision:
            return row["tflops"] / row["peak_tflops"]
    raise KeyError((gpu, precision))


def bf16_from_fp8(fp8, gpu):
    """16-bit GEMM efficiency of a GPU from its FP8 one and their measured best-matmul ratio
    (Hopper parts: the H100's FP8 value and ratio; the table's H100 16-bit row says "H200 is the same")."""
    source = "h100_80gb" if gpu in HOPPER else gpu
    return fp8 * best_matmul_efficiency(source, "bf16") / best_matmul_efficiency(source, "fp8")


def hopper_fp8(fp8, gpu):
    """FP8 GEMM efficiency of a Hopper part from the fitted H100 value: scaled by the part's
    measured best FP8 matmul over the H100's where the table has one (H200: 73.4% vs 70.9%)."""
    try:
        return fp8 * best_matmul_efficiency(gpu, "fp8") / best_matmul_efficiency("h100_80gb", "fp8")
    except KeyError:
        return fp8


def fit_gemm_shape():
    """(efficiency, token scale, width scale) of E / (1 + T0 / m + W0 / min(n, k))."""
    table = measurements()["deepgemm_h800_fp8"]
    rows = [r for r in table["rows"] if r["m"] >= SHAPE_MIN_ROWS]
    m = np.array([r["m"] for r in rows], float)
    width = np.array([min(r["n"], r["k"]) for r in rows], float)
    measured = np.array([r["tflops"] for r in rows], float) / table["peak_tflops"]

    def residuals(x):
        return np.log(x[0] / (1.0 + x[1] / m + x[2] / width) / measured)

    return least_squares(residuals, [0.8, 100.0, 500.0], bounds=([0.1, 0.0, 0.0], [1.0, 1e5, 1e5])).x


def fit_b200_shape(token_scale, width_scale):
    """(efficiency ratio, scale factor) of B200 against H100 in XLA's matmul table:
    each shape's measured B200 / H100 efficiency as r (1 + T0/m + W0/w) / (1 + s T0/m + s W0/w),
    T0 and W0 the H100's scales (from fit_gemm_shape), w = min(n, k). One harness measured both
    GPUs, so its own offsets cancel in the ratio; B200's size terms are s times the H100's."""
    table = measurements()["xla_matmul_bf16"]
    peak = table["peak_tflops"]
    rows = table["rows"]
    m = np.array([r["m"] for r in rows], float)
    width = np.array([min(r["n"], r["k"]) for r in rows], float)
    measured = np.array([(r["b200"] / peak["b200_192gb"]) / (r["h100"] / peak["h100_80gb"]) for r in rows])
    hopper = 1.0 + token_scale / m + width_scale / width

    def residuals(x):
        return np.log(x[0] * hopper / (1.0 + x[1] * (token_scale / m + width_scale / width)) / measured)

    return least_squares(residuals, [1.0, 2.0], bounds=([0.1, 0.1], [3.0, 20.0])).x


def fit_attention_shape():
    """(efficiency, sequence scale) of E / (1 + S0 / sequence) on FlashAttention-3's table."""
    table = measurements()["flash_attention3_h100_bf16"]
    seq = np.array([r["seq"] for r in table["rows"]], float)
    measured = np.array([r["tflops"] for r in table["rows"]], float) / table["peak_tflops"]

    def residuals(x):
        return np.log(x[0] / (1.0 + x[1] / seq) / measured)

    return least_squares(residuals, [0.6, 200.0], bounds=([0.1, 0.0], [1.0, 1e5])).x


def _set_modern(x):
    fp8, b200_fp8, attention, contention, native_compute, native_attention = x
    for gpu in HOPPER:
        cal.FP8_GEMM_EFFICIENCY[gpu] = hopper_fp8(fp8, gpu)
        cal.GEMM_EFFICIENCY[gpu] = bf16_from_fp8(fp8, gpu)
        cal.ATTENTION_EFFICIENCY[gpu] = attention
    cal.FP8_GEMM_EFFICIENCY["b200_192gb"] = b200_fp8
    cal.GEMM_EFFICIENCY["b200_192gb"] = bf16_from_fp8(b200_fp8, "b200_192gb")
    cal.ATTENTION_EFFICIENCY["b200_192gb"] = attention
    cal.COMM_CONTENTION = contention
    cal.STACK_COMPUTE_EFFICIENCY["torch_native"] = native_compute
    cal.STACK_ATTENTION_EFFICIENCY["torch_native"] = native_attention


MODERN_NAMES = ("FP8_GEMM_EFFICIENCY[h100]", "FP8_GEMM_EFFICIENCY[b200]", "ATTENTION_EFFICIENCY",
                "COMM_CONTENTION", "STACK_COMPUTE_EFFICIENCY[torch_native]",
                "STACK_ATTENTION_EFFICIENCY[torch_native]")


def shipped_modern():
    return (cal.FP8_GEMM_EFFICIENCY["h100_80gb"], cal.FP8_GEMM_EFFICIENCY["b200_192gb"],
            cal.ATTENTION_EFFICIENCY["h100_80gb"], cal.COMM_CONTENTION,
            cal.STACK_COMPUTE_EFFICIENCY["torch_native"], cal.STACK_ATTENTION_EFFICIENCY["torch_native"])


def _log_errors(runs):
    return np.array([math.log(run.predicted() / run.published) for run in runs])


_TOUCHED = ("FP8_GEMM_EFFICIENCY", "GEMM_EFFICIENCY", "ATTENTION_EFFICIENCY", "COMM_CONTENTION",
            "STACK_COMPUTE_EFFICIENCY", "STACK_ATTENTION_EFFICIENCY", "MOE_ALLTOALL_EXPOSED")


def _fit(runs, setter, start, lower, upper):
    """Least squares over `setter`'s constants; every constant is restored
    exactly afterwards (other code in the process reads them)."""
    saved = {name: (dict(value) if isinstance(value, dict) else value)
             for name, value in ((n, getattr(cal, n)) for n in _TOUCHED)}
    try:
        return least_squares(lambda x: (setter(x), _log_errors(runs))[1], start, bounds=(lower, upper)).x
    finally:
        for name, value in saved.items():
            if isinstance(value, dict):
                getattr(cal, name).clear()
                getattr(cal, name).update(value)
            else:
                setattr(cal, name, value)


def fit_modern(runs=None):
    """The modern-stack constants fitted to END_TO_END_GROUPS (in MODERN_NAMES order)."""
    runs = [r for r in (runs or end_to_end_runs()) if r.group["id"] in END_TO_END_GROUPS]
    return _fit(runs, _set_modern, shipped_modern(), [0.1, 0.1, 0.1, 0.0, 0.3, 0.1], [1.0, 1.0, 1.0, 1.0, 1.5, 1.5])


def fit_moe(runs=None):
    """MOE_ALLTOALL_EXPOSED fitted to MOE_GROUPS."""
    runs = [r for r in (runs or end_to_end_runs()) if r.group["id"] in MOE_GROUPS]

    def setter(x):
        cal.MOE_ALLTOALL_EXPOSED = x[0]

    return _fit(runs, setter, [cal.MOE_ALLTOALL_EXPOSED], [0.0], [1.0])


def main():
    efficiency, tokens, width = fit_gemm_shape()
    print(f"GEMM shape (DeepGEMM H800 FP8, M >= {SHAPE_MIN_ROWS}): E {efficiency:.3f}, "
          f"GEMM_TOKEN_SCALE {tokens:.0f} (shipped {cal.GEMM_TOKEN_SCALE['h100_80gb']:.0f}), "
          f"GEMM_WIDTH_SCALE {width:.0f} (shipped {cal.GEMM_WIDTH_SCALE['h100_80gb']:.0f})")
    ratio, scale = fit_b200_shape(tokens, width)
    print(f"B200 against H100 (XLA's 16-bit matmul table): size terms x{scale:.2f}, large-GEMM efficiency "
          f"x{ratio:.3f}; GEMM_TOKEN_SCALE {tokens * scale:.0f} (shipped {cal.GEMM_TOKEN_SCALE['b200_192gb']:.0f}), "
          f"GEMM_WIDTH_SCALE {width * scale:.0f} (shipped {cal.GEMM_WIDTH_SCALE['b200_192gb']:.0f})")
    _, seq_scale = fit_attention_shape()
    print(f"Attention shape (FlashAttention-3 H100 forward): ATTENTION_SEQ_SCALE {seq_scale:.0f} "
          f"(shipped {cal.ATTENTION_SEQ_SCALE['h100_80gb']:.0f})")
    print("Modern runs (" + ", ".join(END_TO_END_GROUPS) + "):")
    for name, fitted, shipped in zip(MODERN_NAMES, fit_modern(), shipped_modern()):
        print(f"  {name:42s} fitted {fitted:.3f}  shipped {shipped:.3f}")
    for gpu in ("h100_80gb", "b200_192gb"):
        print(f"  GEMM_EFFICIENCY[{gpu}] from the FP8 value: {bf16_from_fp8(cal.FP8_GEMM_EFFICIENCY[gpu], gpu):.3f}"
              f" (shipped {cal.GEMM_EFFICIENCY[gpu]:.3f})")
    print(f"  FP8_GEMM_EFFICIENCY[h200_141gb] from the H100 value: "
          f"{hopper_fp8(cal.FP8_GEMM_EFFICIENCY['h100_80gb'], 'h200_141gb'):.3f}"
          f" (shipped {cal.FP8_GEMM_EFFICIENCY['h200_141gb']:.3f})")
    print(f"MoE ({', '.join(MOE_GROUPS)}): MOE_ALLTOALL_EXPOSED fitted {fit_moe()[0]:.3f}"
          f"  shipped {cal.MOE_ALLTOALL_EXPOSED:.3f}")


if __name__ == "__main__":
    main()
