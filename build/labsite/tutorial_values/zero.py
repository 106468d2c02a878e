"""Chapter ZeRO and sharded data parallelism: its numbers, every one computed by lab_core."""
from lab_core import collectives, memory
from lab_core.context import context_for

from .common import GB, ZERO_STATE_BYTES, Chapter, case, chapter, evaluate, exercise

PARAMS, DP = 7.5e9, 64
EXAMPLE = dict(params=PARAMS, gpus=DP, seq_len=2048, global_batch_tokens=2048 * 128, inter_node_gbps=200,
               state_bytes_per_param=ZERO_STATE_BYTES)
STACKS = (("2021", "megatron_lm_2021"), ("modern", "modern"))
#: A batch four times larger: more micro-batches per step, for gradient accumulation under ZeRO-2.
BIG_BATCH = 4
#: Hybrid sharding: a model on H100s, fully sharded or sharded inside each node of 8.
HSDP = dict(params=13e9, gpus=256, seq_len=4096, global_batch_tokens=4 * 1048576, inter_node_gbps=400,
            gpu="h100_80gb")
HSDP_SHARD = 8
#: ZeRO++ (arXiv:2306.10209 Sec 4): bytes per parameter that cross the nodes per micro-batch —
#: the forward weight gather in int8 (qwZ), the backward gather from a secondary shard inside the
#: node (hpZ: none), the gradient reduce-scatter in int4 (qgZ); ZeRO-3 sends 16-bit in all three.
ZEROPP_BYTES = (1.0, 0.0, 0.5)
ZERO3_BYTES = (2.0, 2.0, 2.0)


def _stages(values, segments, categories):
    for stage in range(4):
        wts, grads, opt = memory.model_state_parts(PARAMS, ZERO_STATE_BYTES, DP, stage)
        values[f"stage{stage}"] = (wts + grads + opt, "bytes")
        segments["weights"].append(wts / GB)
        segments["gradients"].append(grads / GB)
        segments["optimizer"].append(opt / GB)
        categories.append(("stage", {"stage": (stage, "count")}))
        for key, stack in STACKS:
            w, r = evaluate(dict(EXAMPLE, stack=stack), dp=DP, zero=stage, micro_batch=1)
            total = r.dp_comm_total_s + r.zero_comm_total_s
            values[f"step{stage}_{key}"] = (r.step_s, "duration")
            values[f"comm{stage}_{key}"] = (total, "duration")
            values[f"exposed{stage}_{key}"] = (r.dp_comm_s + r.zero_comm_s, "duration")
            values[f"hidden{stage}_{key}"] = (1.0 - (r.dp_comm_s + r.zero_comm_s) / total, "percent")
            values[f"mem{stage}"] = (r.memory_bytes, "bytes")
            values["micro_batches"] = (r.micro_batches, "count")
    values["device"] = (w.gpu_memory_bytes, "bytes")
    values["fits0"] = case("fits" if values["mem0"][0] <= w.gpu_memory_bytes else "over", "fits", "over")
    for key, _ in STACKS:
        ratio = values[f"step3_{key}"][0] / values[f"step2_{key}"][0]
        verdict = "much_slower" if ratio > 1.5 else ("slower" if ratio > 1.0 else "not_slower")
        values[f"z3_verdict_{key}"] = case(verdict, "much_slower", "slower", "not_slower")
    slower = values["step2_modern"][0] > values["step1_modern"][0] * (1.0 + 1e-9)
    values["stage2_repeat"] = case("slower" if slower else "same", "slower", "same")
    ratio = values["comm3_2021"][0] / values["comm3_modern"][0]
    values["z3_ratio"] = (ratio, "plain")


def _accumulation(values):
    """ZeRO-2 (a reduce-scatter after every micro-batch's backward, sync.earlier_syncs)
    against ZeRO-1 (Megatron's distributed optimizer: accumulate locally, reduce-scatter once), both
    followed by one all-gather of the 16-bit weights: the lab's own traffic of the two stages, and
    the bytes each GPU sends."""
    for label, batch in (("", EXAMPLE["global_batch_tokens"]), ("_big", BIG_BATCH * EXAMPLE["global_batch_tokens"])):
        inputs = dict(EXAMPLE, global_batch_tokens=batch)
        w, stage2 = evaluate(inputs, dp=DP, zero=2, micro_batch=1)
        _, stage1 = evaluate(inputs, dp=DP, zero=1, micro_batch=1)
        m = stage2.micro_batches
        values[f"ga_m{label}"] = (m, "count")
        values[f"ga_stage2{label}"] = (stage2.dp_comm_total_s, "duration")
        values[f"ga_stage1{label}"] = (stage1.dp_comm_total_s, "duration")
        gather_bytes = collectives.cost("ring_all_gather", DP, memory.WEIGHT_BYTES * PARAMS)[1]
        reduce_bytes = collectives.cost("ring_reduce_scatter", DP, PARAMS * context_for(w).grad_bytes)[1]
        values[f"ga_stage2_bytes{label}"] = (m * reduce_bytes + gather_bytes, "bytes")
        values["ga_stage1_bytes"] = (reduce_bytes + gather_bytes, "bytes")
    values["ga_verdict"] = case("more" if values["ga_m"][0] > 1 else "same", "more", "same")


def _hsdp(values):
    runs = {}
    for key, shard in (("full", 0), ("hsdp", HSDP_SHARD)):
        w, r = evaluate(HSDP, dp=HSDP["gpus"], zero=3, dp_shard=shard, micro_batch=1)
        runs[key] = r
        values[f"hsdp_{key}_step"] = (r.step_s, "duration")
        values[f"hsdp_{key}_mem"] = (r.memory_bytes, "bytes")
        values[f"hsdp_{key}_exposed"] = (r.dp_comm_s + r.zero_comm_s, "duration")
        values[f"hsdp_{key}_mfu"] = (r.mfu, "percent")
    values.update({
        "hsdp_params": (w.shape.params, "params"), "hsdp_gpus": (w.gpus, "count"),
        "hsdp_gbps": (HSDP["inter_node_gbps"], "gbps"), "hsdp_shard": (HSDP_SHARD, "count"),
        "hsdp_replicas": (HSDP["gpus"] // HSDP_SHARD, "count"),
        "hsdp_verdict": case("faster" if runs["hsdp"].step_s < runs["full"].step_s else "slower", "faster", "slower"),
    })


def _zeropp(values):
    def crossing(widths):
        """Bytes per GPU per micro-batch of the forward gather, the backward gather and the reduce-scatter."""
        gather_f, gather_b, grads = widths
        return ((collectives.cost("ring_all_gather", DP, gather_f * PARAMS)[1]
                 + collectives.cost("ring_all_gather", DP, gather_b * PARAMS)[1]
                 + collectives.cost("ring_reduce_scatter", DP, grads * PARAMS)[1]))
    zero3, zeropp = crossing(ZERO3_BYTES), crossing(ZEROPP_BYTES)
    values["zpp_zero3"] = (zero3, "bytes")
    values["zpp_zeropp"] = (zeropp, "bytes")
    values["zpp_ratio"] = (zero3 / zeropp, "plain")


def _with_model_parallel(values):
    """ZeRO stage 1 inside a 3D layout: GPT-3 in Korthikanti et al.'s layout, sharded over its DP group."""
    from ..reference import gpt3_workload
    from .common import GPT3_GPUS, GPT3_LAYOUT
    for key, stack in STACKS:
        for stage in (0, 1):
            _, r = evaluate(gpt3_workload(gpus=GPT3_GPUS, stack=stack), **dict(GPT3_LAYOUT, zero=stage))
            values[f"g{stage}_{key}_mem"] = (r.memory_bytes, "bytes")
            values[f"g{stage}_{key}_opt"] = (r.optimizer_bytes, "bytes")
            values[f"g{stage}_{key}_step"] = (r.step_s, "duration")
            values[f"g{stage}_{key}_dp"] = (r.dp_comm_s, "duration")
    change = abs(values["g1_2021_step"][0] / values["g0_2021_step"][0] - 1.0)
    values["g_2021_verdict"] = case("barely" if change < 0.02 else "moves", "barely", "moves")
    values["g_dp"] = (GPT3_LAYOUT["dp"], "count")
    values["g_tp"] = (GPT3_LAYOUT["tp"], "count")
    values["g_pp"] = (GPT3_LAYOUT["pp"], "count")
    values["g_gpus"] = (GPT3_GPUS, "count")


def _exercises(values):
    for name in ("stack-modern", "stack-2021", "h100-cluster", "figure-one"):
        state = exercise("zero", name)
        key, r, par = name.replace("-", "_"), state.report, state.layout
        for field in ("tp", "cp", "pp", "dp", "zero", "micro_batch"):
            values[f"ex_{key}_{field}"] = (getattr(par, field), "count")
        values[f"ex_{key}_step"] = (r.step_s, "duration")
        values[f"ex_{key}_mem"] = (r.memory_bytes, "bytes")
        values[f"ex_{key}_mfu"] = (r.mfu, "percent")
        values[f"ex_{key}_zero_total"] = (r.zero_comm_total_s, "duration")
        values[f"ex_{key}_zero_exposed"] = (r.zero_comm_s, "duration")
        values[f"ex_{key}_params"] = (state.workload.shape.params, "params")
        values[f"ex_{key}_gpus"] = (state.workload.gpus, "count")
        values[f"ex_{key}_gbps"] = (state.workload.inter_node_gbps, "gbps")
        values[f"ex_{key}_state"] = (state.workload.state_bytes_per_param, "count")
    for name, stage in (("stack_modern", 2), ("h100_cluster", 1)):
        state = exercise("zero", name.replace("_", "-"))
        dp = state.workload.gpus
        _, lower = evaluate(state.inputs, dp=dp, zero=stage, micro_batch=1)
        values[f"ex_{name}_lower_mem"] = (lower.memory_bytes, "bytes")
        values[f"ex_{name}_lower_stage"] = (stage, "count")
        usable = state.plan.usable_bytes
        values[f"ex_{name}_usable"] = (usable, "bytes")
        values[f"ex_{name}_lower_fits"] = case("fits" if lower.memory_bytes <= usable else "over", "fits", "over")
    values["ex_stack_2021_uses_z3"] = case("z3" if values["ex_stack_2021_zero"][0] == 3 else "other", "z3", "other")
    values["ex_stack_modern_uses_tp"] = case("tp" if values["ex_stack_modern_tp"][0] > 1 else "other", "tp", "other")


@chapter("zero")
def zero_chapter():
    values = {"params": (PARAMS, "params"), "dp": (DP, "count"), "state_per_param": (ZERO_STATE_BYTES, "count"),
              "optimizer_k": (memory.OPTIMIZER_BYTES, "count"),
              "psi_bytes": (2.0 * PARAMS, "bytes"),
              "dp_volume": (collectives.cost("ring_allreduce", DP, 2.0 * PARAMS)[1], "bytes"),
              "z3_volume": (2.0 * collectives.cost("ring_all_gather", DP, 2.0 * PARAMS)[1]
                            + collectives.cost("ring_reduce_scatter", DP, 2.0 * PARAMS)[1], "bytes"),
              "trillion_gpus": (1024, "count"),
              "trillion_state": (memory.model_state_bytes_per_gpu(1e12, ZERO_STATE_BYTES, 1024, 3), "bytes"),
              "trillion": (1e12, "params")}
    segments = {"weights": [], "gradients": [], "optimizer": []}
    categories = []
    _stages(values, segments, categories)
    values["z3_gathers"] = (2 * values["micro_batches"][0], "count")
    _accumulation(values)
    _hsdp(values)
    _zeropp(values)
    _with_model_parallel(values)
    _exercises(values)
    device = values["device"][0]
    chart = {"type": "stacked", "id": "zero", "categories": categories,
             "segments": [(key, segments[key]) for key in ("weights", "gradients", "optimizer")],
             "reference": (device / GB, {"device": (device, "bytes")}),
             "text_values": {"params": (PARAMS, "params"), "dp": (DP, "count")}}
    figures = {"stages": {"params": PARAMS, "dp": DP, "ranks": 4, "state_bytes_per_param": ZERO_STATE_BYTES}}
    values["figure_ranks"] = (4, "count")
    return Chapter(values, dict(EXAMPLE), [chart], figures)
