"""Activation memory and recomputation: Korthikanti et al.'s ledger
on GPT-3 175B (arXiv:2205.05198), what today's layers change (Llama 3 405B's
published run, scenarios/llama3-405b.yaml), and when recomputation becomes
necessary as sequences grow (a Llama-3-70B-shaped model on 512 H100s)."""
import math

import lab_core
from lab_core import activations, flops
from lab_core.memory import WEIGHT_BYTES
from lab_core.parallelism import RECOMPUTE_MODES
from lab_core.planner import recommend

from ..reference import gpt3, gpt3_workload
from .common import Chapter, GB, GPT3_GPUS, GPT3_LAYOUT, case, chapter, evaluate, exercise, layout_text
from .scenario_runs import branch, per_stage, published_run, run_name

#: Llama 3 70B's shape (arXiv:2407.21783 Table 3) on 512 H100s, 4M-token batches:
#: the sequence-length sweep of this chapter and the worked design chapter's model.
LLAMA70_SHAPE = dict(params=70e9, layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=43008,
                     vocab=128256, dropout=False)
SWEEP_WORKLOAD = dict(LLAMA70_SHAPE, gpus=512, gpu="h100_80gb", global_batch_tokens=4194304, inter_node_gbps=400)
SWEEP_LAYOUT = dict(tp=8, pp=4, dp=16, zero=1, sequence_parallel=True, micro_batch=1)
SWEEP_SEQ = (2048, 4096, 8192, 16384, 32768, 65536)
MODES = (("tp", False, "none"), ("tp_sp", True, "none"), ("tp_selective", False, "selective"),
         ("tp_sp_selective", True, "selective"), ("full", False, "full"))


def _ledger_values(model):
    """Korthikanti's byte count of one GPT layer, op by op (arXiv:2205.05198 §4.1)."""
    s, h, a, L = model["seq_len"], model["hidden"], model["heads"], model["layers"]
    sbh = float(s) * h
    plain = activations.per_layer_bytes(s, 1, h, a)
    scores = plain - activations.per_layer_bytes(s, 1, h, a, flash_attention=True)
    return {
        "params": (model["params"], "params"), "seq": (s, "count"), "hidden": (h, "count"),
        "heads": (a, "count"), "layers": (L, "count"),
        "five_as_h": (5.0 * a * s / h, "plain"),
        "linear_part": (plain - scores, "bytes"),
        "scores_part": (scores, "bytes"),
        "plain_layer": (plain, "bytes"),
        "plain_model": (plain * L, "bytes"),
        "sbh": (sbh, "bytes"),
        "scores_verdict": branch(scores > plain - scores, "scores_win", "linear_wins"),
    }


def _split_values(model):
    s, h, a, L, V = model["seq_len"], model["hidden"], model["heads"], model["layers"], model["vocab"]
    t = GPT3_LAYOUT["tp"]
    values = {"tp": (t, "count")}
    base, scores, categories = [], [], []
    for key, sp, rc in MODES:
        total = activations.per_layer_bytes(s, 1, h, a, t, sp, rc)
        flash = activations.per_layer_bytes(s, 1, h, a, t, sp, rc, flash_attention=True)
        values[f"layer_{key}"] = (total, "bytes")
        values[f"stack_{key}"] = (total * L, "bytes")
        base.append(flash / GB)
        scores.append((total - flash) / GB)
        categories.append((key, {}))
    values["replicated"] = (10.0 * s * h, "bytes")
    # PyTorch's eager TP keeps the all-gathered QKV and first-MLP inputs (activations.gathered_input_bytes).
    gathered = activations.gathered_input_bytes(s, 1, h, t, WEIGHT_BYTES)
    values["gathered_extra"] = (gathered, "bytes")
    values["gathered_share"] = (gathered / values["layer_tp_sp"][0], "percent")
    values["flash_layer"] = (activations.per_layer_bytes(s, 1, h, a, t, True, "none", flash_attention=True), "bytes")
    values["saved_selective"] = (1.0 - values["layer_tp_sp_selective"][0] / values["layer_tp_sp"][0], "percent")
    values["reduction"] = (values["layer_tp"][0] / values["layer_tp_sp_selective"][0], "plain")
    values["selective_overhead"] = (flops.hardware_flops_selective_eq8(1, s, L, h, V)
                                    / flops.model_flops_eq7(1, s, L, h, V) - 1.0, "percent")
    values["full_overhead"] = (flops.hardware_flops_full_eq3(1, s, L, h, V) / flops.model_flops_eq7(1, s, L, h, V)
                               - 1.0, "percent")
    chart = {"type": "stacked", "id": "activations", "categories": categories,
             "segments": [("stored", base), ("scores", scores)],
             "text_values": {"params": (model["params"], "params"), "tp": (t, "count"), "seq": (s, "count")},
             "y_unit": "bytes_gb"}
    return values, chart


def _run_values(example):
    """Selective + SP against full recomputation on the whole GPT-3 run."""
    w, r_sel = evaluate(example, **GPT3_LAYOUT)
    _, r_full = evaluate(example, **dict(GPT3_LAYOUT, recompute="full", sequence_parallel=False))
    # Korthikanti's GPT-3 ran without flash attention: there the scores are stored unless recomputed.
    eager = dict(example, flash_attention=False)
    _, r_none = evaluate(eager, **dict(GPT3_LAYOUT, recompute="none"))
    _, r_eager_sel = evaluate(eager, **GPT3_LAYOUT)
    _, r_flash_none = evaluate(example, **dict(GPT3_LAYOUT, recompute="none"))
    return {
        "pp": (GPT3_LAYOUT["pp"], "count"),
        "step_selective": (r_sel.step_s, "duration"),
        "step_full": (r_full.step_s, "duration"),
        "speedup": (r_full.step_s / r_sel.step_s - 1.0, "percent"),
        "mem_selective": (r_sel.memory_bytes, "bytes"),
        "act_selective": (r_sel.activations_bytes, "bytes"),
        "working_full": (r_full.activations_working_bytes, "bytes"),
        "mfu_full": (r_full.mfu, "percent"),
        "hfu_full": (r_full.hfu, "percent"),
        "mfu_selective": (r_sel.mfu, "percent"),
        "hfu_selective": (r_sel.hfu, "percent"),
        "none_mem": (r_none.memory_bytes, "bytes"),
        "eager_selective_mem": (r_eager_sel.memory_bytes, "bytes"),
        "flash_none_mem": (r_flash_none.memory_bytes, "bytes"),
        "device": (w.gpu_memory_bytes, "bytes"),
        "none_verdict": branch(r_none.fits, "fits", "overflows"),
        "flash_verdict": branch(r_flash_none.fits, "fits", "overflows"),
    }


def _modern_values():
    """What grouped-query attention, a SwiGLU MLP, no dropout and flash attention do to the ledger."""
    workload, layout = published_run("llama3-405b")
    w = lab_core.Workload(**workload)
    sh, s, t = w.shape, w.seq_len, layout["tp"]
    kw = dict(ffn_hidden=sh.ffn_hidden, kv_ratio=sh.kv_ratio, dropout=w.dropout)
    eager = activations.per_layer_bytes(s, 1, sh.hidden, sh.heads, t, True, "none", False, **kw)
    flash = activations.per_layer_bytes(s, 1, sh.hidden, sh.heads, t, True, "none", True, **kw)
    units = flash / (s * sh.hidden / t)
    fp8 = activations.per_layer_bytes(s, 1, sh.hidden, sh.heads, t, True, "none", True, fp8_inputs=True, **kw)
    _, r = evaluate(workload, **layout)
    stages = per_stage(workload, layout)
    p, v = layout["pp"], layout["interleave"]
    return {
        "l_pp": (p, "count"), "l_v": (v, "count"),
        "l_multiplier": (activations.interleave_multiplier(p, v), "plain"),
        "l_first_layers": (layout["first_stage_layers"], "count"),
        "l_first_in_flight": (p, "count"),
        "l_middle_in_flight": (p - 1, "count"),
        "l_act_first": (stages["first"].activations, "bytes"),
        "l_act_middle": (stages["middle"].activations, "bytes"),
        "l_act_last": (stages["last"].activations, "bytes"),
        "l_logits": (stages["last"].loss, "bytes"),
        "l_vocab": (sh.vocab, "count"),
        "llama": (run_name("llama3-405b"), "text"),
        "l_seq": (s, "count"), "l_hidden": (sh.hidden, "count"), "l_heads": (sh.heads, "count"),
        "l_kv_heads": (sh.kv_heads, "count"), "l_tp": (t, "count"),
        "l_ffn_ratio": (sh.ffn_hidden / sh.hidden, "plain"),
        "l_eager": (eager, "bytes"),
        "l_flash": (flash, "bytes"),
        "l_units": (units, "plain"),
        "l_fp8": (fp8, "bytes"), "l_fp8_saved": (1.0 - fp8 / flash, "percent"),
        "l_stage_act": (r.activations_bytes, "bytes"),
        "l_recompute": case(layout["recompute"], *RECOMPUTE_MODES),
    }


def _sweep():
    """First-stage activations against the sequence length, without and with
    full recomputation, and the memory left for them after the model state."""
    rows = []
    for seq in SWEEP_SEQ:
        ex = dict(SWEEP_WORKLOAD, seq_len=seq)
        _, none = evaluate(ex, **dict(SWEEP_LAYOUT, recompute="none"))
        _, full = evaluate(ex, **dict(SWEEP_LAYOUT, recompute="full"))
        rows.append((seq, none, full))
    seq0, none0, _ = rows[0]
    room = none0.device_bytes - (none0.memory_bytes - none0.activations_bytes)
    first_over = next((seq for seq, none, _ in rows if not none.fits), None)
    full_over = next((seq for seq, _, full in rows if not full.fits), None)
    values = {
        "sw_params": (SWEEP_WORKLOAD["params"], "params"), "sw_gpus": (SWEEP_WORKLOAD["gpus"], "count"),
        "sw_tp": (SWEEP_LAYOUT["tp"], "count"), "sw_cp": (SWEEP_LAYOUT.get("cp", 1), "count"), "sw_pp": (SWEEP_LAYOUT["pp"], "count"),
        "sw_dp": (SWEEP_LAYOUT["dp"], "count"), "sw_batch": (SWEEP_WORKLOAD["global_batch_tokens"], "tokens"),
        "sw_room": (room, "bytes"),
        "sw_short": (seq0, "count"), "sw_short_act": (none0.activations_bytes, "bytes"),
        "sw_long": (rows[-1][0], "count"), "sw_long_act": (rows[-1][1].activations_bytes, "bytes"),
        "sw_long_full": (rows[-1][2].activations_bytes, "bytes"),
        "sw_turn": branch(first_over is not None, "turns", "never"),
    }
    # Every case's words must render whichever case the numbers pick, so the
    # values of the other case exist too (the longest length stands in).
    over_index = next((i for i, (seq, none, _) in enumerate(rows) if seq == first_over), len(rows) - 1)
    over = rows[over_index]
    values.update({"sw_first_over": (over[0], "count"),
                   "sw_over_act": (over[1].activations_bytes, "bytes"),
                   "sw_over_full_step": (over[2].step_s, "duration"),
                   "sw_before_step": (rows[max(over_index - 1, 0)][1].step_s, "duration")})
    values["sw_full_verdict"] = branch(full_over is None, "full_fits", "full_overflows")
    values["sw_full_over"] = (full_over or rows[-1][0], "count")
    # Partial recomputation at the first length that overflows: recompute just enough of the first
    # stage's layers (Megatron-LM's --recompute-num-layers) to fit in the room left.
    stage_layers = LLAMA70_SHAPE["layers"] // SWEEP_LAYOUT["pp"]
    excess = over[1].activations_bytes - room
    per_layer_saving = (over[1].activations_bytes - over[2].activations_bytes) / stage_layers
    needed = min(stage_layers, max(0, math.ceil(excess / per_layer_saving))) if per_layer_saving > 0 else stage_layers
    values.update({
        "sw_stage_layers": (stage_layers, "count"), "sw_excess": (max(excess, 0.0), "bytes"),
        "sw_layer_saving": (per_layer_saving, "bytes"), "sw_partial_layers": (needed, "count"),
        "sw_partial_share": (needed / stage_layers, "percent"),
    })
    values.update(_partial_values(dict(SWEEP_WORKLOAD, seq_len=over[0]), stage_layers, over[2]))
    series = [{"key": key, "dashed": key == "full",
               "points": [(seq, (none if key == "none" else full).activations_bytes / GB) for seq, none, full in rows]}
              for key in ("none", "full")]
    chart = {"type": "line", "id": "activations_seq", "series": series, "x_log": True, "y_log": True,
             "reference": (room / GB, {"room": (room, "bytes")}),
             "text_values": {"params": (SWEEP_WORKLOAD["params"], "params"), "gpus": (SWEEP_WORKLOAD["gpus"], "count"),
                             "tp": (SWEEP_LAYOUT["tp"], "count"), "pp": (SWEEP_LAYOUT["pp"], "count")}}
    return values, chart


def _partial_values(workload, stage_layers, full):
    """The lab's own partial recompute at the sweep's first overflowing length: the fewest
    layers of each stage (recompute_layers, Megatron's block method) whose plan fits, its
    step against full recomputation's (`full`, that length's Report with every layer)."""
    fitting = next((n for n in range(1, stage_layers + 1)
                    if evaluate(workload, **dict(SWEEP_LAYOUT, recompute="full", recompute_layers=n))[1].fits),
                   stage_layers)
    _, partial = evaluate(workload, **dict(SWEEP_LAYOUT, recompute="full", recompute_layers=fitting))
    return {"sw_lab_partial_layers": (fitting, "count"), "sw_partial_step": (partial.step_s, "duration"),
            "sw_partial_gain": (1.0 - partial.step_s / full.step_s, "percent"),
            "sw_partial_mem": (partial.memory_bytes, "bytes")}


def _exercise_values(example):
    """Answers of the exercises: the chapter's GPT-3 layout at 8K tokens, and the
    lab's plans (what each exercise's link opens) for the 70B model."""
    state = exercise("activations", "gpt3-8k")
    long = state.inputs
    _, r_long = evaluate(long, **GPT3_LAYOUT)
    _, r_long_full = evaluate(long, **dict(GPT3_LAYOUT, recompute="full"))
    values = {
        "ex_long_seq": (state.workload.seq_len, "count"),
        "ex_long_batch": (state.workload.batch_sequences, "count"),
        "ex_long_micro": (r_long.micro_batches, "count"),
        "ex_long_act": (r_long.activations_bytes, "bytes"),
        "ex_long_mem": (r_long.memory_bytes, "bytes"),
        "ex_long_verdict": branch(r_long.fits, "fits", "overflows"),
        "ex_long_full_mem": (r_long_full.memory_bytes, "bytes"),
        "ex_long_full_step": (r_long_full.step_s, "duration"),
        "ex_long_full_verdict": branch(r_long_full.fits, "fits", "overflows"),
    }
    for name, exercise_id in (("gpt3", "gpt3-8k"), ("eager", "no-flash"), ("long", "long-32k"), ("drop", "dropout")):
        plan = exercise("activations", exercise_id)
        p, r = plan.layout, plan.report
        values[f"ex_plan_{name}_recompute"] = (p.recompute, "text")
        values[f"ex_plan_{name}_layout"] = layout_text(p)
        for dim in ("tp", "cp", "pp", "dp", "micro_batch"):
            values[f"ex_plan_{name}_{dim}"] = (getattr(p, dim), "count")
        values[f"ex_plan_{name}_mfu"] = (r.mfu, "percent")
        values[f"ex_plan_{name}_mem"] = (r.memory_bytes, "bytes")
        values[f"ex_plan_{name}_act"] = (r.activations_bytes, "bytes")
        values[f"ex_plan_{name}_seq"] = (plan.workload.seq_len, "count")
    flash = recommend(lab_core.Workload(**dict(exercise("activations", "no-flash").inputs, flash_attention=True)))
    values["ex_plan_flash_recompute"] = (flash.parallelism.recompute, "text")
    values["ex_plan_flash_mfu"] = (flash.report.mfu, "percent")
    eager_layer = activations.per_layer_bytes(*_layer_args(exercise("activations", "no-flash").workload, False))
    flash_layer = activations.per_layer_bytes(*_layer_args(exercise("activations", "no-flash").workload, True))
    values["ex_eager_layer"] = (eager_layer, "bytes")
    values["ex_flash_layer"] = (flash_layer, "bytes")
    values["ex_eager_ratio"] = (eager_layer / flash_layer, "plain")
    dropped = exercise("activations", "dropout").workload
    values["ex_drop_seq"] = (dropped.seq_len, "count")
    values["ex_drop_layer"] = (activations.per_layer_bytes(*_layer_args(dropped, True)), "bytes")
    return values


def _layer_args(w, flash):
    """per_layer_bytes arguments for one sequence of ``w`` on the sweep's tensor parallelism, with sequence parallelism."""
    sh = w.shape
    return (w.seq_len, 1, sh.hidden, sh.heads, SWEEP_LAYOUT["tp"], True, "none", flash, sh.ffn_hidden, sh.kv_ratio,
            w.dropout)


@chapter("activations")
def activations_chapter():
    example, model = gpt3_workload(gpus=GPT3_GPUS), gpt3()
    values = _ledger_values(model)
    split, chart = _split_values(model)
    values.update(split)
    values.update(_run_values(example))
    values.update(_modern_values())
    sweep, sweep_chart = _sweep()
    values.update(sweep)
    values.update(_exercise_values(example))
    figures = {"timeline": {"params": model["params"], "seq": model["seq_len"], "tp": GPT3_LAYOUT["tp"],
                            "sequence_parallel": True, "flash_attention": False, "gpu": "a100_80gb"}}
    return Chapter(values, dict(example), [chart, sweep_chart], figures)
