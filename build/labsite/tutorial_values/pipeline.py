"""Pipeline parallelism: GPT-3 175B on 1,024 A100s (arXiv:2104.04473
Table 1) for the bubble, 1F1B memory and interleaving; Llama 3 405B's
published run (scenarios/llama3-405b.yaml) for uneven stages and why it
interleaves eight chunks; DeepSeek-V3's (scenarios/deepseek-v3.yaml) under
its own DualPipe schedule and the V-shaped DualPipeV."""
import lab_core
from lab_core import activations, pipeline
from lab_core.comms import point_to_point_time, ring_time
from lab_core.context import context_for
from lab_core.planner import recommend
from lab_core.planner.assumptions import MEMORY_SAFETY_MARGIN
from lab_core.step_time import output_layer_times

from ..reference import gpt3_workload
from .common import GPT3_GPUS, GPT3_LAYOUT, Chapter, case, chapter, evaluate, exercise, layout_text
from .scenario_runs import branch, micro_batch, per_stage, published_run, run_name

INTERLEAVE_SWEEP = (1, 2, 3, 4, 6)
#: The schedule figures: a pipeline small enough to draw (GPipe vs 1F1B, then 1F1B vs interleaved).
FIGURE_PP, FIGURE_MICRO, FIGURE_V = 4, 8, 2
#: Sends below this share of a stage's compute are "cheap" in the prose (a
#: few percent is within the model's own error, so placement cannot matter).
SENDS_CHEAP = 0.05
#: The interleaving factor the chapter follows through (as in arXiv:2104.04473 Fig. 4's examples).
V = 3


def _stages_values(example, w, r):
    ctx = context_for(w)
    t, p = GPT3_LAYOUT["tp"], GPT3_LAYOUT["pp"]
    s, h = w.seq_len, w.shape.hidden
    boundary = 2.0 * s * h                       # b s h 16-bit values, b = 1
    send = point_to_point_time(boundary / t, ctx.nic_rate)
    all_reduce = ring_time(boundary, t, ctx.nvlink_rate)
    mb = micro_batch(example, GPT3_LAYOUT)
    layers = w.shape.layers // p
    tp_bytes_stage = layers * 4 * 2.0 * (t - 1) / t * boundary
    return {
        "params": (w.shape.params, "params"),
        "layers": (w.shape.layers, "count"),
        "pp": (p, "count"),
        "tp": (t, "count"),
        "dp": (GPT3_LAYOUT["dp"], "count"),
        "layers_per_stage": (layers, "count"),
        "boundary": (boundary, "bytes"),
        "boundary_tp": (boundary / t, "bytes"),
        "tp_stage_bytes": (tp_bytes_stage, "bytes"),
        "tp_over_boundary": (tp_bytes_stage / (2.0 * boundary / t), "count"),
        "nic_gbps": (w.inter_node_gbps, "gbps"),
        "send": (send, "duration"),
        "slot": (mb.busy, "duration"),
        "send_share": (2.0 * send / mb.busy, "percent"),
        "all_reduce": (all_reduce, "duration"),
        "naive_busy": (1.0 / p, "percent"),
        "params_per_gpu": (r.params_per_gpu, "params"),
        "state_per_gpu": (r.weights_bytes + r.gradients_bytes + r.optimizer_bytes, "bytes"),
        "send_verdict": branch(2.0 * send / mb.busy < SENDS_CHEAP, "cheap", "costly"),
    }


def _bubble_values(w, r):
    p, m = GPT3_LAYOUT["pp"], r.micro_batches
    return {
        "batch": (w.batch_sequences, "count"),
        "micro": (m, "count"),
        "bubble": (pipeline.bubble_fraction(p, m), "percent"),
        "gpipe_share": (pipeline.gpipe_bubble_share(p, m), "percent"),
        "bubble_s": (r.pipeline_bubble_s, "duration"),
        "step": (r.step_s, "duration"),
        "small_m": (p, "count"),
        "small_bubble": (pipeline.bubble_fraction(p, p), "percent"),
        "small_share": (pipeline.gpipe_bubble_share(p, p), "percent"),
        "four_p": (4 * p, "count"),
        "four_p_bubble": (pipeline.bubble_fraction(p, 4 * p), "percent"),
    }


def _memory_values(w, r):
    """GPipe keeps every micro-batch's activations until its backward; 1F1B at most p."""
    p, m = GPT3_LAYOUT["pp"], r.micro_batches
    per_layer = r.activations_per_layer_bytes
    stage_layers = w.shape.layers // p
    gpipe = per_layer * stage_layers * m
    one_f_one_b = per_layer * stage_layers * pipeline.in_flight_micro_batches(p, m)
    state = r.weights_bytes + r.gradients_bytes + r.optimizer_bytes
    return {
        "act_layer": (per_layer, "bytes"),
        "act_gpipe": (gpipe, "bytes"),
        "act_1f1b": (one_f_one_b, "bytes"),
        "in_flight": (pipeline.in_flight_micro_batches(p, m), "count"),
        "state": (state, "bytes"),
        "device": (w.gpu_memory_bytes, "bytes"),
        "mem": (r.memory_bytes, "bytes"),
        "gpipe_verdict": branch(state + gpipe > w.gpu_memory_bytes, "overflows", "fits"),
    }


def _batch_values(example, r):
    """The global batch is fixed: more data parallelism or a bigger micro-batch means fewer micro-batches."""
    wide = dict(GPT3_LAYOUT, pp=GPT3_LAYOUT["pp"] // 2, dp=GPT3_LAYOUT["dp"] * 2)
    _, rw = evaluate(example, **wide)
    fat = dict(GPT3_LAYOUT, micro_batch=2)
    _, rf = evaluate(example, **fat)
    return {
        "wide_pp": (wide["pp"], "count"), "wide_dp": (wide["dp"], "count"),
        "wide_micro": (rw.micro_batches, "count"), "wide_bubble": (rw.bubble_fraction, "percent"),
        "wide_mem": (rw.memory_bytes, "bytes"),
        "wide_verdict": branch(rw.fits, "fits", "overflows"),
        "fat_b": (fat["micro_batch"], "count"), "fat_micro": (rf.micro_batches, "count"),
        "fat_bubble": (rf.bubble_fraction, "percent"), "fat_step": (rf.step_s, "duration"),
        "fat_mem": (rf.memory_bytes, "bytes"),
        "fat_verdict": branch(rf.step_s > r.step_s, "slower", "faster"),
    }


def _interleave_values(example, w, r):
    p = GPT3_LAYOUT["pp"]
    values = {"v": (V, "count")}
    rows = {}
    for v in INTERLEAVE_SWEEP:
        _, rv = evaluate(example, **dict(GPT3_LAYOUT, interleave=v))
        rows[v] = rv
        values[f"v{v}"] = (v, "count")
        values[f"v{v}_bubble"] = (rv.bubble_fraction, "percent")
        values[f"v{v}_bubble_s"] = (rv.pipeline_bubble_s, "duration")
        values[f"v{v}_p2p"] = (rv.pp_p2p_total_s, "duration")
        values[f"v{v}_act"] = (activations.interleave_multiplier(p, v), "plain")
        values[f"v{v}_step"] = (rv.step_s, "duration")
        values[f"v{v}_mem"] = (rv.memory_bytes, "bytes")
    ri = rows[V]
    values.update({
        "bubble_interleaved": (ri.bubble_fraction, "percent"),
        "bubble_s_interleaved": (ri.pipeline_bubble_s, "duration"),
        "p2p": (r.pp_p2p_total_s, "duration"),
        "p2p_interleaved": (ri.pp_p2p_total_s, "duration"),
        "step_interleaved": (ri.step_s, "duration"),
        "act_interleaved": (activations.interleave_multiplier(p, V), "plain"),
    })
    steps = [rows[v].step_s for v in INTERLEAVE_SWEEP]
    values["sweep_verdict"] = branch(all(a > b for a, b in zip(steps, steps[1:])), "monotone", "turns")
    return values


def _llama_values():
    workload, layout = published_run("llama3-405b")
    w, r = evaluate(workload, **layout)
    p, v = layout["pp"], layout["interleave"]
    m = r.micro_batches
    ctx = context_for(w)
    logits_f, logits_b = output_layer_times(ctx, layout["tp"], layout.get("cp", 1), layout["micro_batch"])
    mb = micro_batch(workload, layout)
    # One transformer layer's share of the bottleneck stage's busy time.
    layer_busy = (mb.busy - (logits_f + logits_b if mb.stage == "last" else 0.0)) / mb.layers
    stages = per_stage(workload, layout)
    _, r_plain = evaluate(workload, **dict(layout, interleave=1))
    middle = (w.shape.layers - layout["first_stage_layers"] - layout["last_stage_layers"]) // (p - 2)
    return {
        "llama": (run_name("llama3-405b"), "text"),
        "llama_gpus": (w.gpus, "count"),
        "llama_layers": (w.shape.layers, "count"),
        "llama_pp": (p, "count"),
        "llama_first": (layout["first_stage_layers"], "count"),
        "llama_last": (layout["last_stage_layers"], "count"),
        "llama_middle": (middle, "count"),
        "llama_middle_stages": (p - 2, "count"),
        "llama_vocab": (w.shape.vocab, "count"),
        "llama_output_layers": ((logits_f + logits_b) / layer_busy, "plain"),
        "llama_dp": (layout["dp"], "count"),
        "llama_batch": (w.batch_sequences, "count"),
        "llama_micro": (m, "count"),
        "llama_v": (v, "count"),
        "llama_bubble_plain": (pipeline.bubble_fraction(p, m), "percent"),
        "llama_bubble": (pipeline.bubble_fraction(p, m, v), "percent"),
        "llama_step_plain": (r_plain.step_s, "duration"),
        "llama_step": (r.step_s, "duration"),
        "llama_mem_first": (stages["first"].total, "bytes"),
        "llama_mem_middle": (stages["middle"].total, "bytes"),
        "llama_mem_last": (stages["last"].total, "bytes"),
        "llama_heaviest": case(r.memory_stage, "first", "middle", "last"),
        "llama_fits": branch(r.fits, "fits", "overflows"),
        "llama_device": (w.gpu_memory_bytes, "bytes"),
        "output_verdict": branch((logits_f + logits_b) / layer_busy < 1.0, "under_one", "over_one"),
    }


def _dualpipe_values():
    """DeepSeek-V3's published layout under 1F1B, DualPipe and DualPipeV (Workload.pipeline_schedule)."""
    workload, layout = published_run("deepseek-v3")
    runs = {schedule: evaluate(dict(workload, pipeline_schedule=schedule), **layout)
            for schedule in ("1f1b", "dualpipe", "dualpipev")}
    w, plain = runs["1f1b"]
    dual, v_shaped = runs["dualpipe"][1], runs["dualpipev"][1]

    def state(r):
        return r.weights_bytes + r.gradients_bytes + r.optimizer_bytes

    return {
        "ds_pp": (layout["pp"], "count"), "ds_micro": (plain.micro_batches, "count"),
        "ds_bubble_1f1b": (plain.bubble_fraction, "percent"), "ds_bubble_dual": (dual.bubble_fraction, "percent"),
        "ds_bubble_v": (v_shaped.bubble_fraction, "percent"),
        "ds_step_1f1b": (plain.step_s, "duration"), "ds_step_dual": (dual.step_s, "duration"),
        "ds_state_1f1b": (state(plain), "bytes"), "ds_state_dual": (state(dual), "bytes"),
        "ds_mem_1f1b": (plain.memory_bytes, "bytes"), "ds_mem_dual": (dual.memory_bytes, "bytes"),
        "ds_mem_v": (v_shaped.memory_bytes, "bytes"),
        "ds_usable": (w.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN), "bytes"),
        "ds_dual_fits": branch(dual.memory_bytes <= w.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN),
                               "fits", "overflows"),
    }


def _figures():
    p, m, v = FIGURE_PP, FIGURE_MICRO, FIGURE_V
    figures = {
        "gpipe_1f1b": {"pp": p, "micro": m, "interleave": v, "schedules": ("gpipe", "1f1b")},
        "interleaved": {"pp": p, "micro": m, "interleave": v, "schedules": ("1f1b", "interleaved")},
    }
    values = {
        "fig_pp": (p, "count"), "fig_micro": (m, "count"), "fig_v": (v, "count"),
        "fig_bubble": (pipeline.bubble_fraction(p, m), "percent"),
        "fig_bubble_v": (pipeline.bubble_fraction(p, m, v), "percent"),
        "fig_held_gpipe": (m, "count"),
        "fig_held_1f1b": (pipeline.in_flight_micro_batches(p, m), "count"),
        "fig_held_v": (pipeline.in_flight_micro_batches(p, m) * activations.interleave_multiplier(p, v), "plain"),
    }
    return figures, values


def _exercise_values(example):
    """Answers of the exercises, from the lab state each exercise's link opens."""
    values = {}
    # The lab's plan at the chapter's full batch, which the halved batch is compared with.
    first = recommend(lab_core.Workload(**example))
    base = first.report
    for key, name in (("hb", "halve-batch"), ("mg", "more-gpus"), ("ll", "llama")):
        state = exercise("pipeline", name)
        layout, r = state.layout, state.report
        values.update({
            f"{key}_tp": (layout.tp, "count"), f"{key}_cp": (layout.cp, "count"), f"{key}_pp": (layout.pp, "count"),
            f"{key}_dp": (layout.dp, "count"),
            f"{key}_layout": layout_text(layout), f"{key}_v": (layout.interleave, "count"), f"{key}_b": (layout.micro_batch, "count"),
            f"{key}_micro": (r.micro_batches, "count"), f"{key}_bubble": (r.bubble_fraction, "percent"),
            f"{key}_step": (r.step_s, "duration"), f"{key}_tps": (r.tokens_per_s, "tokens_per_s"),
            f"{key}_mfu": (r.mfu, "percent"), f"{key}_batch": (state.workload.batch_sequences, "count"),
            f"{key}_gpus": (state.workload.gpus, "count"),
        })
    first_layout = first.parallelism
    p0, v0, b0 = first_layout.pp, first_layout.interleave, first_layout.micro_batch
    half = exercise("pipeline", "halve-batch")
    same_m = half.workload.batch_sequences // (first_layout.dp * b0)
    values.update({
        "hb0_tp": (first_layout.tp, "count"), "hb0_cp": (first_layout.cp, "count"), "hb0_pp": (p0, "count"), "hb0_dp": (first_layout.dp, "count"),
        "hb0_v": (v0, "count"), "hb0_micro": (base.micro_batches, "count"),
        "hb0_bubble": (base.bubble_fraction, "percent"), "hb0_tps": (base.tokens_per_s, "tokens_per_s"),
        "hb_tokens": (half.workload.global_batch_tokens, "tokens"),
        "hb_same_micro": (same_m, "count"),
        "hb_same_bubble": (pipeline.bubble_fraction(p0, same_m, v0), "percent"),
        "hb_verdict": branch((half.layout.tp, half.layout.pp, half.layout.dp, half.layout.interleave)
                             == (first_layout.tp, p0, first_layout.dp, v0), "keeps", "changes"),
    })
    # "More GPUs": GPT-3's layout of the chapter, TP x PP fixed, on four times the GPUs.
    more = exercise("pipeline", "more-gpus")
    fixed_dp = more.workload.gpus // (GPT3_LAYOUT["tp"] * GPT3_LAYOUT["pp"])
    fixed_m = more.workload.batch_sequences // fixed_dp
    values.update({
        "mg_fixed_dp": (fixed_dp, "count"), "mg_fixed_micro": (fixed_m, "count"),
        "mg_fixed_bubble": (pipeline.bubble_fraction(GPT3_LAYOUT["pp"], fixed_m), "percent"),
        "mg_verdict": branch(more.layout.pp < GPT3_LAYOUT["pp"] or more.layout.interleave > 1, "adapts", "keeps"),
    })
    # Llama 3 405B as Meta ran it, against the lab's plan for the same workload.
    workload, layout = published_run("llama3-405b")
    _, published = evaluate(workload, **layout)
    llama = exercise("pipeline", "llama")
    values.update({
        "ll_pub_micro": (published.micro_batches, "count"),
        "ll_pub_plain": (pipeline.bubble_fraction(layout["pp"], published.micro_batches), "percent"),
        "ll_pub_bubble": (published.bubble_fraction, "percent"),
        "ll_pub_mfu": (published.mfu, "percent"),
        "ll_verdict": branch(llama.report.mfu > published.mfu, "plan_faster", "published_faster"),
    })
    return values


@chapter("pipeline")
def pipeline_chapter():
    example = gpt3_workload(gpus=GPT3_GPUS)
    w, r = evaluate(example, **GPT3_LAYOUT)
    values = {}
    for part in (_stages_values(example, w, r), _bubble_values(w, r), _memory_values(w, r),
                 _batch_values(example, r), _interleave_values(example, w, r), _llama_values(),
                 _dualpipe_values(), _exercise_values(example)):
        values.update(part)
    figures, figure_values = _figures()
    values.update(figure_values)
    micro = (4, 8, 16, 32, 64, 128, 256)
    series = []
    for stages in (4, 8, 16):
        series.append({"key": "stages", "points": [(mm, 100.0 * pipeline.bubble_fraction(stages, mm)) for mm in micro],
                       "label_values": {"p": (stages, "count")}})
    series.append({"key": "interleaved", "dashed": True,
                   "points": [(mm, 100.0 * pipeline.bubble_fraction(8, mm, V)) for mm in micro],
                   "label_values": {"p": (8, "count"), "v": (V, "count")}})
    chart = {"type": "line", "id": "pipeline", "series": series, "x_log": True, "y_log": True, "text_values": {}}
    return Chapter(values, dict(example), [chart], figures)
