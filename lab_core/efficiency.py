"""Achieved compute rates: how much of a device's peak a GEMM or an attention kernel reaches.

Constants and their sources: calibration.GEMM_EFFICIENCY, FP8_GEMM_EFFICIENCY,
GEMM_TOKEN_SCALE, GEMM_WIDTH_SCALE, ATTENTION_EFFICIENCY, ATTENTION_SEQ_SCALE,
ATTENTION_CAUSAL_TILE.
"""
from . import calibration as cal
from .attention import standard
from .hardware import GPU_PRESETS


def gemm_efficiency(device_id, precision, tokens, width):
    """Fraction of the format's dense peak a transformer GEMM reaches.

    tokens: rows of the GEMM on one GPU (b s / cp); width: its sharded
    dimension (h / t). Larger GEMMs fill the tensor cores better; the
    saturating form E / (1 + T0 / tokens + W0 / width) is a teaching
    assumption whose constants are fitted (calibration.py), with the floor
    gemm_rate describes: the same GEMM on a GPU the device outclasses, or in
    16 bits, as a fraction of this device's peak in `precision` (_floors). A
    floor is at most its peak ratio times its large-GEMM efficiency, so most
    are passed over on that bound alone.
    """
    token_scales, width_scales = cal.GEMM_TOKEN_SCALE, cal.GEMM_WIDTH_SCALE
    fp8 = precision == "fp8"
    best = (cal.FP8_GEMM_EFFICIENCY if fp8 else cal.GEMM_EFFICIENCY)[device_id] / (
        1.0 + token_scales[device_id] / tokens + width_scales[device_id] / width)
    floors = _FLOORS.get((device_id, fp8))
    if floors is None:
        floors = _floors(device_id, fp8)
    for other, other_fp8, ratio in floors:
        base = (cal.FP8_GEMM_EFFICIENCY if other_fp8 else cal.GEMM_EFFICIENCY)[other]
        if ratio * base > best:
            floor = ratio * (base / (1.0 + token_scales[other] / tokens + width_scales[other] / width))
            if floor > best:
                best = floor
    return best


# (device id, FP8?) -> the curves that floor its GEMMs: (GPU id, FP8?, that GPU's
# peak in that format / this one's in this format).
_FLOORS = {}


def _floors(device_id, fp8):
    """A 16-bit GEMM: the 16-bit curves of the GPUs the device outclasses. An FP8 GEMM:
    their FP8 curves (where they have FP8 tensor cores), their 16-bit curves and the
    device's own 16-bit curve: FP8 never runs slower than 16 bits."""
    device = GPU_PRESETS[device_id]
    others = outclassed_by(device)
    if not fp8:
        found = tuple((o.id, False, o.peak_flops / device.peak_flops) for o in others)
    else:
        peak = device.fp8_peak_flops
        found = (tuple((o.id, True, o.fp8_peak_flops / peak) for o in others if o.fp8_peak_flops)
                 + tuple((o.id, False, o.peak_flops / peak) for o in others + (device,)))
    _FLOORS[(device_id, fp8)] = found
    return found


def gemm_rate(device, precision, tokens, width):
    """Achieved FLOP/s of a transformer GEMM in `precision` on `device` (hardware.GpuSpec):
    its fitted curve, and never less than the same GEMM on a GPU it outclasses
    (outclassed_by), nor in FP8 less than in 16 bits on the same GPU.

    TEACHING ASSUMPTION (the floor). Each GPU's size dependence was fitted on
    different data (Hopper: DeepGEMM and XLA kernel tables; B200: XLA's ratio to
    the H100; A100: one size only, the 2021 runs, so none), and the curves cross
    on small GEMMs: a 128-row, 512-wide expert GEMM reached 70% of an A100's
    peak and 16% of an H100's, 218 against 154 TFLOP/s, so a fine-grained
    mixture of experts ran up to 41% faster on A100s than on H100s (8 of 300
    random plans), and a few ran slower on B200s than on H100s. A GPU with
    at least another's peak and memory bandwidth runs any kernel at least as
    fast; the floor keeps that true without refitting either curve.
    """
    peak = device.fp8_peak_flops if precision == "fp8" else device.peak_flops
    return peak * gemm_efficiency(device.id, precision, tokens, width)


def outclasses(device, other):
    """Whether `device` has at least `other`'s dense 16-bit and FP8 peaks (FP8: when
    `other` has FP8 tensor cores) and HBM bandwidth, and more of one of them: what a
    GEMM or an attention kernel runs on."""
    own = (device.peak_flops, device.fp8_peak_flops or 0.0, device.hbm_bytes_per_s)
    theirs = (other.peak_flops, other.fp8_peak_flops or 0.0, other.hbm_bytes_per_s)
    return own != theirs and all(mine >= their for mine, their in zip(own, theirs))


_OUTCLASSED = {}


def outclassed_by(device):
    """The presets `device` outclasses (outclasses), in preset order."""
    found = _OUTCLASSED.get(device.id)
    if found is None:
        found = _OUTCLASSED[device.id] = tuple(other for other in GPU_PRESETS.values() if outclasses(device, other))
    return found


def _fitted_attention_rate(device, tokens, causal):
    """FLOP/s of the flash-attention kernel by the device's own fitted curve (attention_rate)."""
    device_id = device.id
    efficiency = cal.ATTENTION_EFFICIENCY[device_id] / (1.0 + cal.ATTENTION_SEQ_SCALE[device_id] / tokens)
    if causal:
        efficiency /= 1.0 + cal.ATTENTION_CAUSAL_TILE / tokens
    return device.peak_flops * efficiency


def attention_rate(device, tokens, causal=True):
    """Achieved FLOP/s of a flash-attention kernel (16-bit) on `device`, counted
    on the FLOPs it must do (the causal half when causal).

    tokens: query tokens of one sequence on one GPU (s / cp). The kernel's
    rate saturates with the sequence (calibration.ATTENTION_SEQ_SCALE, fitted
    on FlashAttention-3's measured throughput); a causal kernel also computes
    the masked half of the tiles on the diagonal
    (calibration.ATTENTION_CAUSAL_TILE). Never less than on a GPU the device
    outclasses (the floor of gemm_rate: the A100's rate has no sequence
    dependence, so short sequences ran faster on it than on an H100).
    """
    rate = _fitted_attention_rate(device, tokens, causal)
    for other in outclassed_by(device):
        floor = _fitted_attention_rate(other, tokens, causal)
        if floor > rate:
            rate = floor
    return rate


def _attention_gemms(hidden, kv_ratio, tp, attention, fused_qkv):
    """(weights on one GPU, width) of the attention block's GEMMs (attention.AttentionShape.gemms)."""
    return (standard(hidden, kv_ratio) if attention is None else attention).gemms(hidden, tp, fused_qkv)


def layer_gemm_seconds(device, precision, tokens, hidden, ffn_hidden, kv_ratio, tp, attention=None, fused_qkv=True):
    """Forward seconds of one layer's GEMMs on one GPU, each at the rate of its own shape.

    The weight matrices of a layer (shape.layer_matrix_params): the
    attention block's (attention.AttentionShape.gemms: at the default shape
    the fused query/key/value projection h x (1 + 2r) h and the output
    projection h x h) and the MLP's two h x f matrices; tensor parallelism
    splits one dimension of each t ways (arXiv:1909.08053 Sec 3). A GEMM's
    width is its smaller weight dimension on the GPU (the output
    projection's is h / t). 2 FLOPs per weight per token. fused_qkv False:
    the full-rank query, key and value projections as three GEMMs
    (torchtitan; attention.AttentionShape.matrices).
    """
    gemms = _attention_gemms(hidden, kv_ratio, tp, attention, fused_qkv)
    gemms.append((2.0 * hidden * ffn_hidden / tp, min(hidden, ffn_hidden / tp)))
    return gemms_seconds(device, precision, tokens, gemms)


def gemms_seconds(device, precision, tokens, gemms):
    """Forward seconds of (weights on one GPU, width) GEMMs on `tokens` rows, each at its own rate."""
    total = 0.0
    for weights, width in gemms:
        # A loop, not sum(): Python 3.12 made sum() of floats compensated, and
        # CPython 3.11 and Pyodide must give the same last digit.
        total += 2.0 * tokens * weights / gemm_rate(device, precision, tokens, width)
    return total


def per_op_replayed_gemms(hidden, ffn_hidden, kv_ratio, tp, attention=None):
    """(weights on one GPU, width) of the GEMMs one layer replays under PyTorch's
    per-op selective checkpointing (stack.per_op_selective), in its backward.

    Source: torchtitan torchtitan/parallelisms/parallelize_llama.py (2024-12,
    _apply_ac_to_transformer_block; torchtitan/distributed/activation_checkpoint.py
    since), on torch.utils.checkpoint.create_selective_checkpoint_contexts: the
    policy counts the block's matrix multiplies (aten.mm) in call order and
    saves the outputs of the ops in its save list "except every second mm"; an
    op it does not save is recomputed when the backward needs it. A Llama
    block multiplies wq, wk, wv, wo (separate projections,
    attention.AttentionShape.matrices unfused), then its gated MLP's w1, w3
    and w2 (each h x the inner size, calibration.GATED_MLP_INNER_SHARE of
    ffn_hidden, the assumption activations.per_op_selective_bytes makes), so
    the 2nd, 4th and 6th are replayed: wk, wo and w3. Every matrix is needed:
    the kept attention output feeds wo, whose sum with the block input is the
    MLP norm's saved input; the keys feed the attention's backward; w3's
    output is an input of the gate's product.
    """
    gemms = _attention_gemms(hidden, kv_ratio, tp, attention, False)
    inner = cal.GATED_MLP_INNER_SHARE * ffn_hidden
    mlp = (hidden * inner / tp, min(hidden, inner / tp))
    gemms += [mlp, mlp, mlp]
    return gemms[1::2]


def moe_layer_gemm_seconds(device, precision, tokens, hidden, kv_ratio, tp, experts, ep, attention=None,
                           fused_qkv=True):
    """Forward seconds of one mixture-of-experts layer's GEMMs on one GPU.

    The attention projections as in a dense layer (layer_gemm_seconds), the
    router (h x E, on every token), the shared experts split by tensor
    parallelism like a dense MLP, and the routed experts: each token's k
    experts run as grouped GEMMs on the ranks that hold them, whole (expert
    tensor parallelism 1), on the tokens that rank's tensor-parallel slice
    dispatched (tokens / t each), ep x tokens x k / E rows per expert.
    """
    gemms = [(tokens, weights, width) for weights, width in _attention_gemms(hidden, kv_ratio, tp, attention, fused_qkv)]
    return _rows_seconds(device, precision, gemms + expert_gemms(tokens, hidden, tp, experts, ep))


def expert_gemms(tokens, hidden, tp, experts, ep, router=True, shared=True, routed=True):
    """(rows, weights, width[, rows per expert]) of a mixture-of-experts layer's MLP side
    (moe_layer_gemm_seconds): the router, the shared experts, the routed experts."""
    f = experts.ffn_hidden
    gemms = []
    if router:
        gemms.append((tokens / tp, hidden * experts.count, min(hidden, experts.count)))
    if shared and experts.shared:
        gemms.append((tokens, experts.shared * 2.0 * hidden * f / tp, min(hidden, f / tp)))
    if routed:
        rows_per_expert = ep * tokens / tp * experts.per_token / experts.count
        gemms.append((tokens / tp * experts.per_token, 2.0 * hidden * f, min(hidden, f), rows_per_expert))
    return gemms


def expert_gemm_seconds(device, precision, gemms):
    """Forward seconds of expert_gemms' GEMMs, each at the rate of its own shape."""
    return _rows_seconds(device, precision, gemms)


def _rows_seconds(device, precision, gemms):
    total = 0.0
    for gemm in gemms:
        rows, weights, width = gemm[0], gemm[1], gemm[2]
        shape_rows = gemm[3] if len(gemm) > 3 else rows
        total += 2.0 * rows * weights / gemm_rate(device, precision, shape_rows, width)
    return total
