"""The worked design: a model of Llama 3 70B's shape (arXiv:2407.21783 Table 3)
on 512 H100s, designed step by step on a worksheet (memory, TP, PP, DP,
micro-batch, bubble, DP traffic, activations, checkpoint interval, data),
against the plan lab_core.recommend() returns for the same workload; then
the same cluster for Llama 3 405B (scenarios/llama3-405b.yaml).

The worksheet's layout is not typed: each step picks by the rule the chapter
states (tensor parallelism fills a node; the shallowest pipeline whose stage
fits with room; data parallelism takes the rest; ZeRO-1), so the text can
branch on what the lab finds.
"""
import lab_core
from lab_core import memory, pipeline
from lab_core.comms import ring_time
from lab_core.context import context_for
from lab_core.planner import recommend
from lab_core.planner.assumptions import MEMORY_SAFETY_MARGIN, TIE_TOLERANCE
from lab_core.timing import layer_times

from lab_view.accuracy import run_kind

from ..validation.accuracy import quoted_run_kinds
from .activations import LLAMA70_SHAPE
from .common import Chapter, case, chapter, evaluate, exercise, layout_text
from .scenario_runs import branch, published_run, run_name, state_values

GPUS = 512
WORKLOAD = dict(LLAMA70_SHAPE, gpus=GPUS, gpu="h100_80gb", seq_len=8192, global_batch_tokens=4194304,
                inter_node_gbps=400, training_tokens=2e12)
TP_CHOICES = (2, 4, 8)
#: The interleaving the worksheet tries once its pipeline is chosen.
WORKSHEET_V = 2
#: Exposed traffic below this share of the step reads as "hidden" in the prose.
HIDDEN_SHARE = 0.05
#: Goodput above this reads as "failures are a rounding error" at this size.
FAILURES_NEGLIGIBLE = 0.97


def _layouts(w):
    """The pipeline depths of the worksheet: divisors of the layer count that leave a whole number of replicas."""
    return [p for p in range(1, w.shape.layers + 1)
            if w.shape.layers % p == 0 and GPUS % (w.gpus_per_node * p) == 0]


def _worksheet(w):
    """The worksheet's layout: TP = the node, the shallowest pipeline that fits with the planner's margin."""
    t = w.gpus_per_node
    usable = w.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
    for p in _layouts(w):
        layout = dict(tp=t, pp=p, dp=GPUS // (t * p), zero=1, recompute="none", sequence_parallel=True, micro_batch=1)
        try:
            r = lab_core.evaluate(w, lab_core.Parallelism(**layout))
        except lab_core.LabInputError:
            continue
        if r.memory_bytes <= usable:
            return layout, r, usable
    raise ValueError("the worksheet finds no pipeline depth that fits; the chapter's story needs one")


def _brief_values(w):
    sh = w.shape
    return {
        "params": (sh.params, "params"), "nominal": (WORKLOAD["params"], "params"),
        "layers": (sh.layers, "count"), "hidden": (sh.hidden, "count"),
        "heads": (sh.heads, "count"), "kv_heads": (sh.kv_heads, "count"), "vocab": (sh.vocab, "count"),
        "gpus": (GPUS, "count"), "nodes": (GPUS // w.gpus_per_node, "count"),
        "gpus_per_node": (w.gpus_per_node, "count"), "nic": (w.inter_node_gbps, "gbps"),
        "seq": (w.seq_len, "count"), "batch_tokens": (w.global_batch_tokens, "tokens"),
        "batch": (w.batch_sequences, "count"), "training_tokens": (w.training_tokens, "scaled"),
        "device": (w.gpu_memory_bytes, "bytes"),
        "usable": (w.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN), "bytes"),
        "margin": (MEMORY_SAFETY_MARGIN, "percent"), "tie": (TIE_TOLERANCE, "percent"),
        "hidden_share": (HIDDEN_SHARE, "percent"), "failures_negligible": (FAILURES_NEGLIGIBLE, "percent"),
    }


def _memory_values(w):
    sh, state = w.shape, w.state_bytes_per_param
    total = sh.params * state
    return {
        "state_bytes": (state, "count"), "state_total": (total, "bytes"),
        "weights_total": (memory.WEIGHT_BYTES * sh.params, "bytes"),
        "min_gpus": (total / w.gpu_memory_bytes, "plain"),
        "weights_verdict": branch(memory.WEIGHT_BYTES * sh.params > w.gpu_memory_bytes, "too_big", "fits"),
    }


def _tp_values(w):
    """The tensor-parallel all-reduces' share of a layer's time at each degree (timing.layer_times)."""
    ctx = context_for(w)
    sh, s = w.shape, w.seq_len
    values = {}
    for t in TP_CHOICES:
        values[f"tp{t}_share"] = (_tp_share(w, t), "percent")
        values[f"tp{t}_weights"] = (memory.WEIGHT_BYTES * sh.params / t, "bytes")
        values[f"tp{t}_state"] = (sh.params * w.state_bytes_per_param / t, "bytes")
        values[f"tp{t}"] = (t, "count")
    across = ring_time(2.0 * s * sh.hidden, w.gpus_per_node * 2, ctx.nic_rate)
    within = ring_time(2.0 * s * sh.hidden, w.gpus_per_node, ctx.nvlink_rate)
    values["allreduce_nvlink"] = (within, "duration")
    values["ws_tp_share"] = (_tp_share(w, w.gpus_per_node), "percent")
    values["allreduce_fabric"] = (across, "duration")
    return values


def _pp_values(w, layout, r):
    t = layout["tp"]
    rows = {}
    for p in _layouts(w)[:4]:
        trial = dict(layout, pp=p, dp=GPUS // (t * p))
        _, rr = evaluate(WORKLOAD, **trial)
        rows[p] = rr
    values = {}
    for index, (p, rr) in enumerate(rows.items()):
        values[f"pp_row{index}"] = (p, "count")
        values[f"pp_row{index}_dp"] = (GPUS // (t * p), "count")
        values[f"pp_row{index}_state"] = (rr.weights_bytes + rr.gradients_bytes + rr.optimizer_bytes, "bytes")
        values[f"pp_row{index}_act"] = (rr.activations_bytes, "bytes")
        values[f"pp_row{index}_mem"] = (rr.memory_bytes, "bytes")
        values[f"pp_row{index}_fits"] = branch(rr.memory_bytes <= w.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN),
                                                "fits", "overflows")
    values.update({
        "ws_tp": (t, "count"), "ws_pp": (layout["pp"], "count"), "ws_dp": (layout["dp"], "count"),
        "ws_layers_per_stage": (w.shape.layers // layout["pp"], "count"),
        "ws_mem": (r.memory_bytes, "bytes"),
    })
    return values


def _schedule_values(w, layout, r):
    p, d = layout["pp"], layout["dp"]
    m = r.micro_batches
    v_layout = dict(layout, interleave=WORKSHEET_V)
    try:
        _, rv = evaluate(WORKLOAD, **v_layout)
        v_ok = True
    except lab_core.LabInputError:
        rv, v_ok = r, False
    return {
        "ws_per_replica": (w.batch_sequences // d, "count"), "ws_micro": (m, "count"),
        "ws_bubble": (pipeline.bubble_fraction(p, m), "percent"),
        "ws_bubble_s": (r.pipeline_bubble_s, "duration"), "ws_step": (r.step_s, "duration"),
        "ws_v": (WORKSHEET_V, "count"),
        "ws_bubble_v": (pipeline.bubble_fraction(p, m, WORKSHEET_V), "percent"),
        "ws_step_v": (rv.step_s, "duration"), "ws_mem_v": (rv.memory_bytes, "bytes"),
        "ws_v_verdict": case(_v_verdict(v_ok, rv, r, w), "faster", "slower", "overflows", "invalid"),
        "ws_pipe_verdict": branch(p > 1, "pipeline", "no_pipeline"),
    }


def _v_verdict(valid, rv, r, w):
    if not valid:
        return "invalid"
    if rv.memory_bytes > w.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN):
        return "overflows"
    return "faster" if rv.step_s < r.step_s else "slower"


def _sync_values(w, layout, r):
    grads = r.params_per_gpu * memory.gradient_bytes_per_param(w.state_bytes_per_param)
    return {
        "ws_params_per_gpu": (r.params_per_gpu, "params"), "ws_grads": (grads, "bytes"),
        "ws_dp_total": (r.dp_comm_total_s, "duration"), "ws_dp_exposed": (r.dp_comm_s, "duration"),
        "ws_dp_share": (r.dp_comm_s / r.step_s, "percent"),
        "ws_backward": (r.backward_s / r.micro_batches, "duration"),
        "ws_dp_verdict": branch(r.dp_comm_s < HIDDEN_SHARE * r.step_s, "hidden", "visible"),
        "ws_zero": (layout["zero"], "count"), "ws_optimizer": (r.optimizer_bytes, "bytes"),
    }


def _activation_values(w, layout, r):
    return {
        "ws_act": (r.activations_bytes, "bytes"), "ws_act_layer": (r.activations_per_layer_bytes, "bytes"),
        "ws_state": (r.weights_bytes + r.gradients_bytes + r.optimizer_bytes, "bytes"),
        "ws_headroom": (w.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN) - r.memory_bytes, "bytes"),
        "ws_in_flight": (pipeline.in_flight_micro_batches(layout["pp"], r.micro_batches), "count"),
        "ws_mfu": (r.mfu, "percent"), "ws_tokens_per_s": (r.tokens_per_s, "tokens_per_s"),
    }


def _checkpoint_values(w, r):
    return {
        "ckpt": (r.checkpoint_bytes, "bytes"), "ckpt_write": (r.checkpoint_write_s, "duration"),
        "storage": (w.checkpoint_storage_gbps * 1e9, "bytes_per_s"),
        "mtti": (r.mtti_s, "duration"), "per_day": (r.interruptions_per_day, "plain"),
        "young": (r.young_interval_s, "duration"), "daly": (r.daly_interval_s, "duration"),
        "goodput_daly": (r.goodput_at_daly, "percent"), "goodput_default": (r.goodput, "percent"),
        "default_interval": (r.checkpoint_interval_s, "duration"),
        "failures_verdict": branch(r.goodput_at_daly > FAILURES_NEGLIGIBLE, "small", "large"),
    }


def _data_values(w, r):
    nodes = GPUS // w.gpus_per_node
    return {
        "per_node": (r.tokens_per_s / nodes, "scaled"), "loader_ratio": (r.loader_ratio, "percent"),
        "read": (r.required_read_bytes_per_s, "bytes_per_s"), "storage_ratio": (r.storage_ratio, "percent"),
        "loader_verdict": branch(r.loader_ratio <= 1.0, "keeps_up", "starved"),
    }


def _tp_share(w, t):
    """The tensor-parallel all-reduces' share of one layer's time at degree ``t``."""
    ctx = context_for(w)
    sh = w.shape
    lt = layer_times(w.seq_len, 1, sh.hidden, sh.heads, sh.ffn_hidden, t, t > 1, "none", True, ctx.flops_rate,
                     ctx.hbm_rate, ctx.nvlink_rate, ctx.kv_ratio, w.dropout)
    return lt.tp_comm / (lt.forward + lt.backward + lt.tp_comm)


def _plan_values(w, layout, r):
    plan = recommend(w)
    p, pr = plan.parallelism, plan.report
    values = {
        "plan_tp_share": (_tp_share(w, p.tp), "percent"),
        "plan_tp": (p.tp, "count"), "plan_cp": (p.cp, "count"), "plan_pp": (p.pp, "count"), "plan_dp": (p.dp, "count"),
        "plan_zero": (p.zero, "count"), "plan_v": (p.interleave, "count"),
        "plan_micro_batch": (p.micro_batch, "count"), "plan_recompute": (p.recompute, "text"),
        "plan_step": (pr.step_s, "duration"), "plan_mem": (pr.memory_bytes, "bytes"), "plan_mfu": (pr.mfu, "percent"),
        "plan_tokens_per_s": (pr.tokens_per_s, "tokens_per_s"), "plan_bubble": (pr.bubble_fraction, "percent"),
        "plan_dp_exposed": (pr.dp_comm_s, "duration"), "plan_tp_exposed": (pr.tp_comm_s, "duration"),
        "plan_days": (pr.train_time_s / 86400.0, "days"),
        "plan_days_failures": ((pr.train_time_with_failures_s or pr.train_time_s) / 86400.0, "days"),
        "ws_days": (r.train_time_s / 86400.0, "days"),
        "plan_gain": (abs(r.step_s / pr.step_s - 1.0), "percent"),
        "plan_vs_ws": branch(pr.step_s < r.step_s, "faster", "not_faster"),
        "plan_same_tp": branch(p.tp == layout["tp"], "same", "different"),
        "plan_same_pp": branch(p.pp == layout["pp"], "same", "different"),
        "plan_trade": branch(pr.memory_bytes > r.memory_bytes and pr.waiting_s() < r.waiting_s(), "headroom", "other"),
        "ws_waiting": (r.waiting_s(), "duration"), "plan_waiting": (pr.waiting_s(), "duration"),
        "plan_stage": case(plan.stage, *lab_core.planner.STAGES),
    }
    alternatives = plan.alternatives
    best = alternatives[0] if alternatives else None
    values["alt_reason"] = case(best["reason"] if best else "none", "slower_step", "lower_goodput",
                                "more_complex_near_tie", "faster_within_tie", "none")
    shown = best or {"parallelism": p.to_dict(), "step_s": pr.step_s, "mfu": pr.mfu}
    for dim in ("tp", "cp", "pp", "dp", "zero"):
        values[f"alt_{dim}"] = (shown["parallelism"][dim], "count")
    values["alt_recompute"] = (shown["parallelism"]["recompute"], "text")
    values["alt_step"] = (shown["step_s"], "duration")
    values["alt_mfu"] = (shown["mfu"], "percent")
    chart = {"type": "stacked", "id": "design", "categories": [("worksheet", {}), ("planner", {})],
             "segments": _segments((r, pr)), "text_values": {"params": (w.shape.params, "params"),
                                                             "gpus": (GPUS, "count")},
             "y_unit": "seconds"}
    figure = {"tp": p.tp, "pp": p.pp, "dp": p.dp, "gpus_per_node": w.gpus_per_node}
    return values, chart, figure


def _segments(reports):
    parts = {"compute": [], "tp": [], "pipeline": [], "dp": [], "other": []}
    for r in reports:
        compute = r.forward_s + r.backward_s + r.recompute_s
        parts["compute"].append(compute)
        parts["tp"].append(r.tp_comm_s + r.cp_comm_s + r.ep_comm_s)
        parts["pipeline"].append(r.pipeline_bubble_s + r.pp_p2p_s)
        parts["dp"].append(r.dp_comm_s + r.zero_comm_s)
        parts["other"].append(r.step_s - compute - r.tp_comm_s - r.cp_comm_s - r.ep_comm_s - r.pipeline_bubble_s
                              - r.pp_p2p_s - r.dp_comm_s - r.zero_comm_s)
    return [(key, parts[key]) for key in ("compute", "tp", "pipeline", "dp", "other")]


#: The sensitivity table: one input of the brief changed at a time.
SENSITIVITY = (("slow", {"inter_node_gbps": 200}), ("fast", {"inter_node_gbps": 800}),
               ("small_batch", {"global_batch_tokens": 2097152}), ("short", {"seq_len": 4096}))


def _sensitivity_values(plan_tokens_per_s):
    values = {}
    for key, change in SENSITIVITY:
        plan = recommend(lab_core.Workload(**dict(WORKLOAD, **change)))
        p, r = plan.parallelism, plan.report
        values.update({
            f"s_{key}_tp": (p.tp, "count"), f"s_{key}_cp": (p.cp, "count"), f"s_{key}_pp": (p.pp, "count"),
            f"s_{key}_dp": (p.dp, "count"),
            f"s_{key}_zero": (p.zero, "count"), f"s_{key}_v": (p.interleave, "count"),
            f"s_{key}_mfu": (r.mfu, "percent"), f"s_{key}_tokens_per_s": (r.tokens_per_s, "tokens_per_s"),
            f"s_{key}_change": (abs(r.tokens_per_s / plan_tokens_per_s - 1.0), "percent"),
            f"s_{key}_side": branch(r.tokens_per_s >= plan_tokens_per_s, "up", "down"),
        })
    for key, change in SENSITIVITY:
        name, value = next(iter(change.items()))
        kind = {"inter_node_gbps": "gbps", "global_batch_tokens": "tokens", "seq_len": "count"}[name]
        values[f"s_{key}_input"] = (value, kind)
    return values


def _accuracy_values(w):
    """How far the model was from published runs like this brief's, none used to fit it
    (labsite.validation.accuracy, the kind the lab quotes under its figures): how much a
    margin between two plans means."""
    if w.experts:
        raise ValueError("the chapter's words for the kind of run say a dense model; the brief is one")
    kind = run_kind([k.to_dict() for k in quoted_run_kinds()], w.to_dict())
    level = ("gpu" if kind["architecture"] is not None else "model" if kind["moe"] is not None
             else "stack" if kind["stack"] is not None else "all")
    return {"acc_runs": (kind["runs"], "count"), "acc_median": (kind["median"], "percent"),
            "acc_bound": (kind["bound"], "percent"), "acc_bias": (abs(kind["bias"]), "percent"),
            "acc_side": branch(kind["bias"] < 0.0, "slow", "fast"),
            "acc_level": case(level, "gpu", "model", "stack", "all")}


def _variant_values():
    """Llama 3 405B on the same 512 H100s: its published workload with this cluster's GPU count."""
    workload, _ = published_run("llama3-405b")
    w = lab_core.Workload(**dict(workload, gpus=GPUS))
    plan = recommend(w)
    p, pr = plan.parallelism, plan.report
    state = w.shape.params * w.state_bytes_per_param
    small = lab_core.Workload(**WORKLOAD)
    return {
        "big_ratio": (w.shape.params / small.shape.params, "plain"),
        "big_gpu_ratio": (published_run("llama3-405b")[0]["gpus"] / GPUS, "count"),
        "big": (run_name("llama3-405b"), "text"), "big_params": (w.shape.params, "params"),
        "big_state": (state, "bytes"), "big_min_gpus": (state / w.gpu_memory_bytes, "plain"),
        "big_batch": (w.batch_sequences, "count"),
        "big_tp": (p.tp, "count"), "big_pp": (p.pp, "count"), "big_dp": (p.dp, "count"), "big_zero": (p.zero, "count"),
        "big_layout": layout_text(p),
        "big_recompute": (p.recompute, "text"), "big_v": (p.interleave, "count"),
        "big_mem": (pr.memory_bytes, "bytes"), "big_step": (pr.step_s, "duration"), "big_mfu": (pr.mfu, "percent"),
        "big_days": (pr.train_time_s / 86400.0, "days"), "big_tokens": (w.training_tokens, "scaled"),
        "big_fits": branch(plan.fits, "fits", "overflows"),
        "big_ckpt": (pr.checkpoint_bytes, "bytes"), "big_young": (pr.young_interval_s, "duration"),
    }


def _exercise_values(layout):
    values = {}
    long = exercise("design", "long-context")
    try:
        ws_long = lab_core.evaluate(long.workload, lab_core.Parallelism(**layout))
        fits = ws_long.memory_bytes <= long.workload.gpu_memory_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
        values["ex_long_ws_mem"] = (ws_long.memory_bytes, "bytes")
    except lab_core.LabInputError:
        fits = False
        values["ex_long_ws_mem"] = (0.0, "bytes")
    values["ex_long_break"] = branch(not fits, "activations", "nothing")
    for key, name in (("batch", "twice-the-batch"), ("gpus", "twice-the-gpus"), ("long", "long-context"),
                      ("big", "bigger-cluster")):
        values.update(state_values(f"ex_{key}", exercise("design", name)))
    return values


def _bigger_cluster_verdict(values):
    """Whether the bigger cluster's plan holds the state as the 512-GPU plan of the same model
    does (_variant_values' big_*): the same ZeRO stage and recompute."""
    same = all(values[f"ex_big_{field}"][0] == values[f"big_{field}"][0] for field in ("zero", "recompute"))
    return {"ex_big_verdict": branch(same, "same_state", "changed")}


def _adopt_interleaving(w, layout, r):
    """The worksheet's layout after step four: interleaved when that fits and is faster."""
    trial = dict(layout, interleave=WORKSHEET_V)
    try:
        rv = lab_core.evaluate(w, lab_core.Parallelism(**trial))
    except lab_core.LabInputError:
        return layout, r
    if _v_verdict(True, rv, r, w) == "faster":
        return trial, rv
    return layout, r


@chapter("design")
def design_chapter():
    w = lab_core.Workload(**WORKLOAD)
    plain, r_plain, _ = _worksheet(w)
    layout, r = _adopt_interleaving(w, plain, r_plain)
    values = {}
    for part in (_brief_values(w), _memory_values(w), _tp_values(w), _pp_values(w, plain, r_plain),
                 _schedule_values(w, plain, r_plain), _sync_values(w, layout, r), _activation_values(w, layout, r),
                 _checkpoint_values(w, r), _data_values(w, r), _variant_values(), _exercise_values(layout),
                 _accuracy_values(w)):
        values.update(part)
    values.update(_bigger_cluster_verdict(values))
    plan_values, chart, figure = _plan_values(w, layout, r)
    values.update(plan_values)
    values.update(_sensitivity_values(plan_values["plan_tokens_per_s"][0]))
    return Chapter(values, dict(WORKLOAD), [chart], {"plan": figure})
