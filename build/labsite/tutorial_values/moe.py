"""Mixture of experts and expert parallelism: DeepSeek-V3's published run
(scenarios/deepseek-v3.yaml; arXiv:2412.19437) for parameters against FLOPs,
routing and balance, the all-to-all and its placement, and Qwen3-235B-A22B
with Megatron-Core (scenarios/qwen3-235b-moe.yaml) for expert parallelism
folded into tensor and data parallelism."""
from lab_core import Workload, calibration as cal, flops
from lab_core.context import context_for
from lab_core.efficiency import gemm_efficiency
from lab_core.moe import mlp_params
from lab_core.shape import mtp_projection_params

from ..figures.moe_alltoall import link_shares
from ..scenarios import load_scenario
from .common import Chapter, case, chapter, evaluate, exercise
from .scenario_runs import branch, micro_batch, most_loaded_stage, published_run, state_values

DEEPSEEK, QWEN = "deepseek-v3", "qwen3-235b-moe"
#: How much busier than average the busiest expert is in the balance example (a teaching input).
HOT_EXPERT = 1.25
#: An efficiency within this factor of another reads as "close to" it in the prose.
CLOSE = 0.85
#: DeepSeek-V3's 16 stages split with the module on a heavier last stage (the ceiling split,
#: lab_core.planner.space.pipeline_splits), beside the scenario's Megatron-Bridge split.
HEAVY_SPLIT = (2, 3)


def _idea_values(w, r):
    sh, e = w.shape, w.shape.experts
    per_token = r.model_flops_per_step / r.tokens_per_step
    return {
        "params": (sh.params, "params"), "active": (sh.active_params, "params"),
        "active_share": (sh.active_params / sh.params, "percent"),
        "layers": (sh.layers, "count"), "dense_layers": (e.dense_layers, "count"), "moe_layers": (e.moe_layers, "count"),
        "experts": (e.count, "count"), "top_k": (e.per_token, "count"), "shared": (e.shared, "count"),
        "expert_params": (e.expert_params, "params"), "routed_layer": (e.routed_params, "params"),
        "hidden": (sh.hidden, "count"),
        "flops_per_token": (per_token, "sci"),
        "dense_flops_per_token": (per_token * sh.params / sh.active_params, "sci"),
        "flops_ratio": (sh.params / sh.active_params, "plain"),
        "ckpt_bpp": (cal.CHECKPOINT_BYTES_PER_PARAM, "plain"), "ckpt": (r.checkpoint_bytes, "bytes"),
        "ckpt_per_gpu": (r.checkpoint_bytes / w.gpus, "bytes"), "ckpt_write": (r.checkpoint_write_s, "duration"),
        "storage": (w.checkpoint_storage_gbps * 1e9, "bytes_per_s"),
        "ckpt_active": (r.checkpoint_bytes * sh.active_params / sh.params, "bytes"),
        "young": (r.young_interval_s, "duration"),
    }


def _memory_values(w, r, layout):
    e = w.shape.experts
    # The most loaded GPU: the first stage's (the embedding, the most micro-batches in flight),
    # not a middle one's, which the sentence once quoted as "the busiest".
    busiest = most_loaded_stage(*published_run(DEEPSEEK))
    _, no_ep = evaluate(published_run(DEEPSEEK)[0], **dict(layout, ep=1))
    return {
        "no_ep_mem": (no_ep.memory_bytes, "bytes"), "device": (w.gpu_memory_bytes, "bytes"),
        "no_ep_verdict": branch(no_ep.fits, "fits", "overflows"),
        "ep": (layout["ep"], "count"), "pp": (layout["pp"], "count"), "dp": (layout["dp"], "count"),
        "gpus": (w.gpus, "count"), "tp": (layout["tp"], "count"),
        "experts_per_gpu": (e.count // layout["ep"], "count"),
        "params_per_gpu": (busiest.params_per_gpu, "params"),
        "mem_busiest": (busiest.total, "bytes"),
        "state_busiest": (busiest.weights + busiest.gradients + busiest.optimizer, "bytes"),
        "act_busiest": (busiest.activations, "bytes"),
        "expert_dp": (layout["tp"] * layout.get("cp", 1) * layout["dp"] // layout["ep"], "count"),
    }


def _balance_values(w):
    """A hot expert: its GPU computes longer, and the whole expert-parallel group waits for it."""
    sh, e = w.shape, w.shape.experts
    gemm, attention = flops.moe_layer_forward_flops(1, w.seq_len, sh.hidden, sh.kv_ratio, e)
    routed = 2.0 * w.seq_len * e.per_token * 2.0 * sh.hidden * e.ffn_hidden
    share = routed / (gemm + attention)
    return {
        "routed_share": (share, "percent"),
        "hot": (HOT_EXPERT - 1.0, "percent"),
        "hot_layer": (share * (HOT_EXPERT - 1.0), "percent"),
        "capacity": (cal.MOE_CAPACITY_FACTOR, "plain"),
    }


def _without_groups(w):
    """The workload's experts routed over all of them (no group limit)."""
    return Workload(**dict(w.to_dict(), expert_groups=0)).shape.experts


def _alltoall_values(workload, layout, w, r):
    e, h = w.shape.experts, w.shape.hidden
    nodes = layout["ep"] // w.gpus_per_node
    if e.groups != nodes:
        raise ValueError(f"{DEEPSEEK}: {e.groups} expert groups on {nodes} nodes; the chapter says a group is one "
                         "node's experts")
    mb = micro_batch(workload, layout)
    kept, nvlink, fabric = link_shares(layout["ep"], w.gpus_per_node)
    per_token = 2.0 * e.per_token * h * 2.0                     # dispatch and combine, 16-bit, k copies
    layer_flops = 2.0 * 3.0 * (mlp_params(h, e.ffn_hidden) * e.used_per_token)  # the experts' forward and backward
    published = next(p["value"] for p in load_scenario(DEEPSEEK).published if p["metric"] == "tokens_per_s")
    compute = r.forward_s + r.backward_s + r.recompute_s
    balance = w.device.fp8_peak_flops / context_for(w).nic_rate
    return {
        "machine_balance": (balance, "count"),
        "balance_verdict": branch(layer_flops / per_token < balance, "comm_bound", "compute_bound"),
        "token_bytes": (per_token, "bytes"), "token_flops": (layer_flops, "sci"),
        "flops_per_byte": (layer_flops / per_token, "count"),
        "kept": (kept, "percent"), "nvlink": (nvlink, "percent"), "fabric": (fabric, "percent"),
        # Copies per token over the fabric: the per-node dispatcher's, with and without the routing's
        # node limit, and the plain all-to-all's.
        "remote_nodes": (e.remote_nodes_per_token(nodes), "plain"),
        "unlimited_nodes": (_without_groups(w).remote_nodes_per_token(nodes), "plain"),
        "plain_fabric_copies": (e.per_token * fabric, "plain"),
        "groups": (e.groups, "count"), "groups_per_token": (e.groups_per_token, "count"),
        "ep_nodes": (nodes, "count"),
        "gpus_per_node": (w.gpus_per_node, "count"), "nic": (w.inter_node_gbps, "gbps"),
        "ep_total": (r.ep_comm_total_s, "duration"), "ep_exposed": (r.ep_comm_s, "duration"),
        "compute": (compute, "duration"), "step": (r.step_s, "duration"),
        "ep_share": (r.ep_comm_s / r.step_s, "percent"),
        "ep_hidden": (1.0 - r.ep_comm_s / r.ep_comm_total_s, "percent"),
        "ep_verdict": branch(r.ep_comm_total_s > compute, "comm_bound", "compute_bound"),
        "exposed_fraction": (cal.MOE_ALLTOALL_EXPOSED, "percent"),
        "contention": (cal.COMM_CONTENTION, "percent"),
        "tokens_per_s": (r.tokens_per_s, "tokens_per_s"), "published": (published, "tokens_per_s"),
        "lab_error": (abs(r.tokens_per_s / published - 1.0), "percent"),
        "lab_side": branch(r.tokens_per_s < published, "below", "above"),
        "mfu": (r.mfu, "percent"), "layer_ep": (mb.ep_comm_total / mb.layers, "duration"),
    }


def _budget_values(w, r):
    """DeepSeek-V3's step by part, and the step with the all-to-all entirely hidden."""
    compute = r.forward_s + r.backward_s + r.recompute_s
    other = r.step_s - compute - r.ep_comm_s - r.tp_comm_s - r.pipeline_bubble_s - r.pp_p2p_s - r.dp_comm_s - r.zero_comm_s
    hidden_step = r.step_s - r.ep_comm_s
    published = next(p["value"] for p in load_scenario(DEEPSEEK).published if p["metric"] == "tokens_per_s")
    hidden_tps = r.tokens_per_step / hidden_step
    return {
        "b_compute": (compute / r.step_s, "percent"), "b_ep": (r.ep_comm_s / r.step_s, "percent"),
        "b_bubble": ((r.pipeline_bubble_s + r.pp_p2p_s) / r.step_s, "percent"),
        "b_dp": ((r.dp_comm_s + r.zero_comm_s) / r.step_s, "percent"), "b_other": (other / r.step_s, "percent"),
        "b_micro": (r.micro_batches, "count"),
        "hidden_step": (hidden_step, "duration"), "hidden_tps": (hidden_tps, "tokens_per_s"),
        "hidden_error": (abs(hidden_tps / published - 1.0), "percent"),
        "hidden_side": branch(hidden_tps > published, "above", "below"),
        "hidden_verdict": branch(hidden_tps > published, "above", "below"),
        "gpu_hours_per_t": (1e12 / r.tokens_per_s * w.gpus / 3600.0, "scaled"),
    }


def _gemm_values(w, layout):
    """Rows each expert's grouped GEMM sees per micro-batch, with and without expert parallelism,
    and the efficiency lab_core.efficiency gives those shapes (DeepGEMM-fitted size curve)."""
    e, h, dev = w.shape.experts, w.shape.hidden, w.device
    tokens = layout["micro_batch"] * w.seq_len
    rows = {ep: ep * tokens / layout["tp"] * e.per_token / e.count for ep in (1, layout["ep"])}
    width = min(h, e.ffn_hidden)
    return {
        "micro_tokens": (tokens, "count"),
        "expert_rows": (rows[layout["ep"]], "count"), "expert_rows_alone": (rows[1], "count"),
        "expert_eff": (gemm_efficiency(dev.id, w.precision, rows[layout["ep"]], width), "percent"),
        "expert_eff_alone": (gemm_efficiency(dev.id, w.precision, rows[1], width), "percent"),
        "dense_eff": (gemm_efficiency(dev.id, w.precision, tokens, h), "percent"),
        "expert_width": (e.ffn_hidden, "count"),
        "expert_vs_dense": branch(gemm_efficiency(dev.id, w.precision, rows[layout["ep"]], width)
                                  > CLOSE * gemm_efficiency(dev.id, w.precision, tokens, h), "close", "below"),
    }


def _qwen_values():
    workload, layout = published_run(QWEN)
    w, r = evaluate(workload, **layout)
    published = next(p["value"] for p in load_scenario(QWEN).published if p["metric"] == "tokens_per_s")
    e = w.shape.experts
    return {
        "q_params": (w.shape.params, "params"), "q_active": (w.shape.active_params, "params"),
        "q_gpus": (w.gpus, "count"), "q_tp": (layout["tp"], "count"), "q_pp": (layout["pp"], "count"),
        "q_dp": (layout["dp"], "count"), "q_ep": (layout["ep"], "count"),
        "q_stage_gpus": (layout["tp"] * layout["dp"], "count"),
        "q_experts": (e.count, "count"), "q_experts_per_gpu": (e.count // layout["ep"], "count"),
        "q_tokens_per_s": (r.tokens_per_s, "tokens_per_s"), "q_published": (published, "tokens_per_s"),
        "q_ep_share": (r.ep_comm_s / r.step_s, "percent"),
    }


def _ep_verdict(layout, report, published_tps):
    """Whether a plan splits the experts, and if not, whether that is slower than the published layout."""
    if layout.ep > 1:
        return "uses_ep"
    return "no_ep_slower" if report.tokens_per_s < published_tps else "no_ep_faster"


def _exercise_values(w, published_tps):
    values = {"fast_ratio": (exercise("moe", "faster-fabric").workload.inter_node_gbps / w.inter_node_gbps, "plain")}
    qwen_workload, qwen_layout = published_run(QWEN)
    qwen_published = evaluate(qwen_workload, **qwen_layout)[1].tokens_per_s
    for key, name in (("plan", "deepseek-plan"), ("topk", "fewer-experts-per-token"), ("fast", "faster-fabric"),
                      ("qwen", "qwen-plan")):
        state = exercise("moe", name)
        values.update(state_values(f"ex_{key}", state))
        values[f"ex_{key}_top_k"] = (state.workload.experts_per_token, "count")
        values[f"ex_{key}_gbps"] = (state.workload.inter_node_gbps, "gbps")
        values[f"ex_{key}_ep_verdict"] = case(_ep_verdict(state.layout, state.report,
                                                          qwen_published if key == "qwen" else published_tps),
                                              "uses_ep", "no_ep_slower", "no_ep_faster")
    return values


#: Megatron-Bridge's DeepSeek-V3 H100 recipe recomputes these (src/megatron/bridge/perf_recipes/deepseek/h100/
#: deepseek_v3.py at commit 067f987d); the paper's own choice is the scenario's.
RECIPE_MODULES = ["mla_up_proj", "mlp"]


def _recompute_values(workload, layout):
    """DeepSeek-V3's published layout with no recompute, each of its recompute modules alone, its
    own three (the scenario's) and Megatron-Bridge's H100 recipe's: what a layer keeps for the
    backward, the busiest GPU and the step (lab_core.recompute_modules, activations.module_savings)."""
    def run(modules, recompute="selective"):
        return evaluate(dict(workload, recompute_modules=modules), **dict(layout, recompute=recompute))[1]

    def layer(r):
        return r.to_dict()["memory"]["activations_per_layer_bytes"]

    none = run(["core_attn"], "none")
    ours = run(workload["recompute_modules"])
    recipe = run(RECIPE_MODULES)
    tokens = workload["seq_len"]
    shape = Workload(**workload).shape
    attention = shape.attention
    values = {
        "rc_heads": (shape.heads, "count"), "rc_qk_dim": (attention.width / shape.heads, "count"),
        "rc_v_dim": (attention.value_width / shape.heads, "count"), "rc_q_width": (attention.width, "count"),
        "rc_hidden": (shape.hidden, "count"),
        "rc_layer_none": (layer(none), "bytes"), "rc_layer_ours": (layer(ours), "bytes"),
        "rc_token_none": (layer(none) / tokens, "bytes"),
        "rc_mem_none": (none.memory_bytes, "bytes"), "rc_mem_ours": (ours.memory_bytes, "bytes"),
        "rc_none_verdict": branch(none.fits, "fits", "overflows"),
        "rc_step_none": (none.step_s, "duration"), "rc_step_ours": (ours.step_s, "duration"),
        "rc_cost_ours": (ours.step_s / none.step_s - 1.0, "percent"),
        "rc_mem_recipe": (recipe.memory_bytes, "bytes"), "rc_step_recipe": (recipe.step_s, "duration"),
    }
    for module in ("layernorm", "mla_up_proj", "moe_act"):
        alone = run([module])
        values[f"rc_saved_{module}"] = (layer(none) - layer(alone), "bytes")
        values[f"rc_cost_{module}"] = (alone.step_s - none.step_s, "duration")
    return values


def _mtp_values(workload, layout):
    """DeepSeek-V3's multi-token-prediction module (arXiv:2412.19437 Sec 2.2; lab_core.shape): its
    parameters, and the step with it on the last stage under two splits of the 16 stages, against
    the scenario's split without it."""
    w, ours = evaluate(workload, **layout)
    _, heavy = evaluate(workload, **dict(layout, first_stage_layers=HEAVY_SPLIT[0], last_stage_layers=HEAVY_SPLIT[1]))
    w0, without = evaluate(dict(workload, mtp_layers=0), **layout)
    return {
        "mtp_params": (w.shape.params - w0.shape.params, "params"),
        "mtp_proj_params": (mtp_projection_params(w.shape.hidden), "params"),
        "mtp_first": (layout["first_stage_layers"], "count"), "mtp_last": (layout["last_stage_layers"], "count"),
        "mtp_heavy_first": (HEAVY_SPLIT[0], "count"), "mtp_heavy_last": (HEAVY_SPLIT[1], "count"),
        "mtp_pp": (layout["pp"], "count"),
        "mtp_tps_heavy": (heavy.tokens_per_s, "tokens_per_s"), "mtp_tps_ours": (ours.tokens_per_s, "tokens_per_s"),
        "mtp_tps_without": (without.tokens_per_s, "tokens_per_s"),
        "mtp_cost": (1.0 - ours.tokens_per_s / without.tokens_per_s, "percent"),
        "mtp_heavy_stage": branch(heavy.bottleneck_stage == "last", "last", "other"),
    }


@chapter("moe")
def moe_chapter():
    workload, layout = published_run(DEEPSEEK)
    w, r = evaluate(workload, **layout)
    values = {}
    for part in (_idea_values(w, r), _memory_values(w, r, layout), _balance_values(w),
                 _alltoall_values(workload, layout, w, r), _gemm_values(w, layout), _budget_values(w, r), _qwen_values(),
                 _recompute_values(workload, layout), _mtp_values(workload, layout),
                 _exercise_values(w, r.tokens_per_s)):
        values.update(part)
    # The published layout's plan-free baseline for the exercises: its throughput and all-to-all share.
    values["pub_tokens_per_s"] = (r.tokens_per_s, "tokens_per_s")
    figures = {"alltoall": {"ep": layout["ep"], "gpus_per_node": w.gpus_per_node, "experts": w.shape.experts.count,
                            "top_k": w.shape.experts.per_token}}
    return Chapter(values, dict(workload), [], figures)
