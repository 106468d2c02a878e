"""Long context and context parallelism: Llama 3 405B's 128K stage
(scenarios/llama3-405b-128k.yaml; arXiv:2407.21783 §3.3.2, §3.4.2, Table 4)
against its 8K stage, the load-balanced ring of Megatron-Core's context
parallelism (ring attention, arXiv:2310.01889) and DeepSpeed-Ulysses'
all-to-all (arXiv:2309.14509)."""
import lab_core
from lab_core import activations, calibration as cal, flops
from lab_core.comms import point_to_point_time
from lab_core.context import context_for
from lab_core.efficiency import attention_rate, gemm_efficiency
from lab_core.parallelism import zero_stages
from lab_core.planner import recommend
from lab_core.planner.assumptions import MEMORY_SAFETY_MARGIN
from lab_view.view import MFU_COUNTS_DIFFER

from ..scenarios import load_scenario
from .common import Chapter, case, chapter, evaluate, exercise
from .scenario_runs import branch, micro_batch, most_loaded_stage, published_run, run_name

LONG, SHORT = "llama3-405b-128k", "llama3-405b"
#: The context-parallel figure: a ring small enough to draw.
FIGURE_CP = 4


def _why_values(w_short, w_long, layout):
    sh, t = w_long.shape, layout["tp"]
    kw = dict(ffn_hidden=sh.ffn_hidden, kv_ratio=sh.kv_ratio, dropout=w_long.dropout)
    values = {"llama": (run_name(SHORT), "text"), "tp": (t, "count")}
    for key, w in (("short", w_short), ("long", w_long)):
        s = w.seq_len
        gemm, attention = flops.layer_forward_flops(1, s, sh.hidden, sh.ffn_hidden, sh.kv_ratio)
        values[f"{key}_seq"] = (s, "count")
        values[f"{key}_attention_share"] = (attention / (gemm + attention), "percent")
        values[f"{key}_layer_act"] = (activations.per_layer_bytes(s, 1, sh.hidden, sh.heads, t, True, "none", True,
                                                                  **kw), "bytes")
    middle = (sh.layers - layout["first_stage_layers"] - layout["last_stage_layers"]) // (layout["pp"] - 2)
    values["middle_layers"] = (middle, "count")
    values["long_stage_one_mb"] = (middle * values["long_layer_act"][0], "bytes")
    values["device"] = (w_long.gpu_memory_bytes, "bytes")
    values["seq_ratio"] = (w_long.seq_len / w_short.seq_len, "count")
    values["one_mb_verdict"] = branch(values["long_stage_one_mb"][0] > w_long.gpu_memory_bytes, "overflows", "fits")
    return values


#: A short sequence for the attention kernel's share of peak (the kernel's rate grows with the sequence).
SHORT_KERNEL_TOKENS = 1024


def _recipe_values(w_short, w_long, layout):
    """Training FLOPs per token at the two lengths (lab_core.flops.shape_model_flops), and the share of the
    GPU's peak the long run's attention kernel and GEMMs reach on each GPU's s / cp tokens (lab_core.efficiency)."""
    per_token = {}
    for key, w in (("short", w_short), ("long", w_long)):
        per_token[key] = flops.shape_model_flops(1, w.seq_len, w.shape) / w.seq_len
    ctx = context_for(w_long)
    device, tokens = ctx.device, w_long.seq_len // layout["cp"]

    def attention_share(n):
        return attention_rate(device, n) * ctx.attention_factor / device.peak_flops

    gemm_share = gemm_efficiency(device.id, w_long.precision, tokens, ctx.hidden / layout["tp"]) * ctx.compute_factor
    return {
        "short_flops_token": (per_token["short"], "sci"), "long_flops_token": (per_token["long"], "sci"),
        "flops_token_ratio": (per_token["long"] / per_token["short"], "plain"),
        "gpu_tokens": (tokens, "count"), "kernel_short_tokens": (SHORT_KERNEL_TOKENS, "count"),
        "attention_peak": (attention_share(tokens), "percent"), "gemm_peak": (gemm_share, "percent"),
        "attention_peak_short": (attention_share(SHORT_KERNEL_TOKENS), "percent"),
        "attention_verdict": branch(attention_share(tokens) < gemm_share, "below", "above"),
    }


def _kernel_values(workload, layout):
    """Both stages on the PyTorch-native stack, attention on PyTorch SDPA's FlashAttention-2
    or on Transformer Engine's kernel (Workload.te_attention), nothing else changed between
    the two: what the kernel costs at each length (lab_core.calibration.STACK_ATTENTION_EFFICIENCY).
    The layouts keep their ZeRO stage where that stack runs it with their pipeline, else take
    the highest it does (lab_core.parallelism.zero_stages: FSDP under PyTorch's pipeline is ZeRO-1)."""
    values = {"sdpa_factor": (cal.STACK_ATTENTION_EFFICIENCY["torch_native"]
                              / cal.STACK_ATTENTION_EFFICIENCY["modern"], "percent")}
    for key, (inputs, lay) in (("long", (workload, layout)), ("short", published_run(SHORT))):
        runnable = zero_stages("torch_native", lay.get("pp", 1), True)
        lay = dict(lay, zero=max(z for z in runnable if z <= lay.get("zero", 0)))
        sdpa, te = (evaluate(dict(inputs, stack="torch_native", te_attention=on), **lay)[1] for on in (False, True))
        values[f"{key}_sdpa_step"] = (sdpa.step_s, "duration")
        values[f"{key}_te_step"] = (te.step_s, "duration")
        values[f"{key}_kernel_cost"] = (sdpa.step_s / te.step_s - 1.0, "percent")
    return values


def _run_values(workload, layout, w, r):
    published = {p["metric"]: p["value"] for p in load_scenario(LONG).published}
    busiest = most_loaded_stage(workload, layout)
    short_workload, short_layout = published_run(SHORT)
    _, rs = evaluate(short_workload, **short_layout)
    short_published = {p["metric"]: p["value"] for p in load_scenario(SHORT).published}
    return {
        "gpus": (w.gpus, "count"), "cp": (layout["cp"], "count"), "pp": (layout["pp"], "count"),
        "dp": (layout["dp"], "count"), "short_dp": (short_layout["dp"], "count"),
        "batch_tokens": (w.global_batch_tokens, "tokens"),
        "batch": (w.batch_sequences, "count"), "short_batch": (rs.micro_batches * short_layout["dp"], "count"),
        "micro": (r.micro_batches, "count"),
        "step": (r.step_s, "duration"), "short_step": (rs.step_s, "duration"),
        "mfu": (r.mfu, "percent"), "short_mfu": (rs.mfu, "percent"),
        "mfu_causal": (r.mfu_causal, "percent"), "short_mfu_causal": (rs.mfu_causal, "percent"),
        "published_mfu": (published["mfu_percent"] / 100.0, "percent"),
        "short_published_mfu": (short_published["mfu_percent"] / 100.0, "percent"),
        "published_tflops": (published["model_tflops_per_gpu"] * 1e12, "flops"),
        "lab_tflops": (r.model_flops_per_s_per_gpu, "flops"),
        "mem_busiest": (busiest.total, "bytes"),
        "busiest_stage": case(busiest.stage, "first", "middle", "last"),
        "device_memory": (r.device_bytes, "bytes"),
        "mem_verdict": branch(busiest.total <= r.device_bytes, "fits", "over"),
        "act_busiest": (busiest.activations, "bytes"),
        "cp_total": (r.cp_comm_total_s, "duration"), "cp_exposed": (r.cp_comm_s, "duration"),
        "cp_share": (r.cp_comm_s / r.step_s, "percent"),
        "mfu_drop": (1.0 - r.mfu / rs.mfu, "percent"),
        "published_drop": (1.0 - published["mfu_percent"] / short_published["mfu_percent"], "percent"),
        "drop_verdict": branch(r.mfu < rs.mfu, "drops", "holds"),
        "short_micro": (rs.micro_batches, "count"),
        "micro_verdict": branch(r.micro_batches == rs.micro_batches, "same", "different"),
        "bubble": (r.bubble_fraction, "percent"), "short_bubble": (rs.bubble_fraction, "percent"),
        "sync_ranks": (layout["dp"] * layout["cp"], "count"), "short_sync_ranks": (short_layout["dp"], "count"),
        "dp_total": (r.dp_comm_total_s, "duration"), "short_dp_total": (rs.dp_comm_total_s, "duration"),
        "dp_exposed": (r.dp_comm_s, "duration"), "short_dp_exposed": (rs.dp_comm_s, "duration"),
    }


def _ring_values(workload, layout, w):
    """One ring step: the K/V block a rank passes on, against the attention it overlaps."""
    ctx = context_for(w)
    t, cp, s = layout["tp"], layout["cp"], w.seq_len
    h, r = ctx.hidden, ctx.kv_ratio
    block = 2.0 * 2.0 * (s / cp) * h * r / t          # K and V, 16-bit, this rank's heads
    link = ctx.nvlink_rate if t * cp <= ctx.gpus_per_node else ctx.nic_rate
    send = point_to_point_time(block, link)
    # One block of causal attention on this rank: 4 b (s/cp)^2 h / t FLOPs, half of it masked.
    attention_block = 0.5 * 4.0 * (s / cp) ** 2 * h / t / (attention_rate(ctx.device, s / cp) * ctx.attention_factor)
    # The layer's exchange as Megatron-Core's ring runs it (the section's subject), not as the
    # run's all-gather, which exposes all of it (cp_all_gather: the "run" section's figures).
    mb = micro_batch(dict(workload, cp_all_gather=False), layout)
    whole_kv = 2.0 * 2.0 * s * h * r / t
    return {
        "chunks": (2 * cp, "count"), "chunk_tokens": (s // (2 * cp), "count"),
        "rank_tokens": (s // cp, "count"),
        "block_bytes": (block, "bytes"), "send": (send, "duration"), "attention_block": (attention_block, "duration"),
        "ring_steps": (cp - 1, "count"),
        "over_fabric": branch(t * cp > ctx.gpus_per_node, "fabric", "nvlink"),
        "tp_cp": (t * cp, "count"), "gpus_per_node": (ctx.gpus_per_node, "count"),
        "overlap_verdict": branch(send < attention_block, "hidden", "exposed"),
        "layer_cp_total": (mb.cp_comm_total / mb.layers, "duration"),
        "layer_cp_exposed": (mb.cp_comm / mb.layers, "duration"),
        "kv_heads": (w.shape.kv_heads, "count"), "heads": (w.shape.heads, "count"),
        "kv_factor": (w.shape.heads // w.shape.kv_heads, "count"),
        "whole_kv": (whole_kv, "bytes"),
        "kv_per_tp_rank": (w.shape.kv_heads // t, "count"),
        # Bytes one GPU sends per layer, forward: the ring (or an all-gather) passes (cp - 1)/cp of the
        # sequence's keys and values; Ulysses (arXiv:2309.14509 §3) all-to-alls its queries, keys, values
        # and output, (cp - 1)/cp of each, on its own s/cp tokens, with no tensor parallelism beside it.
        "ring_layer": ((cp - 1.0) / cp * whole_kv, "bytes"),
        "ulysses_layer": ((cp - 1.0) / cp * (s / cp) * h * 2.0 * (2.0 + 2.0 * r), "bytes"),
        "ring_vs_ulysses": branch((cp - 1.0) / cp * whole_kv < (cp - 1.0) / cp * (s / cp) * h * 2.0 * (2.0 + 2.0 * r),
                                  "ring_less", "ulysses_less"),
        "ulysses_limit": branch(w.shape.kv_heads // t < cp, "too_few_heads", "enough_heads"),
    }


def _memory_values(workload, layout, w, r):
    """The same 128K run without context parallelism: the replicas absorb the CP ranks."""
    flat = dict(layout, cp=1, dp=layout["dp"] * layout["cp"], interleave=1)
    _, rf = evaluate(workload, **flat)
    return {
        "flat_dp": (flat["dp"], "count"), "flat_micro": (rf.micro_batches, "count"),
        "flat_mem": (rf.memory_bytes, "bytes"), "flat_act": (rf.activations_bytes, "bytes"),
        "flat_verdict": branch(rf.fits, "fits", "overflows"),
        "weights": (r.weights_bytes, "bytes"), "flat_weights": (rf.weights_bytes, "bytes"),
    }


def _plan_values(w):
    plan = recommend(w)
    p, r = plan.parallelism, plan.report
    return {
        "plan_tp": (p.tp, "count"), "plan_cp": (p.cp, "count"), "plan_pp": (p.pp, "count"),
        "plan_dp": (p.dp, "count"), "plan_mfu": (r.mfu, "percent"), "plan_step": (r.step_s, "duration"),
        "plan_mem": (r.memory_bytes, "bytes"),
        "plan_verdict": branch(p.cp > 1, "uses_cp", "no_cp"),
    }


def _exercise_values(published):
    values = {}
    for key, name in (("mid", "llama-32k"), ("seventy", "seventy-128k"), ("small", "eight-128k"),
                      ("full", "llama-128k-plan")):
        state = exercise("long_context", name)
        p, r, ew = state.layout, state.report, state.workload
        values.update({
            f"ex_{key}_seq": (ew.seq_len, "count"), f"ex_{key}_gpus": (ew.gpus, "count"),
            f"ex_{key}_params": (ew.shape.params, "params"), f"ex_{key}_batch": (ew.batch_sequences, "count"),
            f"ex_{key}_tp": (p.tp, "count"), f"ex_{key}_cp": (p.cp, "count"), f"ex_{key}_pp": (p.pp, "count"),
            f"ex_{key}_dp": (p.dp, "count"), f"ex_{key}_recompute": (p.recompute, "text"),
            f"ex_{key}_mfu": (r.mfu, "percent"), f"ex_{key}_mem": (r.memory_bytes, "bytes"),
            f"ex_{key}_cp_verdict": branch(p.cp > 1, "uses_cp", "no_cp"),
            f"ex_{key}_in_node": branch(p.tp * p.cp <= ew.gpus_per_node, "inside", "across"),
        })
    values.update(_versus_published(published))
    return values


def _versus_published(published):
    """Why the planner's 128K layout differs from the published one: faster in the lab's model, or
    slower because the published layout needs more memory than the planner allows itself."""
    usable = published.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
    if exercise("long_context", "llama-128k-plan").report.mfu > published.mfu:
        verdict = "better"
    else:
        verdict = "worse_margin" if published.memory_bytes > usable else "worse"
    return {
        "ex_full_vs_published": case(verdict, "better", "worse_margin", "worse"),
        "ex_published_mem": (published.memory_bytes, "bytes"), "ex_usable": (usable, "bytes"),
        "ex_margin": (MEMORY_SAFETY_MARGIN, "percent"),
    }


# The counting section's small model: the lab's default size at the long stage's length.
TINY = {"params": 1.3e9, "gpus": 8, "seq_len": 131072, "global_batch_tokens": 4 * 1048576}


def _counting_values():
    """MFU by Eq 7 and counted once (throughput.mfu_causal) for the planner's plan of TINY."""
    tiny = recommend(lab_core.Workload(**TINY)).report
    return {"tiny_params": (TINY["params"], "params"), "tiny_gpus": (TINY["gpus"], "count"),
            "tiny_mfu": (tiny.mfu, "percent"), "tiny_mfu_causal": (tiny.mfu_causal, "percent"),
            "mfu_counts_differ": (MFU_COUNTS_DIFFER, "percent")}


@chapter("long_context")
def long_context_chapter():
    workload, layout = published_run(LONG)
    w, r = evaluate(workload, **layout)
    w_short = lab_core.Workload(**published_run(SHORT)[0])
    values = {}
    for part in (_why_values(w_short, w, layout), _recipe_values(w_short, w, layout),
                 _kernel_values(workload, layout),
                 _run_values(workload, layout, w, r), _ring_values(workload, layout, w),
                 _memory_values(workload, layout, w, r), _plan_values(w), _exercise_values(r),
                 _counting_values()):
        values.update(part)
    values["fig_cp"] = (FIGURE_CP, "count")
    figures = {"ring": {"cp": FIGURE_CP, "seq": w.seq_len}}
    return Chapter(values, dict(workload), [], figures)
