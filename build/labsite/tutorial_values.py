"""The numbers of the tutorial: every one computed by lab_core at build time.

One function per chapter (named by the chapter id in content/tutorial/*.yaml)
returns a ``Chapter``:

- ``values``: ``{placeholder: (value, kind)}``; the chapter's prose uses
  ``{placeholder}`` and the page formats the value per language with
  lab_view.format_quantity (kinds as in lab_view.quantities).
- ``workload``: the lab inputs of the chapter's running example (names as in
  lab_core.inputs); the "try it in the lab" link carries them in its query.
- ``charts``: chart specs drawn by build/labsite/charts.py; their texts live
  in the catalogs (``tutorial.charts.<chart id>``), their data come from
  lab_core sweeps here.

The only numbers typed in this file are inputs (model sizes, GPU counts, the
sweep ranges) — the outputs are all lab_core's.
"""
from dataclasses import dataclass, field
from functools import cache

import lab_core
from lab_core import activations, calibration as cal, comms, failures, flops, memory, pipeline
from lab_core.hardware import GPU_PRESETS
from lab_core.planner import recommend
from lab_core.inputs import SPEC_BY_NAME
from lab_core.context import context_for
from lab_core.timing import layer_times

from .reference import gpt3, gpt3_workload
from .validation import llama3_effective_time, load_facts
from .validation.recovery import LLAMA3_WORKLOAD

GB = 1e9


@dataclass
class Chapter:
    values: dict
    workload: dict
    charts: list = field(default_factory=list)


def _evaluate(workload, **layout):
    w = lab_core.Workload(**workload)
    return w, lab_core.evaluate(w, lab_core.Parallelism(**layout))


def _default(name):
    return SPEC_BY_NAME[name].default


# Chapters 1 and 3 follow the ZeRO paper's accounting (arXiv:1910.02054 Sec 3.1):
# 16-bit gradients, 16 bytes of state per parameter.
ZERO_STATE_BYTES = 16


# GPT-3 175B (its scenario file) on 1,024 GPUs, as in arXiv:2104.04473 Table 1 /
# arXiv:2205.05198 Table 3.
GPT3_GPUS = 1024
GPT3_LAYOUT = dict(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1)


# --- 1. Memory and compute of one GPU -------------------------------------------

def memory_chapter():
    # ZeRO's accounting (16 bytes per parameter), as the chapter explains it.
    state_per_param = ZERO_STATE_BYTES
    example = dict(params=6.7e9, gpus=1, seq_len=2048, global_batch_tokens=2048 * 8,
                   state_bytes_per_param=state_per_param)
    w, r = _evaluate(example, micro_batch=1)
    grad = memory.gradient_bytes_per_param(state_per_param)
    lab_state = _default("state_bytes_per_param")
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
        _, rr = _evaluate(dict(example, params=params), micro_batch=1)
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


# --- 2. Data parallelism and all-reduce ------------------------------------------

def data_parallel_chapter():
    example = dict(params=1.3e9, gpus=64, seq_len=2048, global_batch_tokens=1048576, inter_node_gbps=200)
    w, r = _evaluate(example, dp=64)
    n = w.gpus
    grads = r.params_per_gpu * memory.gradient_bytes_per_param(w.state_bytes_per_param)
    slow = dict(example, inter_node_gbps=25)
    _, r_slow = _evaluate(slow, dp=64)
    small = dict(example, global_batch_tokens=262144)
    _, r_small = _evaluate(small, dp=64)
    nic = example["inter_node_gbps"] * 1e9 / 8.0 * cal.INTER_NODE_EFFICIENCY
    values = {
        "params": (w.shape.params, "params"),
        "gpus": (n, "count"),
        "batch_tokens": (w.global_batch_tokens, "tokens"),
        "per_gpu_seqs": (w.batch_sequences // n, "count"),
        "grads": (grads, "bytes"),
        "grad_bytes": (memory.gradient_bytes_per_param(w.state_bytes_per_param), "count"),
        "ring_volume": (2.0 * (n - 1) / n * grads, "bytes"),
        "gbps": (example["inter_node_gbps"], "gbps"),
        "efficiency": (cal.INTER_NODE_EFFICIENCY, "percent"),
        "bucket": (cal.DP_BUCKET_BYTES, "bytes"),
        "bucket_busbw": (comms.size_efficiency(cal.DP_BUCKET_BYTES), "percent"),
        "overlap": (cal.DP_OVERLAP_FRACTION, "percent"),
        "ideal_ring": (2.0 * (n - 1) / n * grads / nic, "duration"),
        "allreduce": (r.dp_comm_total_s, "duration"),
        "backward": (r.backward_s / r.micro_batches, "duration"),
        "exposed": (r.dp_comm_s, "duration"),
        "step": (r.step_s, "duration"),
        "mfu": (r.mfu, "percent"),
        "slow_gbps": (slow["inter_node_gbps"], "gbps"),
        "slow_allreduce": (r_slow.dp_comm_total_s, "duration"),
        "slow_exposed": (r_slow.dp_comm_s, "duration"),
        "slow_share": (r_slow.dp_comm_s / r_slow.step_s, "percent"),
        "slow_mfu": (r_slow.mfu, "percent"),
        "small_batch": (small["global_batch_tokens"], "tokens"),
        "small_share": (r_small.dp_comm_s / r_small.step_s, "percent"),
        "small_mfu": (r_small.mfu, "percent"),
    }
    rates = (25, 50, 100, 200, 400, 800, 1600, 3200)
    series = []
    for key, batch in (("batch", example["global_batch_tokens"]), ("batch", small["global_batch_tokens"])):
        points = []
        for gbps in rates:
            _, rr = _evaluate(dict(example, global_batch_tokens=batch, inter_node_gbps=gbps), dp=64)
            points.append((gbps, 100.0 * rr.dp_comm_s / rr.step_s))
        series.append({"key": key, "points": points, "label_values": {"tokens": (batch, "tokens")}})
    chart = {"type": "line", "id": "data_parallel", "series": series, "x_log": True, "y_min": 0.0,
             "text_values": {"params": (w.shape.params, "params"), "gpus": (n, "count")}}
    return Chapter(values, example, [chart])


# --- 3. ZeRO -------------------------------------------------------------------------

def zero_chapter():
    params, dp = 7.5e9, 64
    example = dict(params=params, gpus=dp, seq_len=2048, global_batch_tokens=2048 * 128, inter_node_gbps=200,
                   state_bytes_per_param=ZERO_STATE_BYTES)
    values = {"params": (params, "params"), "dp": (dp, "count"),
              "state_per_param": (ZERO_STATE_BYTES, "count")}
    segments = {"weights": [], "gradients": [], "optimizer": []}
    categories = []
    for stage in range(4):
        wts, grads, opt = memory.model_state_parts(params, ZERO_STATE_BYTES, dp, stage)
        values[f"stage{stage}"] = (wts + grads + opt, "bytes")
        segments["weights"].append(wts / GB)
        segments["gradients"].append(grads / GB)
        segments["optimizer"].append(opt / GB)
        categories.append(("stage", {"stage": (stage, "count")}))
        w, r = _evaluate(example, dp=dp, zero=stage, micro_batch=1)
        values[f"step{stage}"] = (r.step_s, "duration")
        values[f"mem{stage}"] = (r.memory_bytes, "bytes")
        values[f"comm{stage}"] = (r.dp_comm_total_s + r.zero_comm_total_s, "duration")
        values[f"exposed{stage}"] = (r.dp_comm_s + r.zero_comm_s, "duration")
        total = r.dp_comm_total_s + r.zero_comm_total_s
        values[f"hidden{stage}"] = (1.0 - (r.dp_comm_s + r.zero_comm_s) / total if total > 0 else 1.0, "percent")
    values["device"] = (w.gpu_memory_bytes, "bytes")
    values["psi_bytes"] = (2.0 * params, "bytes")
    values["dp_volume"] = (2.0 * 2.0 * params, "bytes")
    values["z3_volume"] = (3.0 * 2.0 * params, "bytes")
    values["micro_batches"] = (r.micro_batches, "count")
    values["z3_gathers"] = (2 * r.micro_batches, "count")
    values["trillion_gpus"] = (1024, "count")
    values["trillion_state"] = (memory.model_state_bytes_per_gpu(1e12, 16, 1024, 3), "bytes")
    values["trillion"] = (1e12, "params")
    chart = {"type": "stacked", "id": "zero", "categories": categories,
             "segments": [(key, segments[key]) for key in ("weights", "gradients", "optimizer")],
             "reference": (w.gpu_memory_bytes / GB, {"device": (w.gpu_memory_bytes, "bytes")}),
             "text_values": {"params": (params, "params"), "dp": (dp, "count")}}
    return Chapter(values, example, [chart])


# --- 4. Tensor parallelism ----------------------------------------------------------

def _rates(gpu="a100_80gb", gbps=200.0):
    dev = GPU_PRESETS[gpu]
    return (dev.peak_flops * cal.GEMM_EFFICIENCY[gpu], dev.hbm_bytes_per_s * cal.HBM_EFFICIENCY,
            dev.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION[gpu], gbps * 1e9 / 8.0 * cal.INTER_NODE_EFFICIENCY)


def tensor_parallel_chapter():
    example, model = gpt3_workload(gpus=GPT3_GPUS), gpt3()
    w, r = _evaluate(example, **GPT3_LAYOUT)
    s, h, a, f = model["seq_len"], model["hidden"], model["heads"], 4 * model["hidden"]
    flops_rate, hbm, nvl, nic = _rates()
    t = GPT3_LAYOUT["tp"]
    on_nvlink = layer_times(s, 1, h, a, f, t, False, "none", False, flops_rate, hbm, nvl)
    on_nic = layer_times(s, 1, h, a, f, t, False, "none", False, flops_rate, hbm, nic)

    def share(lt):
        return lt.tp_comm / (lt.forward + lt.backward + lt.tp_comm)

    message = 2.0 * s * h
    values = {
        "params": (w.shape.params, "params"),
        "hidden": (h, "count"),
        "heads": (a, "count"),
        "ffn": (f, "count"),
        "tp": (t, "count"),
        "layer_params": (w.shape.layer_params, "params"),
        "layer_weights": (2.0 * w.shape.layer_params, "bytes"),
        "layer_weights_tp": (2.0 * w.shape.layer_params / t, "bytes"),
        "heads_per_gpu": (a // t, "count"),
        "message": (message, "bytes"),
        "per_layer_volume": (4 * 2.0 * (t - 1) / t * message, "bytes"),
        "nvlink": (GPU_PRESETS["a100_80gb"].nvlink_bytes_per_s, "bytes"),
        "nic_gbps": (200.0, "gbps"),
        "nic_bytes": (nic, "bytes"),
        "share_nvlink": (share(on_nvlink), "percent"),
        "share_nic": (share(on_nic), "percent"),
        "ratio_links": (nvl / nic, "plain"),
        "step_share": (r.tp_comm_s / r.step_s, "percent"),
        "weights_total": (2.0 * w.shape.params, "bytes"),
        "device": (w.gpu_memory_bytes, "bytes"),
        "gpus_per_node": (w.gpus_per_node, "count"),
    }
    series = []
    for key, rate, dashed, gbps in (("nvlink", nvl, False, None), ("ib", _rates(gbps=400.0)[3], True, 400.0),
                                    ("ib", nic, True, 200.0)):
        points = []
        for tp in (2, 4, 8):
            lt = layer_times(s, 1, h, a, f, tp, False, "none", False, flops_rate, hbm, rate)
            points.append((tp, 100.0 * share(lt)))
        series.append({"key": key, "points": points, "dashed": dashed,
                       "label_values": {"gbps": (gbps, "gbps")} if gbps else {}})
    chart = {"type": "line", "id": "tensor_parallel", "series": series, "x_log": True, "y_min": 0.0,
             "text_values": {"params": (w.shape.params, "params")}}
    return Chapter(values, dict(example), [chart])


# --- 5. Pipeline parallelism --------------------------------------------------------

def pipeline_chapter():
    example = gpt3_workload(gpus=GPT3_GPUS)
    w, r = _evaluate(example, **GPT3_LAYOUT)
    _, ri = _evaluate(example, **dict(GPT3_LAYOUT, interleave=3))
    p, m = GPT3_LAYOUT["pp"], r.micro_batches
    values = {
        "params": (w.shape.params, "params"),
        "layers": (w.shape.layers, "count"),
        "pp": (p, "count"),
        "layers_per_stage": (w.shape.layers // p, "count"),
        "dp": (GPT3_LAYOUT["dp"], "count"),
        "batch": (w.batch_sequences, "count"),
        "micro": (m, "count"),
        "bubble": (pipeline.bubble_fraction(p, m), "percent"),
        "gpipe_share": (pipeline.gpipe_bubble_share(p, m), "percent"),
        "in_flight": (pipeline.in_flight_micro_batches(p, m), "count"),
        "bubble_s": (r.pipeline_bubble_s, "duration"),
        "step": (r.step_s, "duration"),
        "v": (3, "count"),
        "bubble_interleaved": (pipeline.bubble_fraction(p, m, 3), "percent"),
        "bubble_s_interleaved": (ri.pipeline_bubble_s, "duration"),
        "p2p": (r.pp_p2p_total_s, "duration"),
        "p2p_interleaved": (ri.pp_p2p_total_s, "duration"),
        "step_interleaved": (ri.step_s, "duration"),
        "act_interleaved": (activations.interleave_multiplier(p, 3), "plain"),
        "small_m": (p, "count"),
        "small_bubble": (pipeline.bubble_fraction(p, p), "percent"),
        "four_p": (4 * p, "count"),
        "four_p_bubble": (pipeline.bubble_fraction(p, 4 * p), "percent"),
    }
    micro = (4, 8, 16, 32, 64, 128, 256)
    series = []
    for stages in (4, 8, 16):
        series.append({"key": "stages", "points": [(mm, 100.0 * pipeline.bubble_fraction(stages, mm)) for mm in micro],
                       "label_values": {"p": (stages, "count")}})
    series.append({"key": "interleaved", "dashed": True,
                   "points": [(mm, 100.0 * pipeline.bubble_fraction(8, mm, 3)) for mm in micro],
                   "label_values": {"p": (8, "count"), "v": (3, "count")}})
    chart = {"type": "line", "id": "pipeline", "series": series, "x_log": True, "y_log": True, "text_values": {}}
    return Chapter(values, dict(example), [chart])


# --- 6. Activation memory and recomputation ----------------------------------------

def activations_chapter():
    example, model = gpt3_workload(gpus=GPT3_GPUS), gpt3()
    s, b, h, a, t, L = model["seq_len"], 1, model["hidden"], model["heads"], 8, model["layers"]
    V = model["vocab"]
    modes = (
        ("tp", False, "none"), ("tp_sp", True, "none"), ("tp_selective", False, "selective"),
        ("tp_sp_selective", True, "selective"), ("full", False, "full"),
    )
    values = {
        "params": (model["params"], "params"), "seq": (s, "count"), "hidden": (h, "count"), "heads": (a, "count"),
        "tp": (t, "count"), "layers": (L, "count"),
        "five_as_h": (5.0 * a * s / h, "plain"),
    }
    base, scores = [], []
    categories = []
    for key, sp, rc in modes:
        total = activations.per_layer_bytes(s, b, h, a, t, sp, rc)
        flash = activations.per_layer_bytes(s, b, h, a, t, sp, rc, flash_attention=True)
        values[f"layer_{key}"] = (total, "bytes")
        values[f"stack_{key}"] = (total * L, "bytes")
        base.append(flash / GB)
        scores.append((total - flash) / GB)
        categories.append((key, {}))
    values["flash_layer"] = (activations.per_layer_bytes(s, b, h, a, t, True, "none", flash_attention=True), "bytes")
    values["saved_selective"] = (1.0 - values["layer_tp_sp_selective"][0] / values["layer_tp_sp"][0], "percent")
    values["reduction"] = (values["layer_tp"][0] / values["layer_tp_sp_selective"][0], "plain")
    values["selective_overhead"] = (flops.hardware_flops_selective_eq8(1, s, L, h, V) / flops.model_flops_eq7(1, s, L, h, V) - 1.0, "percent")
    values["full_overhead"] = (flops.hardware_flops_full_eq3(1, s, L, h, V) / flops.model_flops_eq7(1, s, L, h, V) - 1.0, "percent")
    w, r_sel = _evaluate(example, **GPT3_LAYOUT)
    _, r_full = _evaluate(example, **dict(GPT3_LAYOUT, recompute="full", sequence_parallel=False))
    values["step_selective"] = (r_sel.step_s, "duration")
    values["step_full"] = (r_full.step_s, "duration")
    values["speedup"] = (r_full.step_s / r_sel.step_s - 1.0, "percent")
    values["mem_selective"] = (r_sel.memory_bytes, "bytes")
    values["act_selective"] = (r_sel.activations_bytes, "bytes")
    values["working_full"] = (r_full.activations_working_bytes, "bytes")
    values["pp"] = (GPT3_LAYOUT["pp"], "count")
    chart = {"type": "stacked", "id": "activations", "categories": categories,
             "segments": [("stored", base), ("scores", scores)],
             "text_values": {"params": (model["params"], "params"), "tp": (t, "count"), "seq": (s, "count")},
             "y_unit": "bytes_gb"}
    return Chapter(values, dict(example), [chart])


# --- 7. 3D parallelism and topology ----------------------------------------------

LAYOUTS_3D = (
    dict(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1, interleave=3),
    dict(tp=8, pp=16, dp=8, recompute="selective", sequence_parallel=True, micro_batch=1),
    dict(tp=4, pp=16, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1),
    dict(tp=2, pp=32, dp=16, recompute="full", micro_batch=1),
    dict(tp=8, pp=2, dp=64, zero=1, recompute="full", micro_batch=1),
)


def _layout_label(layout):
    return {"tp": (layout["tp"], "count"), "pp": (layout["pp"], "count"), "dp": (layout["dp"], "count")}


def three_d_chapter():
    example = gpt3_workload(gpus=GPT3_GPUS)
    w = lab_core.Workload(**example)
    layouts = [dict(layout) for layout in LAYOUTS_3D]
    plan = recommend(w)
    layouts.append(plan.parallelism.to_dict())
    reports = [lab_core.evaluate(w, lab_core.Parallelism(**layout)) for layout in layouts]
    segments = {"compute": [], "tp": [], "pipeline": [], "dp": [], "other": []}
    categories = []
    for layout, r in zip(layouts, reports):
        compute = r.forward_s + r.backward_s + r.recompute_s
        segments["compute"].append(compute)
        segments["tp"].append(r.tp_comm_s)
        segments["pipeline"].append(r.pipeline_bubble_s + r.pp_p2p_s)
        segments["dp"].append(r.dp_comm_s + r.zero_comm_s)
        segments["other"].append(r.step_s - compute - r.tp_comm_s - r.pipeline_bubble_s - r.pp_p2p_s
                                 - r.dp_comm_s - r.zero_comm_s)
        categories.append(("layout", _layout_label(layout)))
    categories[-1] = ("planner", _layout_label(layouts[-1]))
    values = {"params": (w.shape.params, "params"), "gpus": (w.gpus, "count"),
              "gpus_per_node": (w.gpus_per_node, "count"), "device": (w.gpu_memory_bytes, "bytes"),
              "batch": (w.batch_sequences, "count")}
    for index, (layout, r) in enumerate(zip(layouts[:-1], reports)):
        for name in ("tp", "pp", "dp"):
            values[f"l{index}_{name}"] = (layout[name], "count")
        values[f"l{index}_step"] = (r.step_s, "duration")
        values[f"l{index}_mem"] = (r.memory_bytes, "bytes")
        values[f"l{index}_mfu"] = (r.mfu, "percent")
        values[f"l{index}_bubble"] = (r.bubble_fraction, "percent")
        values[f"l{index}_dp_exposed"] = (r.dp_comm_s, "duration")
    pr = reports[-1]
    for name in ("tp", "pp", "dp", "zero", "micro_batch"):
        values[f"plan_{name}"] = (layouts[-1][name], "count")
    values["plan_recompute"] = (layouts[-1]["recompute"], "text")
    values["plan_sp"] = (layouts[-1]["sequence_parallel"], "text")
    values["plan_step"] = (pr.step_s, "duration")
    values["plan_mem"] = (pr.memory_bytes, "bytes")
    values["plan_mfu"] = (pr.mfu, "percent")
    values["plan_stage"] = (plan.stage, "text")
    values["l0_v"] = (LAYOUTS_3D[0]["interleave"], "count")
    values["l4_zero"] = (LAYOUTS_3D[4]["zero"], "count")
    hand = reports[:-1]
    best = min(range(len(hand)), key=lambda i: (not hand[i].fits, hand[i].step_s))
    values["best_step"] = (hand[best].step_s, "duration")
    values["best_days"] = (hand[best].train_time_s / 86400.0, "days")
    values["plan_days"] = (pr.train_time_s / 86400.0, "days")
    values["tokens"] = (w.training_tokens, "scaled")
    values["nodes_per_replica"] = (LAYOUTS_3D[0]["tp"] * LAYOUTS_3D[0]["pp"] // w.gpus_per_node, "count")
    chart = {"type": "stacked", "id": "three_d", "categories": categories,
             "segments": [(key, segments[key]) for key in ("compute", "tp", "pipeline", "dp", "other")],
             "text_values": {"params": (w.shape.params, "params"), "gpus": (w.gpus, "count")},
             "y_unit": "seconds"}
    workload = dict(example)
    return Chapter(values, workload, [chart])


# --- 8. Failures and checkpoints ---------------------------------------------------

CHECKPOINT_MODES = lab_core.checkpoint_modes.CHECKPOINT_MODES
#: Intervals of the goodput chart, minutes.
CHART_INTERVALS = (1, 2, 5, 10, 20, 30, 60, 120, 240)
#: Storage ten times slower than the lab's default: the persist bound holds.
SLOW_STORAGE_FACTOR = 0.1
#: A restart brought down to one minute (detection, restart, set-up and load together).
FAST_RESTART_S = 60.0


def _mode_figures(example, mode, **changes):
    """The failure figures of the chapter's workload checkpointed in ``mode``."""
    return context_for(lab_core.Workload(**dict(example, checkpoint_mode=mode, **changes))).failures


def _at_optimum(example, mode, **changes):
    """The failure figures with the interval set to the mode's optimum."""
    optimum = _mode_figures(example, mode, **changes).optimal_s
    return _mode_figures(example, mode, checkpoint_interval_min=optimum / 60.0, **changes)


def _causes():
    """Llama 3's Table 5 counts by category, and of the two largest components."""
    by_category, by_component = {}, {}
    for component, category, count in cal.LLAMA3_INTERRUPTIONS_BY_COMPONENT:
        by_category[category] = by_category.get(category, 0) + count
        by_component[component] = count
    return by_category, by_component


def _failure_rate_values(w, f):
    by_category, by_component = _causes()
    total = cal.LLAMA3_UNEXPECTED_INTERRUPTIONS
    return {
        "llama_interruptions": (total, "count"),
        "llama_days": (cal.LLAMA3_WINDOW_HOURS / 24.0, "count"),
        "llama_gpus": (cal.LLAMA3_GPUS, "count"),
        "rate": (cal.GPU_FAILURES_PER_HOUR, "sci"),
        "per_day": (f.interruptions_per_day, "plain"),
        "mtti": (f.mtti_s, "duration"),
        "small_gpus": (1024, "count"),
        "small_mtti": (3600.0 / failures.interruptions_per_hour(1024, cal.GPU_FAILURES_PER_HOUR), "duration"),
        "gpu_causes": (by_category["gpu"], "count"),
        "gpu_share": (by_category["gpu"] / total, "percent"),
        "faulty_gpu": (by_component["faulty_gpu"], "count"),
        "hbm": (by_component["gpu_hbm3"], "count"),
        "software": (by_category["dependency"], "count"),
        "network": (by_category["network"], "count"),
        "host_maintenance": (by_category["unplanned_maintenance"], "count"),
        "host": (by_category["host"], "count"),
        "unknown": (by_category["unknown"], "count"),
        "gpu_mtti": (f.mtti_s * total / by_category["gpu"], "duration"),
        "network_mtti": (f.mtti_s * total / by_category["network"], "duration"),
    }


def _mode_values(w, f):
    """The three modes' costs for the chapter's checkpoint, and a measured pause (ByteCheckpoint)."""
    measured = load_facts()["bytecheckpoint.table8"]
    costs = f.mode_costs
    return {
        "ckpt_bytes_per_param": (cal.CHECKPOINT_BYTES_PER_PARAM, "count"),
        "ckpt": (f.checkpoint_bytes, "bytes"),
        "per_gpu": (f.bytes_per_gpu, "bytes"),
        "storage": (w.checkpoint_storage_gbps * 1e9, "bytes"),
        "read": (w.storage_read_gbps * 1e9, "bytes"),
        "blocking_pause": (costs["blocking"].stall_s, "duration"),
        "snapshot": (f.snapshot_s, "duration"),
        "write": (f.checkpoint_write_s, "duration"),
        "replicate": (costs["in_memory"].replicate_s, "duration"),
        "memory_load": (costs["in_memory"].load_s, "duration"),
        "storage_load": (costs["async"].load_s, "duration"),
        "persist_every": (cal.IN_MEMORY_PERSIST_EVERY, "count"),
        "bc_model": (measured["inputs"]["text_405b"]["params"], "params"),
        "bc_gpus": (measured["inputs"]["text_405b"]["gpus"], "count"),
        "bc_pause": (measured["published"]["text_405b"]["blocking_s"], "duration"),
    }


def _recovery_values(w, f):
    parts = f.recovery
    return {
        "detection": (parts.detection_s, "duration"),
        "job_restart": (parts.job_restart_s, "duration"),
        "init": (parts.comm_init_s, "duration"),
        "recovery": (parts.total_s, "duration"),
        "init_small": (lab_core.recovery.comm_init_s(1024), "duration"),
    }


def _interval_values(example, f):
    """Young/Daly with each mode's pause, the bound that holds, goodput at the
    reader's interval and at each optimum. The prose says which bound holds in
    each example: the build stops if the model disagrees."""
    best = {mode: _at_optimum(example, mode) for mode in CHECKPOINT_MODES}
    slow_storage = _DEFAULT_STORAGE * SLOW_STORAGE_FACTOR
    slow = _mode_figures(example, "async", checkpoint_storage_gbps=slow_storage)
    if f.interval_bound != "young_daly" or slow.interval_bound != "persist":
        raise ValueError(f"chapter 8 says Young/Daly holds at the default storage and the persist bound at "
                         f"{slow_storage} GB/s; the model says {f.interval_bound} and {slow.interval_bound}")
    return {
        "young_async": (f.young_s, "duration"),
        "daly_async": (f.daly_s, "duration"),
        "daly_blocking": (f.mode_interval["blocking"], "duration"),
        "interval": (f.interval_s, "duration"),
        "lost": (f.lost_per_interruption_s, "duration"),
        "lost_day": (f.lost_per_day_s, "duration"),
        "goodput": (f.goodput, "percent"),
        "goodput_blocking_default": (_mode_figures(example, "blocking").goodput, "percent"),
        "goodput_async_opt": (best["async"].goodput, "percent"),
        "goodput_blocking_opt": (best["blocking"].goodput, "percent"),
        "goodput_memory_opt": (best["in_memory"].goodput, "percent"),
        "memory_opt": (best["in_memory"].interval_s, "duration"),
        "slow_storage": (slow_storage * 1e9, "bytes"),
        "slow_write": (slow.checkpoint_write_s, "duration"),
        "slow_optimal": (slow.optimal_s, "duration"),
        "slow_interval": (240 * 60.0, "duration"),
        "slow_goodput": (_mode_figures(example, "async", checkpoint_interval_min=240).goodput, "percent"),
    }, best


def _breakdown_values(best):
    a = best["async"]
    return {
        "lost_share": (a.lost_work_share, "percent"),
        "stall_share": (a.stall_share, "percent"),
        "recovery_share": (a.recovery_share, "percent"),
        "detection_share": (a.part_share(a.recovery.detection_s), "percent"),
        "restart_share": (a.part_share(a.recovery.job_restart_s), "percent"),
        "init_share": (a.part_share(a.recovery.comm_init_s), "percent"),
        "load_share": (a.part_share(a.recovery.load_s), "percent"),
        "fast_restart": (FAST_RESTART_S, "duration"),
        "fast_goodput": (_at_optimum(_CHAPTER8_EXAMPLE, "async", restart_min=FAST_RESTART_S / 60.0).goodput,
                         "percent"),
    }


def _llama_values():
    facts = load_facts()
    published = facts["run.llama3_405b.effective_training_time"]["published"]
    as_run, with_async = llama3_effective_time(facts), llama3_effective_time(facts, "async")
    return {
        "llama_params": (LLAMA3_WORKLOAD["params"], "params"),
        "llama_published": (published["effective_training_time_percent"] / 100.0, "percent"),
        "llama_storage": (published["storage_sustained_TBps"] * 1e12, "bytes"),
        "llama_planned": (published["planned_interruptions"], "count"),
        "llama_interval": (as_run.interval_s, "duration"),
        "llama_lab": (as_run.effective, "percent"),
        "llama_async": (with_async.effective, "percent"),
    }


def _failure_charts(example, f, best):
    """Goodput against the interval for each mode; where the time goes at each mode's optimum."""
    series = []
    for mode in CHECKPOINT_MODES:
        points = [(minutes, 100.0 * _mode_figures(example, mode, checkpoint_interval_min=minutes).goodput)
                  for minutes in CHART_INTERVALS]
        series.append({"key": mode, "points": points, "dashed": mode == "blocking"})
    text_values = {"params": (f.checkpoint_bytes / cal.CHECKPOINT_BYTES_PER_PARAM, "params"),
                   "gpus": (example["gpus"], "count"), "per_day": (f.interruptions_per_day, "plain")}
    goodput_chart = {"type": "line", "id": "failures", "series": series, "x_log": True, "text_values": text_values}
    parts = {"lost_work": [], "pauses": [], "detection": [], "restart": [], "init": [], "load": []}
    for mode in CHECKPOINT_MODES:
        b = best[mode]
        for key, share in (("lost_work", b.lost_work_share), ("pauses", b.stall_share),
                           ("detection", b.part_share(b.recovery.detection_s)),
                           ("restart", b.part_share(b.recovery.job_restart_s)),
                           ("init", b.part_share(b.recovery.comm_init_s)), ("load", b.part_share(b.recovery.load_s))):
            parts[key].append(100.0 * share)
    breakdown = {"type": "stacked", "id": "failure_breakdown", "categories": [(mode, {}) for mode in CHECKPOINT_MODES],
                 "segments": list(parts.items()), "text_values": text_values}
    return [goodput_chart, breakdown]


_DEFAULT_STORAGE = _default("checkpoint_storage_gbps")
_CHAPTER8_EXAMPLE = dict(params=405e9, gpus=16384, seq_len=8192, global_batch_tokens=16 * 1048576,
                         gpu="h100_80gb", checkpoint_interval_min=60, training_tokens=15e12)


def failures_chapter():
    example = _CHAPTER8_EXAMPLE
    w, r = _evaluate(example, tp=8, pp=4, dp=512, recompute="selective", sequence_parallel=True)
    f = context_for(w).failures
    intervals, best = _interval_values(example, f)
    values = {"params": (w.shape.params, "params"), "gpus": (w.gpus, "count")}
    for part in (_failure_rate_values(w, f), _mode_values(w, f), _recovery_values(w, f), intervals,
                 _breakdown_values(best), _llama_values()):
        values.update(part)
    return Chapter(values, example, _failure_charts(example, f, best))


# --- 9. Data pipeline --------------------------------------------------------------

def data_chapter():
    example = dict(params=1.3e9, gpus=1024, seq_len=2048, global_batch_tokens=4 * 1048576)
    w, r = _evaluate(example, dp=1024)
    nodes = -(-w.gpus // w.gpus_per_node)
    values = {
        "params": (w.shape.params, "params"),
        "gpus": (w.gpus, "count"),
        "nodes": (nodes, "count"),
        "tokens_per_s": (r.tokens_per_s, "scaled"),
        "per_gpu": (r.tokens_per_s / w.gpus, "scaled"),
        "per_node": (r.tokens_per_s / nodes, "scaled"),
        "loader_per_node": (w.loader_tokens_per_s_per_node, "scaled"),
        "loader_ratio": (r.loader_ratio, "percent"),
        "bytes_per_token": (cal.DATA_BYTES_PER_TOKEN, "count"),
        "read": (r.required_read_bytes_per_s, "bytes"),
        "storage": (r.storage_read_bytes_per_s, "bytes"),
        "storage_ratio": (r.storage_ratio, "percent"),
        "step": (r.step_s, "duration"),
        "batch_tokens": (w.global_batch_tokens, "tokens"),
        "training_tokens": (w.training_tokens, "scaled"),
        "dataset_bytes": (w.training_tokens * cal.DATA_BYTES_PER_TOKEN, "bytes"),
        "train_days": (r.train_time_s / 86400.0, "days"),
    }
    slow = dict(example, loader_tokens_per_s_per_node=1e5)
    _, rs = _evaluate(slow, dp=1024)
    values["slow_loader"] = (slow["loader_tokens_per_s_per_node"], "scaled")
    values["slow_ratio"] = (rs.loader_ratio, "plain")
    tiny = dict(example, params=350e6, gpus=2048)
    wt, rt = _evaluate(tiny, dp=2048)
    values["tiny_params"] = (wt.shape.params, "params")
    values["tiny_gpus"] = (wt.gpus, "count")
    values["tiny_per_node"] = (rt.tokens_per_s / (wt.gpus // wt.gpus_per_node), "scaled")
    big = dict(params=70e9, gpus=1024, seq_len=2048, global_batch_tokens=4 * 1048576)
    _, rb = _evaluate(big, tp=8, pp=4, dp=32, recompute="selective", sequence_parallel=True)
    values["big_params"] = (70e9, "params")
    values["big_tokens_per_s"] = (rb.tokens_per_s, "scaled")
    values["big_ratio"] = (rb.loader_ratio, "percent")
    gpus_sweep = (64, 128, 256, 512, 1024, 2048)
    series = []
    for params in (350e6, 1.3e9):
        points = []
        for gpus in gpus_sweep:
            _, rr = _evaluate(dict(example, params=params, gpus=gpus), dp=gpus)
            points.append((gpus, rr.tokens_per_s))
        series.append({"key": "model", "points": points, "label_values": {"params": (params, "params")}})
    series.append({"key": "loader", "dashed": True,
                   "points": [(g, (-(-g // w.gpus_per_node)) * w.loader_tokens_per_s_per_node) for g in gpus_sweep],
                   "label_values": {"per_node": (w.loader_tokens_per_s_per_node, "scaled")}})
    chart = {"type": "line", "id": "data", "series": series, "x_log": True, "y_log": True,
             "text_values": {}}
    return Chapter(values, example, [chart])


CHAPTERS = {
    "memory": memory_chapter,
    "data_parallel": data_parallel_chapter,
    "zero": zero_chapter,
    "tensor_parallel": tensor_parallel_chapter,
    "pipeline": pipeline_chapter,
    "activations": activations_chapter,
    "three_d": three_d_chapter,
    "failures": failures_chapter,
    "data": data_chapter,
}
@cache
def chapter_data(chapter_id):
    """A chapter's values, workload and charts (lab_core's numbers: computed once per process)."""
    return CHAPTERS[chapter_id]()
