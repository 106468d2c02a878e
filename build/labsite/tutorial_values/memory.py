"""Chapter Memory and compute of one GPU: its numbers, every one computed by lab_core."""
import dataclasses

from lab_core import activations, flops, memory
from lab_core.context import context_for
from lab_core.hardware import GPU_PRESETS

from ..reference import gpt3_workload, scenario_workload
from ..scenarios import load_scenario
from .common import GB, GPT3_GPUS, GPT3_LAYOUT, ZERO_STATE_BYTES, Chapter, case, chapter, default, evaluate, exercise

#: Chinchilla: 70B parameters trained on 1.4T tokens, the compute-optimal pair of
#: Hoffmann et al. (arXiv:2203.15556 Table 3 / §4); their ratio is the token budget rule.
CHINCHILLA = (70e9, 1.4e12)
LONG_SEQ = 32768
#: A Llama-3-8B-like model (arXiv:2407.21783 Table 3) on one H100 node, for the FP8 comparison.
LLAMA8 = dict(params=8e9, gpus=8, seq_len=8192, global_batch_tokens=4 * 1048576, gpu="h100_80gb", layers=32,
              hidden=4096, heads=32, kv_heads=8, ffn_hidden=21504, vocab=128256, dropout=False)


def _state(values, w, r, state_per_param):
    lab_state = default("state_bytes_per_param")
    values.update({
        "params": (w.shape.params, "params"), "layers": (w.shape.layers, "count"), "hidden": (w.shape.hidden, "count"),
        "heads": (w.shape.heads, "count"), "seq": (w.seq_len, "count"),
        "state_per_param": (state_per_param, "count"), "lab_state": (lab_state, "count"),
        "lab_grad_bytes": (memory.gradient_bytes_per_param(lab_state), "count"),
        "weight_bytes": (memory.WEIGHT_BYTES, "count"),
        "grad_bytes": (memory.gradient_bytes_per_param(state_per_param), "count"),
        "optimizer_bytes": (memory.OPTIMIZER_BYTES, "count"),
        "weights": (r.weights_bytes, "bytes"), "gradients": (r.gradients_bytes, "bytes"),
        "optimizer": (r.optimizer_bytes, "bytes"),
        "state": (r.weights_bytes + r.gradients_bytes + r.optimizer_bytes, "bytes"),
        "activations": (r.activations_bytes, "bytes"), "total": (r.memory_bytes, "bytes"),
        "device": (r.device_bytes, "bytes"), "ratio": (r.memory_ratio, "plain"),
        "max_params": (r.device_bytes / state_per_param, "params"),
        "optimizer_share": (r.optimizer_bytes / (r.weights_bytes + r.gradients_bytes + r.optimizer_bytes), "percent"),
    })


def _activations(values, w):
    shape = w.shape
    s, h, a = w.seq_len, shape.hidden, shape.heads
    no_flash = activations.per_layer_bytes(s, 1, h, a)
    with_flash = activations.per_layer_bytes(s, 1, h, a, flash_attention=True)
    values.update({"act_layer_plain": (no_flash, "bytes"), "act_layer_flash": (with_flash, "bytes"),
                   "scores_share": (1.0 - with_flash / no_flash, "percent")})


def _compute(values, w, r):
    shape = w.shape
    s, h, L, V, f = w.seq_len, shape.hidden, shape.layers, shape.vocab, shape.ffn_hidden
    per_token = flops.model_flops(1, s, L, h, V, f) / s
    _, attn = flops.layer_forward_flops(1, s, h, f)
    _, attn_long = flops.layer_forward_flops(1, LONG_SEQ, h, f)
    values.update({
        "flops_per_token": (per_token, "sci"), "six_n": (6.0 * shape.params, "sci"),
        "attention_share": (3.0 * L * attn / flops.model_flops(1, s, L, h, V, f), "percent"),
        "long_seq": (LONG_SEQ, "count"),
        "attention_share_long": (3.0 * L * attn_long / flops.model_flops(1, LONG_SEQ, L, h, V, f), "percent"),
        "training_tokens": (w.training_tokens, "scaled"), "achieved": (r.model_flops_per_s_per_gpu, "flops"),
        "mfu": (r.mfu, "percent"), "one_gpu_days": (r.train_time_s / 86400.0, "count"),
        "one_gpu_years": (r.train_time_s / (365.0 * 86400.0), "plain"),
    })


def _precision(values):
    """bf16 against FP8 on one H100 node, the same layout: what FP8 buys and what it does not."""
    h100 = GPU_PRESETS["h100_80gb"]
    layout = dict(dp=LLAMA8["gpus"], zero=2)
    w, bf16 = evaluate(dict(LLAMA8, precision="bf16"), **layout)
    _, fp8 = evaluate(dict(LLAMA8, precision="fp8"), **layout)
    speedup = bf16.step_s / fp8.step_s
    peak_ratio = h100.fp8_peak_flops / h100.peak_flops
    values.update({
        "p_params": (w.shape.params, "params"), "p_gpus": (w.gpus, "count"),
        "bf16_peak": (h100.peak_flops, "flops"), "fp8_peak": (h100.fp8_peak_flops, "flops"),
        "peak_ratio": (peak_ratio, "plain"),
        "bf16_step": (bf16.step_s, "duration"), "fp8_step": (fp8.step_s, "duration"),
        "fp8_speedup": (speedup, "plain"),
        "bf16_mfu": (bf16.mfu, "percent"), "fp8_mfu": (fp8.mfu, "percent"),
        "fp8_mfu_of_fp8_peak": (fp8.mfu / peak_ratio, "percent"),
        "bf16_state": (bf16.weights_bytes + bf16.gradients_bytes + bf16.optimizer_bytes, "bytes"),
        "fp8_state": (fp8.weights_bytes + fp8.gradients_bytes + fp8.optimizer_bytes, "bytes"),
        "bf16_act": (bf16.activations_bytes, "bytes"), "fp8_act": (fp8.activations_bytes, "bytes"),
        "fp8_verdict": case("below_peak" if speedup < 0.9 * peak_ratio else "near_peak", "below_peak", "near_peak"),
    })


def _shapes(values):
    """Llama 3 405B's parameters counted from its shape (its scenario file): GQA and SwiGLU."""
    w = scenario_workload("llama3-405b")
    shape = w.shape
    h, r, f = shape.hidden, shape.kv_ratio, shape.ffn_hidden
    attention = (2.0 + 2.0 * r) * h * h
    mlp = 2.0 * h * f
    values.update({
        "l_hidden": (h, "count"), "l_layers": (shape.layers, "count"), "l_heads": (shape.heads, "count"),
        "l_kv": (shape.kv_heads, "count"), "l_inner": (f / 1.5, "count"), "l_vocab": (shape.vocab, "count"),
        "l_attention": (attention, "params"), "l_attention_mha": (4.0 * h * h, "params"),
        "l_mlp": (mlp, "params"), "l_layer": (shape.layer_params, "params"),
        "l_layers_total": (shape.layers * shape.layer_params, "params"),
        "l_embedding": (shape.vocab * h, "params"), "l_total": (shape.params, "params"),
        "l_untied": (shape.params + shape.vocab * h, "params"),
        "l_gqa_saving": (1.0 - attention / (4.0 * h * h), "percent"),
        "l_mlp_share": (mlp / shape.layer_params, "percent"),
    })
    # The logits: fp32 over the vocabulary, for one sequence, against one layer's activations; the lab's count
    # is the output layer's input and the logits and loss buffers at the workload's stack's bytes per logit.
    s = w.seq_len
    per_logit = context_for(w).loss_bytes_per_logit[0]
    logits = activations.output_input_bytes(s, 1, h, 1) + activations.loss_bytes(s, 1, shape.vocab, 1, per_logit)
    layer = activations.per_layer_bytes(s, 1, h, shape.heads, 1, False, "none", True, f, r, False)
    values.update({
        "l_seq": (s, "count"), "logits": (logits, "bytes"), "logits_only": (4.0 * s * shape.vocab, "bytes"),
        "l_per_logit": (per_logit, "count"),
        "l_layer_act": (layer, "bytes"), "logits_over_layer": (logits / layer, "plain"),
        "logits_verdict": case("bigger" if logits > layer else "smaller", "bigger", "smaller"),
    })
    # What other stacks keep at the loss's peak for the same sequence (one GPU per vocabulary):
    # torchtitan's eager loss, and the same loss under torch.compile (Workload.compiled_loss).
    for key, overrides in (("eager", {"stack": "torch_native"}),
                           ("compiled", {"stack": "torch_native", "compiled_loss": True})):
        bytes_per_logit = context_for(dataclasses.replace(w, **overrides)).loss_bytes_per_logit[0]
        values[f"l_{key}_per_logit"] = (bytes_per_logit, "count")
        values[f"l_{key}_loss"] = (activations.loss_bytes(s, 1, shape.vocab, 1, bytes_per_logit), "bytes")


def _mfu(values):
    """PaLM's MFU and HFU on one run: GPT-3 in Narayanan et al.'s layout (full recompute)."""
    w, r = evaluate(gpt3_workload(gpus=GPT3_GPUS, stack="megatron_lm_2021"),
                    **dict(GPT3_LAYOUT, recompute="full", sequence_parallel=False))
    _, rs = evaluate(gpt3_workload(gpus=GPT3_GPUS, stack="megatron_lm_2021"), **GPT3_LAYOUT)
    values.update({
        "g_params": (w.shape.params, "params"), "g_gpus": (w.gpus, "count"),
        "g_mfu": (r.mfu, "percent"), "g_hfu": (r.hfu, "percent"),
        "g_flops_ratio": (r.hardware_flops_per_step / r.model_flops_per_step, "plain"),
        "g_achieved": (r.model_flops_per_s_per_gpu, "flops"),
        "g_hw_achieved": (r.model_flops_per_s_per_gpu * r.hardware_flops_per_step / r.model_flops_per_step, "flops"),
        "g_sel_mfu": (rs.mfu, "percent"), "g_sel_hfu": (rs.hfu, "percent"),
        "a100_peak": (GPU_PRESETS["a100_80gb"].peak_flops, "flops"),
        "g_gap_verdict": case("large" if r.hfu > 1.1 * r.mfu else "small", "large", "small"),
        "g_sel_verdict": case("meets" if rs.hfu < 1.05 * rs.mfu else "above", "meets", "above"),
    })


def _tokens(values, w):
    ratio = CHINCHILLA[1] / CHINCHILLA[0]
    scenario = load_scenario("llama3-405b")
    lw = scenario.workload_object()
    lr = evaluate(scenario.workload, **scenario.parallelism)[1]
    per_token = lr.model_flops_per_step / lr.tokens_per_step
    values.update({
        "chinchilla_ratio": (ratio, "plain"),
        "optimal_tokens": (ratio * w.shape.params, "scaled"),
        "l_tokens": (lw.training_tokens, "scaled"),
        "l_ratio": (lw.training_tokens / lw.shape.params, "plain"),
        "l_optimal": (ratio * lw.shape.params, "scaled"),
        "l_flops": (per_token * lw.training_tokens, "sci"),
        "l_gpus": (lw.gpus, "count"), "l_mfu": (lr.mfu, "percent"),
        "l_days": (lr.train_time_s / 86400.0, "count"),
        "budget_verdict": case("beyond" if lw.training_tokens > ratio * lw.shape.params else "within",
                               "beyond", "within"),
    })


def _exercises(values):
    big = exercise("memory", "thirteen-b")
    values["ex_big_params"] = (big.workload.shape.params, "params")
    values["ex_big_state"] = (big.workload.shape.params * big.workload.state_bytes_per_param, "bytes")
    values["ex_big_mem"] = (big.report.memory_bytes, "bytes")
    values["ex_big_device"] = (big.report.device_bytes, "bytes")
    values["ex_big_fits"] = case("fits" if big.plan.fits else "no_fit", "fits", "no_fit")
    values["ex_big_recompute"] = case(big.layout.recompute, "none", "selective", "full")
    fp8 = exercise("memory", "fp8")
    layout = fp8.layout.to_dict()
    _, bf16 = evaluate(dict(fp8.inputs, precision="bf16"), **layout)
    values.update({"ex_fp8_step": (fp8.report.step_s, "duration"), "ex_fp8_bf16_step": (bf16.step_s, "duration"),
                   "ex_fp8_speedup": (bf16.step_s / fp8.report.step_s, "plain"),
                   "ex_fp8_mfu": (fp8.report.mfu, "percent"), "ex_fp8_mem": (fp8.report.memory_bytes, "bytes"),
                   "ex_fp8_bf16_mem": (bf16.memory_bytes, "bytes")})
    vocab = exercise("memory", "small-vocab")
    _, full = evaluate(dict(vocab.inputs, vocab=LLAMA8["vocab"]), **vocab.layout.to_dict())
    values.update({"ex_vocab": (vocab.workload.shape.vocab, "count"), "ex_vocab_full": (LLAMA8["vocab"], "count"),
                   "ex_vocab_mem": (vocab.report.memory_bytes, "bytes"), "ex_vocab_full_mem": (full.memory_bytes, "bytes"),
                   "ex_vocab_params": (vocab.workload.shape.params, "params"),
                   "ex_vocab_full_params": (full.shape.params, "params"),
                   "ex_vocab_step": (vocab.report.step_s, "duration"), "ex_vocab_full_step": (full.step_s, "duration")})


@chapter("memory")
def memory_chapter():
    # ZeRO's accounting (16 bytes per parameter), as the chapter explains it.
    state_per_param = ZERO_STATE_BYTES
    example = dict(params=6.7e9, gpus=1, seq_len=2048, global_batch_tokens=2048 * 8,
                   state_bytes_per_param=state_per_param)
    w, r = evaluate(example, micro_batch=1)
    values = {}
    _state(values, w, r, state_per_param)
    _activations(values, w)
    _compute(values, w, r)
    _precision(values)
    _shapes(values)
    _mfu(values)
    _tokens(values, w)
    _exercises(values)
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
        "text_values": {"seq": (w.seq_len, "count")},
    }
    figures = {"state": {"params": w.shape.params, "accountings": (state_per_param, default("state_bytes_per_param"))}}
    return Chapter(values, example, [chart], figures)
