"""Which parts of the architecture diagram are active, how many, how loaded.

Part ids match the whiteboard diagram; "count" is what the part's label
counts (loader groups = nodes, replicas = dp, fabric = ranks in the gradient
sync, metrics = GPUs; the fabric's "nodes", those one such group spans), "load"
a ratio (0 = idle), "level" the matching meter's level where one applies.
"link" says where the part's traffic runs ("nvlink" inside one node,
"inter_node" across nodes, "none"). When no plan fits, the mesh is
"critical" and the parts that serve a running plan are off. The collective
fabric also says what it carries: "collective", the gradient sync's
collectives when GPUs hold the same weights (decisions.gradient_collective),
else "tensor_parallel" or "none"; "all_to_all", whether expert parallelism
adds its token exchange.
"""
from ..sync import group_per_node
from .decisions import gradient_collective

PARTS = ("data_loaders", "dp_replicas", "tp_split", "pp_stages", "collective_fabric",
         "checkpoint_store", "metrics", "fault_recovery")


def _part(active, count, load, level, link="none", nodes=1):
    return {"active": active, "count": count, "load": load, "level": level, "link": link, "nodes": nodes}


def diagram(ctx):
    par, r, meters = ctx.parallelism, ctx.report, ctx.meters
    step = r.step_s if r.step_s > 0.0 else 1.0
    nodes = -(-ctx.gpus_used // ctx.wctx.gpus_per_node)
    link = "inter_node" if nodes > 1 else "nvlink"
    period = r.checkpoint_interval_s + r.checkpoint_write_s
    running = ctx.fits
    comms_level = meters["comms"]["level"]
    mesh_level = comms_level if running else "critical"
    # Collectives exist whenever more than one GPU works on the model: the
    # gradient sync of dp ranks and the tensor-parallel exchanges (NVLink in a
    # node counts: the fabric box stands for both, see the diagram's legend).
    sync_ranks = par.sync_ranks
    fabric_ranks = sync_ranks if sync_ranks > 1 else par.tp
    # The nodes one sync group spans: its ranks come after tensor parallelism in rank order
    # (sync.modern_sync), group_per_node of them on a node; a tensor-parallel group stays in one.
    group_nodes = -(-sync_ranks // group_per_node(ctx.wctx, par.tp)) if sync_ranks > 1 else 1
    return {
        "data_loaders": _part(running, nodes, meters["data"]["ratio"], meters["data"]["level"], nodes=nodes),
        "dp_replicas": _part(par.dp > 1 or not running, par.dp, (r.dp_comm_s + r.zero_comm_s) / step, mesh_level,
                             link=r.dp_link if par.dp > 1 else "none", nodes=nodes),
        "tp_split": _part(par.tp > 1, par.tp, r.tp_comm_s / step, mesh_level, link="nvlink" if par.tp > 1 else "none"),
        "pp_stages": _part(par.pp > 1, par.pp, r.pipeline_bubble_s / step, mesh_level),
        "collective_fabric": dict(_part(running and ctx.gpus_used > 1, fabric_ranks, meters["comms"]["ratio"],
                                        comms_level, link=link, nodes=min(group_nodes, nodes)),
                                  collective=(gradient_collective(par.zero) if sync_ranks > 1 else
                                              "tensor_parallel" if par.tp > 1 else "none"),
                                  all_to_all=par.ep > 1),
        "checkpoint_store": _part(running, 1, r.checkpoint_write_s / period if period > 0.0 else 0.0,
                                  meters["fault"]["level"]),
        "metrics": _part(running, ctx.gpus_used, r.mfu, "ok"),
        "fault_recovery": _part(running and r.interruptions_per_day > 0.0 and ctx.gpus_used > 1, 1,
                                meters["fault"]["ratio"], meters["fault"]["level"]),
    }
