"""Chapter 3D parallelism and topology: its numbers, every one computed by lab_core."""
import lab_core
from lab_core.planner import recommend

from ..reference import gpt3_workload
from .common import Chapter, GPT3_GPUS, chapter


LAYOUTS_3D = (
    dict(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1, interleave=3),
    dict(tp=8, pp=16, dp=8, recompute="selective", sequence_parallel=True, micro_batch=1),
    dict(tp=4, pp=16, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1),
    dict(tp=2, pp=32, dp=16, recompute="full", micro_batch=1),
    dict(tp=8, pp=2, dp=64, zero=1, recompute="full", micro_batch=1),
)


def _layout_label(layout):
    return {"tp": (layout["tp"], "count"), "pp": (layout["pp"], "count"), "dp": (layout["dp"], "count")}


@chapter("three_d")
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
