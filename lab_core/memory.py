"""Per-GPU memory of training state (weights, gradients, optimizer state).

Source: Rajbhandari et al., ZeRO, arXiv:1910.02054 Sec 3.1 and 5.1-5.3.
Mixed-precision Adam keeps 2 bytes of 16-bit weights, g bytes of gradients
(2 in ZeRO's accounting; 4 with Megatron's fp32 main gradients) and K = 12
bytes of fp32 master weights, momentum and variance per parameter: 16 or 18
bytes in all. Stage 1 shards the optimizer state over the Nd data-parallel
ranks, stage 2 also the gradients, stage 3 also the weights.
"""

WEIGHT_BYTES = 2.0
OPTIMIZER_BYTES = 12.0


def gradient_bytes_per_param(state_bytes_per_param):
    """2 (16-bit grads, ZeRO's 16 B/param) or 4 (fp32 main grads, Megatron's 18)."""
    return state_bytes_per_param - WEIGHT_BYTES - OPTIMIZER_BYTES


def model_state_parts(params, state_bytes_per_param=16, dp=1, zero_stage=0):
    """(weights, gradients, optimizer) bytes on one GPU holding `params` parameters.

    Source: arXiv:1910.02054 Sec 5.1-5.3: baseline (2 + 2 + K) Psi; P_os
    4 Psi + K Psi / Nd; P_os+g 2 Psi + (2 + K) Psi / Nd; P_os+g+p (2 + 2 + K) Psi / Nd.
    """
    weights = WEIGHT_BYTES * params
    grads = gradient_bytes_per_param(state_bytes_per_param) * params
    optimizer = OPTIMIZER_BYTES * params
    if zero_stage >= 1:
        optimizer /= dp
    if zero_stage >= 2:
        grads /= dp
    if zero_stage >= 3:
        weights /= dp
    return weights, grads, optimizer


def model_state_bytes_per_gpu(params, state_bytes_per_param=16, dp=1, zero_stage=0):
    """Bytes of weights + gradients + optimizer state held by one GPU.

    Source: arXiv:1910.02054 Sec 3.1 and 5.1-5.3 (see model_state_parts).
    Example (Fig 1): 7.5e9 params, Nd = 64 -> 120 / 31.4 / 16.6 / 1.9 GB.
    """
    weights, grads, optimizer = model_state_parts(params, state_bytes_per_param, dp, zero_stage)
    return weights + grads + optimizer
