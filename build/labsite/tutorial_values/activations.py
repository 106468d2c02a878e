"""Chapter Activation memory and recomputation: its numbers, every one computed by lab_core."""
from lab_core import activations, flops

from ..reference import gpt3, gpt3_workload
from .common import Chapter, GB, GPT3_GPUS, GPT3_LAYOUT, chapter, evaluate


@chapter("activations")
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
    w, r_sel = evaluate(example, **GPT3_LAYOUT)
    _, r_full = evaluate(example, **dict(GPT3_LAYOUT, recompute="full", sequence_parallel=False))
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
