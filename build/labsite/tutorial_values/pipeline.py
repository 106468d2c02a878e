"""Chapter Pipeline parallelism: its numbers, every one computed by lab_core."""
from lab_core import activations, pipeline

from ..reference import gpt3_workload
from .common import Chapter, GPT3_GPUS, GPT3_LAYOUT, chapter, evaluate


@chapter("pipeline")
def pipeline_chapter():
    example = gpt3_workload(gpus=GPT3_GPUS)
    w, r = evaluate(example, **GPT3_LAYOUT)
    _, ri = evaluate(example, **dict(GPT3_LAYOUT, interleave=3))
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
