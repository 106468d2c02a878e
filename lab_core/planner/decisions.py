"""The six decisions ("why it changes"): ids and the numbers each reason quotes.

Each entry is {"id", "option", "reason", "numbers"}; the page turns the ids
into English or Chinese and inserts the numbers (SI units: bytes, seconds,
bytes/s, tokens/s, ratios). No prose here.
"""
from ..parallelism import stage_split
from ..recompute_modules import named_modules
from ..step_time import expert_copies
from .assumptions import CHECKPOINT_MATERIAL_GAIN, CHECKPOINT_NEAR_OPTIMUM_FACTOR
from .links import exposed_by_link, fabric_traffic, nvlink_traffic
from .meters import model_state_bytes

DECISIONS = ("parallelism", "gradient_sync", "activation_memory", "checkpointing", "data_pipeline",
             "interconnect")


def _entry(decision, option, reason, numbers):
    return {"id": decision, "option": option, "reason": reason, "numbers": numbers}


def _no_plan(decision, numbers):
    """A decision about a running plan when no plan fits: nothing to decide."""
    return _entry(decision, "no_plan", "nothing_fits", numbers)


def layout_dims(par):
    """The dimensions a plan uses ('tp_pp_dp', 'dp', 'single', ...) plus its ZeRO stage."""
    dims = [name for name, size in (("tp", par.tp), ("pp", par.pp), ("dp", par.dp)) if size > 1]
    # Context parallelism alone (one sequence per step over cp GPUs) is its own option;
    # otherwise the page adds CP and EP to the option's text.
    option = "_".join(dims) if dims else ("cp" if par.cp > 1 else "single")
    if par.zero and par.dp > 1:
        option += "_zero%d" % par.zero
    return option


def _min_gpus_numbers(no_fit):
    """The smallest GPU count that would fit and its layout, for the no-fit reasons."""
    layout = (no_fit or {}).get("min_gpus_layout") or {}
    return {"min_gpus": (no_fit or {}).get("min_gpus"), "min_tp": layout.get("tp"), "min_pp": layout.get("pp"),
            "min_dp": layout.get("dp"), "gpus_searched": (no_fit or {}).get("gpus_searched")}


def _expert_numbers(ctx):
    """What expert parallelism costs and buys (the page's EP sentence): routed
    experts per GPU and layer (fewer with a larger ep: less memory), the nodes
    the group spans (more with a larger ep: more fabric traffic per token with
    the per-node dispatcher, step_time.expert_alltoall_times), the copies of each token
    one dispatch sends across nodes (step_time.expert_copies: fewer with the per-node
    dispatcher and with group-limited routing) and the step's all-to-all seconds, in all
    and exposed."""
    par, experts = ctx.parallelism, ctx.wctx.shape.experts
    if experts is None:
        return {"experts_per_gpu": None, "ep_nodes": None, "ep_fabric_copies": 0.0, "ep_comm_total_s": 0.0,
                "ep_comm_exposed_s": 0.0}
    in_node = min(par.ep, ctx.wctx.gpus_per_node)
    return {"experts_per_gpu": experts.count // par.ep, "ep_nodes": par.ep // in_node,
            "ep_fabric_copies": expert_copies(ctx.wctx, par)[1],
            "ep_comm_total_s": ctx.report.ep_comm_total_s, "ep_comm_exposed_s": ctx.report.ep_comm_s}


def _mtp_numbers(ctx):
    """Where the multi-token-prediction modules go (the page's MTP sentence): on the
    last of the pipeline's stages, with one more pass through the output layer each
    (gpu_memory.model_stages), beside that stage's and the first stage's layers;
    mtp None without modules or without a pipeline."""
    par, shape = ctx.parallelism, ctx.wctx.shape
    if not shape.mtp_layers or par.pp == 1:
        return {"mtp": None, "mtp_passes": None, "first_layers": None, "last_layers": None}
    first, _, last = stage_split(shape.layers, par)
    return {"mtp": shape.mtp_layers, "mtp_passes": shape.output_passes, "layers": shape.layers,
            "first_layers": first, "last_layers": last}


def _context_numbers(ctx):
    """What context parallelism buys and costs (the page's CP sentence): each
    sequence's share per GPU, the most loaded GPU's activations with and
    without it (the same plan with each sequence whole on a GPU) and
    the step's K/V exchange, which one (a ring, or an all-gather before
    attention with Workload.cp_all_gather), in all and exposed (step_time's CP terms)."""
    par, r = ctx.parallelism, ctx.report
    if par.cp == 1:
        return {"seq_len": None, "cp_tokens": None, "activations_without_cp_bytes": None,
                "activations_bytes": r.activations_bytes, "cp_exchange": None, "cp_comm_total_s": 0.0,
                "cp_comm_exposed_s": 0.0}
    seq = ctx.workload.seq_len
    return {"seq_len": seq, "cp_tokens": seq // par.cp, "activations_without_cp_bytes": ctx.activations_without_cp,
            "activations_bytes": r.activations_bytes,
            "cp_exchange": "all_gather" if ctx.workload.cp_all_gather else "ring",
            "cp_comm_total_s": r.cp_comm_total_s, "cp_comm_exposed_s": r.cp_comm_s}


def parallelism(ctx):
    """Option: the dimensions used ('tp_pp_dp', 'dp', 'single', ...) plus the ZeRO stage;
    'nothing_fits' when no plan fits (the reason names the smallest GPU count that would)."""
    par, wctx = ctx.parallelism, ctx.wctx
    option = layout_dims(par) if ctx.fits else "nothing_fits"
    weights_total = 2.0 * wctx.params
    state_total = wctx.state_bytes * wctx.params
    if not ctx.fits:
        no_fit = ctx.no_fit or {}
        reason = ("nothing_fits" if no_fit.get("min_gpus") else
                  "nothing_fits_searching" if no_fit.get("min_gpus_searching") else "nothing_fits_anywhere")
    elif ctx.gpus_used == 1:
        reason = "fits_one_gpu"
    elif weights_total > ctx.usable and (par.tp > 1 or par.pp > 1):
        reason = "weights_exceed_gpu_split_model"
    elif weights_total > ctx.usable:
        reason = "weights_exceed_gpu_shard_weights"
    elif state_total > ctx.usable and (par.tp > 1 or par.pp > 1):
        reason = "state_exceeds_gpu_split_model"
    elif state_total > ctx.usable:
        reason = "state_exceeds_gpu_shard_state"
    elif par.tp > 1 or par.pp > 1:
        reason = "split_model_faster"
    else:
        reason = "replicas_fit"
    numbers = {
        "params": wctx.params,
        "weights_bytes_total": weights_total,
        "state_bytes_total": state_total,
        "device_bytes": wctx.device_bytes,
        "usable_bytes": ctx.usable,
        "tp": par.tp, "pp": par.pp, "dp": par.dp, "zero": par.zero, "cp": par.cp, "ep": par.ep,
        "gpus_per_node": wctx.gpus_per_node,
        "gpus_used": ctx.gpus_used,
        "params_per_gpu": ctx.report.params_per_gpu,
        "memory_bytes_per_gpu": ctx.report.memory_bytes,
        "best_replica_goodput_tokens_per_s": ctx.best_replica,
        "goodput_tokens_per_s": ctx.goodput_tokens_per_s,
        "closest_memory_bytes": ctx.report.memory_bytes,
    }
    numbers.update(_min_gpus_numbers(ctx.no_fit))
    numbers.update(_expert_numbers(ctx))
    numbers.update(_context_numbers(ctx))
    numbers.update(_mtp_numbers(ctx))
    return _entry("parallelism", option, reason, numbers)


def gradient_collective(zero):
    """The collectives of the gradient sync at a ZeRO stage: all-reduce (ZeRO-0),
    reduce-scatter + all-gather (ZeRO-1/2, the same 2 Psi volume, arXiv:1910.02054
    Sec 7.2.1), or ZeRO-3's per-layer parameter all-gathers and gradient reduce-scatter (Sec 7.2.2)."""
    return ("all_reduce", "reduce_scatter_all_gather", "reduce_scatter_all_gather", "zero3_gather_reduce_scatter")[zero]


def gradient_sync(ctx):
    """The collectives of the plan's gradient sync (gradient_collective, arXiv:1910.02054
    Sec 7.2) over the GPUs that hold the same weights, and how much of it is exposed."""
    par, r = ctx.parallelism, ctx.report
    # One replica with CP > 1 syncs too (Parallelism.sync_ranks, as sync.modern_sync).
    sync_ranks = par.sync_ranks
    if sync_ranks == 1:
        option, reason = "none", "single_replica"
    else:
        option = gradient_collective(par.zero)
        exposed = r.dp_comm_s + r.zero_comm_s
        # ZeRO-2 reduce-scatters after every micro-batch (sync.earlier_syncs).
        repeated = par.zero == 2 and r.micro_batches > 1
        if not ctx.wctx.grad_overlap:
            reason = "not_overlapped"  # Workload.grad_reduce_overlap off: sync.py exposes the reduction whole
        elif exposed <= 0.0:
            reason = "repeated_hidden" if repeated else "hidden_by_backward"
        elif r.zero_comm_total_s > 0.0:
            reason = "exposed_with_zero"  # only ZeRO-3 has traffic of its own beyond the gradient sync (Sec 7.2.2)
        else:
            reason = "repeated_exposed" if repeated else "exposed"
    numbers = {
        "dp": par.dp,
        "sync_ranks": sync_ranks,
        "zero": par.zero,
        "micro_batches": r.micro_batches,
        "gradient_bytes_per_gpu": r.params_per_gpu * ctx.wctx.grad_bytes,
        "dp_comm_total_s": r.dp_comm_total_s,
        "dp_comm_exposed_s": r.dp_comm_s,
        "zero_comm_total_s": r.zero_comm_total_s,
        "zero_comm_exposed_s": r.zero_comm_s,
        "step_s": r.step_s,
        "dp_link": r.dp_link,
    }
    if not ctx.fits:
        return _no_plan("gradient_sync", numbers)
    return _entry("gradient_sync", option, reason, numbers)


def activation_memory(ctx):
    """Recompute mode (arXiv:2205.05198 Sec 5) and sequence parallelism (Sec 4.2.2)."""
    par, r, wctx = ctx.parallelism, ctx.report, ctx.wctx
    if par.recompute == "none":
        option = "flash_attention" if wctx.flash else "keep_all"
    elif par.recompute_layers:
        option = "partial_recompute"  # the first layers of each chunk only (planner/trim.py)
    elif named_modules(par.recompute, wctx.recompute_modules):
        option = "selective_modules"  # Megatron-Core's modules (recompute_modules.py), named in the option
    else:
        option = par.recompute + "_recompute"
    # The most loaded GPU's own state and activations (the report's memory), as the activation meter.
    state = model_state_bytes(r)
    room = ctx.usable - state
    if room <= 0.0:
        reason = "state_exceeds_memory"
    elif r.activations_bytes > room:
        reason = "activations_exceed_room"
    elif ctx.activations_without_recompute <= ctx.room_without_recompute:
        reason = "fits_without_recompute"
    elif option == "partial_recompute":
        reason = "partial_recompute"
    else:
        reason = "recompute_required"
    # Shortfalls are positive amounts: nothing negative is ever quoted.
    numbers = {
        "activations_bytes": r.activations_bytes,
        "activations_without_recompute_bytes": ctx.activations_without_recompute,
        "room_bytes": max(room, 0.0),
        "room_without_recompute_bytes": max(ctx.room_without_recompute, 0.0),
        "usable_bytes": ctx.usable,
        "state_shortfall_bytes": max(-room, 0.0),
        "activation_shortfall_bytes": max(r.activations_bytes - max(room, 0.0), 0.0),
        "model_state_bytes": state,
        "recompute_s": r.recompute_s,
        "step_s": r.step_s,
        "micro_batch": par.micro_batch,
        "sequence_parallel": par.sequence_parallel,
        "flash_attention": wctx.flash,
        "modules": ", ".join(wctx.recompute_modules),
        "recompute_layers": par.recompute_layers,
        "chunk_layers": ctx.chunk_layers,
        "full_recompute_step_s": ctx.full_recompute_step_s,
    }
    return _entry("activation_memory", option, reason, numbers)


#: Why another checkpoint mode wins: (the reader's mode, the better one) -> reason id.
MODE_SWITCH_REASONS = {
    ("blocking", "async"): "blocking_pauses_training",
    ("blocking", "in_memory"): "blocking_pauses_training",
    ("async", "in_memory"): "memory_recovery_faster",
    ("in_memory", "async"): "replication_slower_than_storage",
}


def _interval_advice(ck, near):
    """(option, reason) for the interval when the mode stays: move it only when
    moving wins back CHECKPOINT_MATERIAL_GAIN (Daly, FGCS 2006, Eq 37, with the
    mode's pause; never below the background work, failures.optimal_interval)."""
    interval, optimum = ck["interval_s"], ck["optimal_interval_s"]
    if ck["goodput_gain"] <= 0.0 and not near:
        # Daly's closed form is his model's optimum; the lab's goodput also counts the background
        # work and, with failures every few minutes, the reader's interval can beat it: "would win
        # back only -0.1%" said otherwise.
        return "keep_interval", "beats_estimate"
    if ck["goodput_gain"] < CHECKPOINT_MATERIAL_GAIN and not near:
        return "keep_interval", "gain_immaterial"
    if interval > optimum * CHECKPOINT_NEAR_OPTIMUM_FACTOR:
        return "shorten_interval", "too_long_loses_work"
    if interval < optimum / CHECKPOINT_NEAR_OPTIMUM_FACTOR:
        if interval < ck["checkpoint_background_s"]:
            return "lengthen_interval", "waits_for_background"
        return "lengthen_interval", "too_short_wastes_writes"
    # The interval is right: say why this mode beats blocking writes when it does.
    if ck["mode"] != "blocking" and ck["goodput_at_optimal"] - ck["blocking_goodput"] >= CHECKPOINT_MATERIAL_GAIN:
        return "keep_interval", "snapshot_beats_blocking"
    return "keep_interval", "near_optimum"


def checkpointing(ctx):
    """The checkpoint mode and interval. Another mode is proposed when, each at
    its own optimal interval, it wins back at least CHECKPOINT_MATERIAL_GAIN of
    wall time and more than moving the interval would (checkpoint_modes.py:
    async and in-memory pause only for the device-to-host snapshot); otherwise
    the interval against the optimum."""
    ck = ctx.checkpoint
    optimum = ck["optimal_interval_s"]
    if optimum is None:
        option, reason = "keep_interval", "no_failures"
    elif (ck["best_mode"] != ck["mode"] and ck["mode_gain"] >= CHECKPOINT_MATERIAL_GAIN
          and ck["mode_gain"] >= ck["goodput_gain"]):
        option, reason = "use_" + ck["best_mode"], MODE_SWITCH_REASONS[(ck["mode"], ck["best_mode"])]
    else:
        near = optimum / CHECKPOINT_NEAR_OPTIMUM_FACTOR <= ck["interval_s"] <= optimum * CHECKPOINT_NEAR_OPTIMUM_FACTOR
        option, reason = _interval_advice(ck, near)
    numbers = dict(ck)
    numbers["near_optimum_factor"] = CHECKPOINT_NEAR_OPTIMUM_FACTOR
    numbers["material_gain"] = CHECKPOINT_MATERIAL_GAIN
    numbers["time_lost_share"] = 1.0 - ck["goodput"]
    if not ctx.fits:
        return _no_plan("checkpointing", numbers)
    return _entry("checkpointing", option, reason, numbers)


def data_pipeline(ctx):
    """GPUs' token demand against loaders and storage (ratios above 1 starve the GPUs)."""
    r = ctx.report
    if r.loader_ratio >= 1.0 and r.loader_ratio >= r.storage_ratio:
        option, reason = "add_loaders", "loader_bound"
    elif r.storage_ratio >= 1.0:
        option, reason = "faster_storage", "storage_bound"
    else:
        option, reason = "loaders_sufficient", "headroom"
    numbers = {
        "required_tokens_per_s": r.tokens_per_s,
        "loader_tokens_per_s": r.loader_tokens_per_s,
        "loader_ratio": r.loader_ratio,
        "required_read_bytes_per_s": r.required_read_bytes_per_s,
        "storage_read_bytes_per_s": r.storage_read_bytes_per_s,
        "storage_ratio": r.storage_ratio,
    }
    if not ctx.fits:
        return _no_plan("data_pipeline", numbers)
    return _entry("data_pipeline", option, reason, numbers)


def interconnect(ctx):
    """Where each collective runs: TP on NVLink inside a node (arXiv:2104.04473
    Sec 3.2); what else crosses the nodes (fabric_traffic) on the fabric."""
    par, r, wctx = ctx.parallelism, ctx.report, ctx.wctx
    nodes = -(-ctx.gpus_used // wctx.gpus_per_node)
    traffic = fabric_traffic(wctx, par, r.dp_link)
    exposed = exposed_by_link(wctx, par, r)
    if ctx.gpus_used == 1:
        option, reason = "none", "single_gpu"
    elif nodes == 1:
        option, reason = "nvlink_node", "fits_in_one_node"
    elif ctx.meters["comms"]["level"] == "critical":
        # Name the largest part of the waiting: the fabric, NVLink or the bubble.
        option = "nvlink_plus_fabric"
        reason = _waiting_reason(exposed)
    else:
        # Name only the traffic this plan has on the fabric.
        option = "nvlink_plus_fabric"
        reason = "tp_on_nvlink_rest_on_fabric" if par.tp > 1 else "spans_nodes"
    numbers = {
        "gpus_per_node": wctx.gpus_per_node,
        "nodes": nodes,
        "tp": par.tp,
        "nvlink_bytes_per_s": ctx.workload.device.nvlink_bytes_per_s,
        "inter_node_bytes_per_s": ctx.workload.inter_node_gbps * 1e9 / 8.0,
        "tp_comm_s": r.tp_comm_s,
        "pp_p2p_s": r.pp_p2p_s,
        "dp_link": r.dp_link,
        "fabric_traffic": traffic,
        "nvlink_traffic": nvlink_traffic(wctx, par, r.dp_link),
        "fabric_exposed_s": exposed[0],
        "nvlink_exposed_s": exposed[1],
        "bubble_s": exposed[2],
        "comms_ratio": ctx.meters["comms"]["ratio"],
    }
    if not ctx.fits:
        return _no_plan("interconnect", numbers)
    return _entry("interconnect", option, reason, numbers)


def _waiting_reason(exposed):
    """The interconnect reason when communication and bubble dominate the step: by the
    largest of (fabric, NVLink, bubble) waiting (links.exposed_by_link); a tie goes to
    the fabric, then NVLink."""
    fabric, nvlink, bubble = exposed
    if fabric >= nvlink and fabric >= bubble:
        return "fabric_bound"
    return "nvlink_bound" if nvlink >= bubble else "bubble_bound"


def decisions(ctx):
    return [parallelism(ctx), gradient_sync(ctx), activation_memory(ctx), checkpointing(ctx),
            data_pipeline(ctx), interconnect(ctx)]
