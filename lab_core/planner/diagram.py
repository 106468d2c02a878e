"""Which parts of the architecture diagram are active, how many, how loaded.

Part ids match the whiteboard SVG; "load" is a ratio (0 = idle), "level" the
matching meter's level where one applies.
"""
PARTS = ("data_loaders", "dp_replicas", "tp_split", "pp_stages", "collective_fabric",
         "checkpoint_store", "metrics", "fault_recovery")


def _part(active, count, load, level):
    return {"active": active, "count": count, "load": load, "level": level}


def diagram(ctx):
    par, r, meters = ctx.parallelism, ctx.report, ctx.meters
    step = r.step_s if r.step_s > 0.0 else 1.0
    nodes = -(-ctx.gpus_used // ctx.wctx.gpus_per_node)
    period = r.checkpoint_interval_s + r.checkpoint_write_s
    return {
        "data_loaders": _part(True, nodes, meters["data"]["ratio"], meters["data"]["level"]),
        "dp_replicas": _part(par.dp > 1, par.dp, (r.dp_comm_s + r.zero_comm_s) / step, meters["comms"]["level"]),
        "tp_split": _part(par.tp > 1, par.tp, r.tp_comm_s / step, meters["comms"]["level"]),
        "pp_stages": _part(par.pp > 1, par.pp, r.pipeline_bubble_s / step, meters["comms"]["level"]),
        "collective_fabric": _part(nodes > 1, nodes, meters["comms"]["ratio"], meters["comms"]["level"]),
        "checkpoint_store": _part(True, 1, r.checkpoint_write_s / period if period > 0.0 else 0.0,
                                  meters["fault"]["level"]),
        "metrics": _part(True, ctx.gpus_used, r.mfu, "ok"),
        "fault_recovery": _part(r.interruptions_per_day > 0.0 and ctx.gpus_used > 1, 1,
                                meters["fault"]["ratio"], meters["fault"]["level"]),
    }
