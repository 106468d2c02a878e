"""Per-GPU memory of training state."""


def model_state_bytes_per_gpu(params, state_bytes_per_param=16, dp=1, zero_stage=0):
    """Bytes of weights + gradients + optimizer state held by one GPU.

    Source: Rajbhandari et al., ZeRO, arXiv:1910.02054 §3.1 and §5.1–5.3: mixed
    precision Adam keeps 2Ψ (fp16 weights) + 2Ψ (fp16 grads) + KΨ (K = 12: fp32
    weights, momentum, variance) bytes; stage 1 shards the KΨ, stage 2 also the
    grads, stage 3 also the weights, over the Nd data-parallel ranks.
    """
    weights = 2.0 * params
    grads = 2.0 * params
    optimizer = (state_bytes_per_param - 4.0) * params
    if zero_stage >= 1:
        optimizer /= dp
    if zero_stage >= 2:
        grads /= dp
    if zero_stage >= 3:
        weights /= dp
    return weights + grads + optimizer
