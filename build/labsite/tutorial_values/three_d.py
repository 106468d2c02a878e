"""3D parallelism and the topology: GPT-3 175B on 1,024 A100s
(arXiv:2104.04473 Table 1) laid out by hand and by the planner, the traffic
of each dimension, and the published runs that add context and expert
parallelism (scenarios/llama3-405b*.yaml, deepseek-v3.yaml)."""
import lab_core
from lab_core.context import context_for
from lab_core.hardware import DEFAULT_GPU, GPU_PRESETS
from lab_core.planner import recommend
from lab_core.planner.assumptions import TIE_TOLERANCE
from lab_core.planner.search import Choices
from lab_core.planner.space import space_for

from ..reference import gpt3_workload
from ..scenarios import load_scenario
from .common import Chapter, GPT3_GPUS, case, chapter, evaluate, exercise
from .scenario_runs import branch, published_run, run_name, state_values

LAYOUTS_3D = (
    dict(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1, interleave=3),
    dict(tp=8, pp=16, dp=8, recompute="selective", sequence_parallel=True, micro_batch=1),
    dict(tp=4, pp=16, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1),
    dict(tp=2, pp=32, dp=16, recompute="full", micro_batch=1),
    dict(tp=8, pp=2, dp=64, zero=1, recompute="full", micro_batch=1),
)
#: Published runs of the "beyond three dimensions" table, with the metric compared.
PUBLISHED = (("llama3-405b", "mfu_percent"), ("llama3-405b-128k", "mfu_percent"), ("deepseek-v3", "tokens_per_s"))


def _layout_label(layout):
    return {"tp": (layout["tp"], "count"), "pp": (layout["pp"], "count"), "dp": (layout["dp"], "count")}


def _traffic_values(w, r, layout):
    """What each dimension sends per GPU per step on the first layout, and over which link."""
    t, p, d, v = layout["tp"], layout["pp"], layout["dp"], layout.get("interleave", 1)
    s, h, m = w.seq_len, w.shape.hidden, r.micro_batches
    message = 2.0 * s * h                                          # b s h 16-bit values, b = 1
    layers = w.shape.layers // p
    tp_bytes = m * layers * 4 * 2.0 * (t - 1) / t * message       # four ring all-reduces a layer
    pp_bytes = m * 2 * v * message / t                             # forward and backward, every chunk
    dp_bytes = 2.0 * (d - 1) / d * r.params_per_gpu * 2.0          # ring all-reduce of 16-bit gradients
    return {
        "tr_tp_bytes": (tp_bytes, "bytes"), "tr_tp_time": (r.tp_comm_total_s, "duration"),
        "tr_tp_exposed": (r.tp_comm_s, "duration"),
        "tr_pp_bytes": (pp_bytes, "bytes"), "tr_pp_time": (r.pp_p2p_total_s, "duration"),
        "tr_pp_exposed": (r.pp_p2p_s, "duration"),
        "tr_dp_bytes": (dp_bytes, "bytes"), "tr_dp_time": (r.dp_comm_total_s, "duration"),
        "tr_dp_exposed": (r.dp_comm_s, "duration"),
        "tr_step": (r.step_s, "duration"),
        "tr_tp_over_dp": (tp_bytes / dp_bytes, "plain"),
        "tr_nvlink": (w.device.nvlink_bytes_per_s, "bytes_per_s"),
        "tr_nic": (w.inter_node_gbps, "gbps"),
        "tr_nvlink_over_nic": (w.device.nvlink_bytes_per_s / (w.inter_node_gbps * 1e9 / 8.0), "plain"),
    }


def _published_values():
    values, rows = {}, []
    for index, (scenario_id, metric) in enumerate(PUBLISHED):
        workload, layout = published_run(scenario_id)
        w, r = evaluate(workload, **layout)
        published = next(p["value"] for p in load_scenario(scenario_id).published if p["metric"] == metric)
        key = f"pub{index}"
        values.update({
            f"{key}_gpus": (w.gpus, "count"), f"{key}_tp": (layout["tp"], "count"),
            f"{key}_cp": (layout.get("cp", 1), "count"), f"{key}_pp": (layout["pp"], "count"),
            f"{key}_dp": (layout["dp"], "count"), f"{key}_ep": (layout.get("ep", 1), "count"),
            f"{key}_seq": (w.seq_len, "count"),
        })
        if metric == "mfu_percent":
            values[f"{key}_lab"] = (r.mfu, "percent")
            values[f"{key}_published"] = (published / 100.0, "percent")
            error = r.mfu / (published / 100.0) - 1.0
        else:
            values[f"{key}_lab"] = (r.tokens_per_s, "tokens_per_s")
            values[f"{key}_published"] = (published, "tokens_per_s")
            error = r.tokens_per_s / published - 1.0
        values[f"{key}_error"] = (abs(error), "percent")
        values[f"{key}_side"] = branch(error > 0, "above", "below")
        rows.append(error)
    values["llama"] = (run_name("llama3-405b"), "text")
    return values


def _plan_values(w, plan, hand):
    layout, pr = plan.parallelism.to_dict(), plan.report
    values = {}
    for name in ("tp", "cp", "pp", "dp", "zero", "micro_batch", "interleave"):
        values[f"plan_{name}"] = (layout[name], "count")
    values["plan_recompute"] = (layout["recompute"], "text")
    values["plan_layers_per_chunk"] = (w.shape.layers // (layout["pp"] * layout["interleave"]), "count")
    values["plan_accumulation"] = (pr.micro_batches, "count")
    values["plan_step"] = (pr.step_s, "duration")
    values["plan_mem"] = (pr.memory_bytes, "bytes")
    values["plan_mfu"] = (pr.mfu, "percent")
    best = min(range(len(hand)), key=lambda i: (not hand[i].fits, hand[i].step_s))
    values["best_step"] = (hand[best].step_s, "duration")
    values["best_days"] = (hand[best].train_time_s / 86400.0, "days")
    values["plan_days"] = (pr.train_time_s / 86400.0, "days")
    values["plan_gain"] = (abs(1.0 - pr.step_s / hand[best].step_s), "percent")
    values["plan_verdict"] = branch(pr.step_s < hand[best].step_s, "faster", "not_faster")
    values["tokens"] = (w.training_tokens, "scaled")
    values["alternatives"] = (len(plan.alternatives), "count")
    values["search_layouts"] = (plan.search["layouts"], "count")
    values["search_space"] = (_space_size(lab_core.Workload(**dict(w.to_dict(), gpus=plan.gpus_used))), "count")
    values["search_evaluated"] = (plan.search["plans_evaluated"], "count")
    values["tie"] = (TIE_TOLERANCE, "percent")
    return values


def _space_size(w):
    """Plans in the planner's space for the workload: every grid's ZeRO stages x recompute
    modes x (micro-batch, interleaving) pairs, as the search's own Choices name them
    (what an exhaustive search would evaluate)."""
    ctx = context_for(w)
    choices = Choices(ctx, None)
    total = 0
    for grid in space_for(w).layouts(w.gpus):
        replica = ctx.batch_sequences // grid.dp
        rows = sum(len(choices.interleaves(grid, ctx.layers, replica // b)) for b in choices.micro_batches(replica))
        total += len(choices.zeros(grid)) * len(choices.modes) * rows
    return total


def _budget_values(plan):
    """Where the planner's step goes, and MFU as compute share times kernel speed."""
    r = plan.report
    compute = r.forward_s + r.backward_s + r.recompute_s
    shares = {
        "bud_compute": compute, "bud_tp": r.tp_comm_s + r.cp_comm_s + r.ep_comm_s,
        "bud_pipeline": r.pipeline_bubble_s + r.pp_p2p_s, "bud_dp": r.dp_comm_s + r.zero_comm_s,
        "bud_optimizer": r.optimizer_s,
    }
    values = {key: (seconds / r.step_s, "percent") for key, seconds in shares.items()}
    values["bud_kernel"] = (r.mfu * r.step_s / compute, "percent")
    values["bud_mfu"] = (r.mfu, "percent")
    largest = max((k for k in shares if k != "bud_compute"), key=lambda k: shares[k])
    values["bud_largest"] = case(largest[len("bud_"):], "tp", "pipeline", "dp", "optimizer")
    return values


def _exercise_values(plan):
    """The plans the exercises' links open, against the chapter's plan."""
    base = plan.parallelism
    values = {}
    for name in ("slow-fabric", "twice-the-gpus", "h100", "half-the-gpus"):
        state = exercise("three_d", name)
        key = name.split("-")[0]
        layout = state.layout
        values.update(state_values(f"ex_{key}", state))
        values[f"ex_{key}_same"] = branch((layout.tp, layout.pp) == (base.tp, base.pp), "same", "different")
    slow = exercise("three_d", "slow-fabric").workload
    values["ex_slow_gbps"] = (slow.inter_node_gbps, "gbps")
    values["ex_twice_gpus"] = (exercise("three_d", "twice-the-gpus").workload.gpus, "count")
    values["ex_twice_speedup"] = (exercise("three_d", "twice-the-gpus").report.tokens_per_s / plan.report.tokens_per_s,
                                  "plain")
    values["ex_twice_scaling"] = branch(values["ex_twice_speedup"][0] < 1.95, "sublinear", "linear")
    h100 = exercise("three_d", "h100").workload.device
    values["ex_h100_flops_ratio"] = (h100.peak_flops / GPU_PRESETS[DEFAULT_GPU].peak_flops, "plain")
    values["ex_h100_nvlink_ratio"] = (h100.nvlink_bytes_per_s / GPU_PRESETS[DEFAULT_GPU].nvlink_bytes_per_s, "plain")
    values["plan_tokens_per_s"] = (plan.report.tokens_per_s, "tokens_per_s")
    values["plan_dp_exposed"] = (plan.report.dp_comm_s, "duration")
    return values


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
              "batch": (w.batch_sequences, "count"), "layers": (w.shape.layers, "count")}
    hand = reports[:-1]
    for index, (layout, r) in enumerate(zip(layouts[:-1], hand)):
        for name in ("tp", "cp", "pp", "dp"):
            values[f"l{index}_{name}"] = (layout.get(name, 1), "count")
        values[f"l{index}_step"] = (r.step_s, "duration")
        values[f"l{index}_mem"] = (r.memory_bytes, "bytes")
        values[f"l{index}_mfu"] = (r.mfu, "percent")
        values[f"l{index}_bubble"] = (r.bubble_fraction, "percent")
        values[f"l{index}_dp_exposed"] = (r.dp_comm_s, "duration")
        values[f"l{index}_tp_exposed"] = (r.tp_comm_s, "duration")
    values["l0_v"] = (LAYOUTS_3D[0]["interleave"], "count")
    values["l4_zero"] = (LAYOUTS_3D[4]["zero"], "count")
    values["nodes_per_replica"] = (LAYOUTS_3D[0]["tp"] * LAYOUTS_3D[0]["pp"] // w.gpus_per_node, "count")
    values["replicas_per_stage_group"] = (LAYOUTS_3D[0]["dp"], "count")
    values["half_tp_verdict"] = branch(hand[2].step_s > hand[1].step_s, "tp_wins", "pp_wins")
    values["more_dp_verdict"] = branch(hand[4].dp_comm_s > hand[0].dp_comm_s, "dp_costs", "dp_free")
    values.update(_traffic_values(w, hand[0], LAYOUTS_3D[0]))
    values.update(_published_values())
    values.update(_plan_values(w, plan, hand))
    values.update(_budget_values(plan))
    values.update(_exercise_values(plan))
    chart = {"type": "stacked", "id": "three_d", "categories": categories,
             "segments": [(key, segments[key]) for key in ("compute", "tp", "pipeline", "dp", "other")],
             "text_values": {"params": (w.shape.params, "params"), "gpus": (w.gpus, "count")},
             "y_unit": "seconds"}
    l0 = LAYOUTS_3D[0]
    figures = {"mesh": {"tp": l0["tp"], "pp": l0["pp"], "dp": l0["dp"], "gpus_per_node": w.gpus_per_node}}
    return Chapter(values, dict(example), [chart], figures)
