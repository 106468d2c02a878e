"""Chapter Tensor parallelism: its numbers, every one computed by lab_core.

``gpt3_runs`` evaluates GPT-3 175B on 1,024 A100s in the layouts and stacks the
chapter compares; the rules page's worked example (labsite.examples.tensor_parallel)
quotes the first of them, Narayanan et al.'s own layout on the 2021 stack.
"""
from functools import cache

from lab_core import Workload, activations, calibration as cal, collectives, comms, memory
from lab_core.efficiency import gemm_efficiency
from lab_core.inputs import SPEC_BY_NAME
from lab_core.hardware import GPU_PRESETS, nic_bytes_per_s, nvlink_busbw_bytes_per_s
from lab_core.timing import layer_times

from lab_core.planner import recommend

from ..reference import gpt3, gpt3_workload, scenario_parallelism, scenario_workload
from .common import GPT3_GPUS, GPT3_LAYOUT, Chapter, case, chapter, evaluate, exercise, rates

#: The layouts and stacks the chapter compares (name: workload changes, layout).
RUNS = (
    # arXiv:2104.04473 Table 1: full recompute, no sequence parallelism, the 2021 stack.
    ("paper", dict(stack="megatron_lm_2021"), dict(GPT3_LAYOUT, recompute="full", sequence_parallel=False)),
    # arXiv:2205.05198: sequence parallelism and selective recompute, still the 2021 stack.
    ("sp", dict(stack="megatron_lm_2021"), GPT3_LAYOUT),
    # Today: the same layout with tensor-parallel communication overlapped with the GEMMs.
    ("modern", dict(stack="modern", tp_comm_overlap=True), GPT3_LAYOUT),
)
#: A small model whose layers are narrow: its tensor-parallel share is larger (communication / compute ~ 1/h).
SMALL_PARAMS = 1.3e9
#: Tensor-parallel degrees of the GEMM-shape table, and its model width (Llama 3 70B's hidden size).
TP_DEGREES = (1, 2, 4, 8)
WIDE_HIDDEN = 8192
GEMM_TOKENS = 4096
NIC_GBPS = 200.0


@cache
def gpt3_runs():
    """{name: (Workload, Report)} of GPT-3 175B on 1,024 A100s for each of RUNS."""
    return {name: evaluate(gpt3_workload(gpus=GPT3_GPUS, **changes), **layout) for name, changes, layout in RUNS}


def _layer_share(s, h, a, f, t, comm_rate, flops_rate, hbm):
    lt = layer_times(s, 1, h, a, f, t, False, "none", False, flops_rate, hbm, comm_rate)
    return lt.tp_comm / (lt.forward + lt.backward + lt.tp_comm)


def _split(values, w, model):
    s, h, a = model["seq_len"], model["hidden"], model["heads"]
    t = GPT3_LAYOUT["tp"]
    message = 2.0 * s * h
    values.update({
        "params": (w.shape.params, "params"), "hidden": (h, "count"), "heads": (a, "count"),
        "ffn": (w.shape.ffn_hidden, "count"), "tp": (t, "count"), "seq": (s, "count"),
        "layer_params": (w.shape.layer_params, "params"),
        "layer_weights": (2.0 * w.shape.layer_params, "bytes"),
        "layer_weights_tp": (2.0 * w.shape.layer_params / t, "bytes"),
        "heads_per_gpu": (a // t, "count"),
        "message": (message, "bytes"),
        "per_layer_volume": (4 * collectives.cost("ring_allreduce", t, message)[1], "bytes"),
        "weights_total": (2.0 * w.shape.params, "bytes"),
        "device": (w.gpu_memory_bytes, "bytes"),
        "gpus_per_node": (w.gpus_per_node, "count"),
        "max_per_node": (SPEC_BY_NAME["gpus_per_node"].maximum, "count"),
        "qkv_cols": (3 * h // t, "count"), "ffn_cols": (w.shape.ffn_hidden // t, "count"),
    })
    llama = scenario_workload("llama3-405b").shape
    values["llama_heads"] = (llama.heads, "count")
    values["llama_kv"] = (llama.kv_heads, "count")
    values["llama_kv_per_gpu"] = (llama.kv_heads // t, "count")


def _links(values, model):
    s, h, a = model["seq_len"], model["hidden"], model["heads"]
    f = 4 * h
    flops_rate, hbm, nvl, nic = rates(gbps=NIC_GBPS)
    a100 = GPU_PRESETS["a100_80gb"]
    t = GPT3_LAYOUT["tp"]
    values.update({
        "nvlink_line": (a100.nvlink_bytes_per_s, "bytes"),
        "nic_gbps": (NIC_GBPS, "gbps"),
        "nic_line": (NIC_GBPS * 1e9 / 8.0, "bytes"),
        "line_ratio": (a100.nvlink_bytes_per_s / (NIC_GBPS * 1e9 / 8.0), "plain"),
        "nvlink_bus": (nvl, "bytes"),
        "nvlink_fraction": (nvl / a100.nvlink_bytes_per_s, "percent"),
        "nic_bytes": (nic, "bytes"),
        "nic_fraction": (nic / (NIC_GBPS * 1e9 / 8.0), "percent"),
        "ratio_links": (nvl / nic, "plain"),
        "share_nvlink": (_layer_share(s, h, a, f, t, nvl, flops_rate, hbm), "percent"),
        "share_nic": (_layer_share(s, h, a, f, t, nic, flops_rate, hbm), "percent"),
    })
    # Communication over compute falls as 1/h: the same layer at a small model's width.
    small = Workload(params=SMALL_PARAMS, seq_len=s).shape
    values["small_params"] = (small.params, "params")
    values["small_hidden"] = (small.hidden, "count")
    values["share_small"] = (_layer_share(s, small.hidden, small.heads, small.ffn_hidden, t, nvl, flops_rate, hbm),
                             "percent")
    values["width_ratio"] = (h / small.hidden, "plain")
    values["width_verdict"] = case("narrow_worse" if values["share_small"][0] > values["share_nvlink"][0]
                                   else "narrow_not_worse", "narrow_worse", "narrow_not_worse")


def _stacks(values):
    runs = gpt3_runs()
    for name, (_, r) in runs.items():
        values[f"{name}_step"] = (r.step_s, "duration")
        values[f"{name}_tp"] = (r.tp_comm_s, "duration")
        values[f"{name}_tp_total"] = (r.tp_comm_total_s, "duration")
        values[f"{name}_share"] = (r.tp_comm_s / r.step_s, "percent")
        values[f"{name}_mfu"] = (r.mfu, "percent")
    modern, sp = runs["modern"][1], runs["sp"][1]
    values["modern_hidden"] = (1.0 - modern.tp_comm_s / modern.tp_comm_total_s, "percent")
    values["overlap_verdict"] = case("less" if modern.tp_comm_s < sp.tp_comm_s else "not_less", "less", "not_less")
    values["gpus"] = (GPT3_GPUS, "count")
    for name in ("pp", "dp"):
        values[name] = (GPT3_LAYOUT[name], "count")


def _messages(values, model):
    """One layer's tensor-parallel collectives on NVLink: small messages on the critical path."""
    s, h, a = model["seq_len"], model["hidden"], model["heads"]
    t = GPT3_LAYOUT["tp"]
    flops_rate, hbm, nvl, _ = rates()
    message = 2.0 * s * h
    lt = layer_times(s, 1, h, a, 4 * h, t, False, "none", False, flops_rate, hbm, nvl)
    values["message_share"] = (comms.size_efficiency(message), "percent")
    values["bucket"] = (cal.DP_BUCKET_BYTES, "bytes")
    values["bucket_share"] = (comms.size_efficiency(cal.DP_BUCKET_BYTES), "percent")
    values["one_allreduce"] = (comms.ring_time(message, t, nvl), "duration")
    values["layer_comm"] = (lt.tp_comm, "duration")
    values["layer_compute"] = (lt.forward + lt.backward, "duration")
    values["layer_allreduces"] = (lt.tp_comm / comms.ring_time(message, t, nvl), "count")


def _rest_of_layout(values):
    """What tensor parallelism does to the memory and the data-parallel traffic of each GPU."""
    w, r = gpt3_runs()["sp"]
    values["per_gpu_params"] = (r.params_per_gpu, "params")
    values["per_gpu_weights"] = (r.weights_bytes, "bytes")
    values["per_gpu_grads"] = (r.params_per_gpu * memory.gradient_bytes_per_param(w.state_bytes_per_param), "bytes")
    values["per_gpu_state"] = (r.weights_bytes + r.gradients_bytes + r.optimizer_bytes, "bytes")
    values["per_gpu_mem"] = (r.memory_bytes, "bytes")
    values["dp_total"] = (r.dp_comm_total_s, "duration")
    values["model_parallel"] = (GPT3_LAYOUT["tp"] * GPT3_LAYOUT["pp"], "count")
    values["replica_nodes"] = (GPT3_LAYOUT["tp"] * GPT3_LAYOUT["pp"] // w.gpus_per_node, "count")


def _activations(values, model):
    s, h, a, t = model["seq_len"], model["hidden"], model["heads"], GPT3_LAYOUT["tp"]
    values["act_tp"] = (activations.per_layer_bytes(s, 1, h, a, t), "bytes")
    values["act_sp"] = (activations.per_layer_bytes(s, 1, h, a, t, sequence_parallel=True), "bytes")
    values["act_none"] = (activations.per_layer_bytes(s, 1, h, a), "bytes")


def _gemms(values):
    for t in TP_DEGREES:
        values[f"gemm_t{t}"] = (t, "count")
        values[f"gemm_width{t}"] = (WIDE_HIDDEN // t, "count")
        values[f"gemm_eff{t}"] = (gemm_efficiency("h100_80gb", "bf16", GEMM_TOKENS, WIDE_HIDDEN / t), "percent")
    values["gemm_hidden"] = (WIDE_HIDDEN, "count")
    values["gemm_tokens"] = (GEMM_TOKENS, "count")
    values["gemm_loss"] = (1.0 - values[f"gemm_eff{TP_DEGREES[-1]}"][0] / values["gemm_eff1"][0], "percent")


#: Three workloads of growing width for the planner's choice of t (H100 unless stated).
CHOICES = (
    ("small", dict(params=8e9, gpus=8, seq_len=8192, global_batch_tokens=4 * 1048576, gpu="h100_80gb", layers=32,
                   hidden=4096, heads=32, kv_heads=8, ffn_hidden=21504, vocab=128256, dropout=False)),
    ("mid", dict(params=70e9, gpus=64, seq_len=4096, global_batch_tokens=4 * 1048576, gpu="h100_80gb",
                 inter_node_gbps=400)),
)


def _choices(values):
    """The tensor-parallel degree the planner picks as models widen (lab_core.recommend)."""
    for key, inputs in CHOICES:
        w = Workload(**inputs)
        plan = recommend(w)
        values[f"choice_{key}_params"] = (w.shape.params, "params")
        values[f"choice_{key}_hidden"] = (w.shape.hidden, "count")
        values[f"choice_{key}_gpus"] = (w.gpus, "count")
        values[f"choice_{key}_tp"] = (plan.parallelism.tp, "count")
        values[f"choice_{key}_pp"] = (plan.parallelism.pp, "count")
    values["llama_tp"] = (scenario_parallelism("llama3-405b")["tp"], "count")
    values["llama_per_node"] = (scenario_workload("llama3-405b").gpus_per_node, "count")


def _exercises(values):
    for name in ("gpt3-2021", "gpt3-modern", "no-overlap", "small-model"):
        state = exercise("tensor_parallel", name)
        key, r, par = name.replace("-", "_"), state.report, state.layout
        for field in ("tp", "cp", "pp", "dp", "zero", "micro_batch", "interleave"):
            values[f"ex_{key}_{field}"] = (getattr(par, field), "count")
        values[f"ex_{key}_step"] = (r.step_s, "duration")
        values[f"ex_{key}_tp_exposed"] = (r.tp_comm_s, "duration")
        values[f"ex_{key}_tp_total"] = (r.tp_comm_total_s, "duration")
        values[f"ex_{key}_share"] = (r.tp_comm_s / r.step_s, "percent")
        values[f"ex_{key}_mfu"] = (r.mfu, "percent")
        values[f"ex_{key}_params"] = (state.workload.shape.params, "params")
        values[f"ex_{key}_gpus"] = (state.workload.gpus, "count")
    v = {name: value for name, (value, _) in values.items()}
    values["ex_modern_mfu_verdict"] = case("rises" if v["ex_gpt3_modern_mfu"] > v["ex_gpt3_2021_mfu"] else "falls",
                                           "rises", "falls")
    values["ex_no_overlap_verdict"] = case("lowers" if v["ex_no_overlap_tp"] < v["ex_gpt3_modern_tp"] else "keeps",
                                           "lowers", "keeps")
    values["ex_small_verdict"] = case("no" if v["ex_small_model_tp"] == 1 else "yes", "no", "yes")


def _chart(values, model):
    s, h, a = model["seq_len"], model["hidden"], model["heads"]
    f = 4 * h
    flops_rate, hbm, nvl, nic = rates(gbps=NIC_GBPS)
    series = []
    for key, rate, dashed, gbps in (("nvlink", nvl, False, None), ("ib", nic_bytes_per_s(2 * NIC_GBPS), True, 2 * NIC_GBPS),
                                    ("ib", nic, True, NIC_GBPS)):
        points = [(t, 100.0 * _layer_share(s, h, a, f, t, rate, flops_rate, hbm)) for t in (2, 4, 8)]
        series.append({"key": key, "points": points, "dashed": dashed,
                       "label_values": {"gbps": (gbps, "gbps")} if gbps else {}})
    return {"type": "line", "id": "tensor_parallel", "series": series, "x_log": True, "y_min": 0.0,
            "text_values": {"params": (values["params"][0], "params")}}


@chapter("tensor_parallel")
def tensor_parallel_chapter():
    example, model = gpt3_workload(gpus=GPT3_GPUS, stack="megatron_lm_2021"), gpt3()
    w, _ = gpt3_runs()["paper"]
    values = {}
    _split(values, w, model)
    _links(values, model)
    _stacks(values)
    _activations(values, model)
    _messages(values, model)
    _rest_of_layout(values)
    _gemms(values)
    _choices(values)
    _exercises(values)
    figures = {"split": {"params": float(model["params"]), "seq": model["seq_len"], "tp": GPT3_LAYOUT["tp"],
                         "hidden": model["hidden"], "heads": model["heads"], "layers": model["layers"], "lanes": 2}}
    values["figure_lanes"] = (2, "count")
    return Chapter(values, dict(example), [_chart(values, model)], figures)
