"""Chapter Memory and compute of one GPU: its numbers, every one computed by lab_core."""
from lab_core import activations, flops, memory

from .common import Chapter, GB, ZERO_STATE_BYTES, chapter, default, evaluate


@chapter("memory")
def memory_chapter():
    # ZeRO's accounting (16 bytes per parameter), as the chapter explains it.
    state_per_param = ZERO_STATE_BYTES
    example = dict(params=6.7e9, gpus=1, seq_len=2048, global_batch_tokens=2048 * 8,
                   state_bytes_per_param=state_per_param)
    w, r = evaluate(example, micro_batch=1)
    grad = memory.gradient_bytes_per_param(state_per_param)
    lab_state = default("state_bytes_per_param")
    shape = w.shape
    s, h, a, L, V, f = w.seq_len, shape.hidden, shape.heads, shape.layers, shape.vocab, shape.ffn_hidden
    no_flash = activations.per_layer_bytes(s, 1, h, a)
    with_flash = activations.per_layer_bytes(s, 1, h, a, flash_attention=True)
    per_token = flops.model_flops(1, s, L, h, V, f) / s
    gemm, attn = flops.layer_forward_flops(1, s, h, f)
    attention_share = 3.0 * L * attn / flops.model_flops(1, s, L, h, V, f)
    long_s = 32768
    g_long, a_long = flops.layer_forward_flops(1, long_s, h, f)
    attention_share_long = 3.0 * L * a_long / flops.model_flops(1, long_s, L, h, V, f)
    values = {
        "params": (shape.params, "params"),
        "layers": (L, "count"),
        "hidden": (h, "count"),
        "heads": (a, "count"),
        "seq": (s, "count"),
        "state_per_param": (state_per_param, "count"),
        "lab_state": (lab_state, "count"),
        "lab_grad_bytes": (memory.gradient_bytes_per_param(lab_state), "count"),
        "weight_bytes": (memory.WEIGHT_BYTES, "count"),
        "grad_bytes": (grad, "count"),
        "optimizer_bytes": (memory.OPTIMIZER_BYTES, "count"),
        "weights": (r.weights_bytes, "bytes"),
        "gradients": (r.gradients_bytes, "bytes"),
        "optimizer": (r.optimizer_bytes, "bytes"),
        "state": (r.weights_bytes + r.gradients_bytes + r.optimizer_bytes, "bytes"),
        "activations": (r.activations_bytes, "bytes"),
        "total": (r.memory_bytes, "bytes"),
        "device": (r.device_bytes, "bytes"),
        "ratio": (r.memory_ratio, "plain"),
        "max_params": (r.device_bytes / state_per_param, "params"),
        "act_layer_plain": (no_flash, "bytes"),
        "act_layer_flash": (with_flash, "bytes"),
        "scores_share": (1.0 - with_flash / no_flash, "percent"),
        "flops_per_token": (per_token, "sci"),
        "six_n": (6.0 * shape.params, "sci"),
        "attention_share": (attention_share, "percent"),
        "long_seq": (long_s, "count"),
        "attention_share_long": (attention_share_long, "percent"),
        "training_tokens": (w.training_tokens, "scaled"),
        "achieved": (r.model_flops_per_s_per_gpu, "flops"),
        "mfu": (r.mfu, "percent"),
        "one_gpu_days": (r.train_time_s / 86400.0, "count"),
        "one_gpu_years": (r.train_time_s / (365.0 * 86400.0), "plain"),
    }
    sizes = (350e6, 1.3e9, 2.7e9, 6.7e9, 13e9)
    bars = {"weights": [], "gradients": [], "optimizer": [], "activations": []}
    categories = []
    for params in sizes:
        _, rr = evaluate(dict(example, params=params), micro_batch=1)
        bars["weights"].append(rr.weights_bytes / GB)
        bars["gradients"].append(rr.gradients_bytes / GB)
        bars["optimizer"].append(rr.optimizer_bytes / GB)
        bars["activations"].append(rr.activations_bytes / GB)
        categories.append((params, "params"))
    chart = {
        "type": "stacked", "id": "memory", "categories": categories,
        "segments": [(key, bars[key]) for key in ("weights", "gradients", "optimizer", "activations")],
        "reference": (r.device_bytes / GB, {"device": (r.device_bytes, "bytes")}),
        "text_values": {"seq": (s, "count")},
    }
    return Chapter(values, example, [chart])
