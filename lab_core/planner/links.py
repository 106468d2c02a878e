"""Where a plan's traffic runs (NVLink inside a node or the fabric between nodes) and
how much of its step waits on each, for the interconnect decision (decisions.py).

Each kind of traffic is placed on the link the model times it on: tensor parallelism
on NVLink while its group fits a node (arXiv:2104.04473 Sec 3.2); the gradient sync
of the dp x cp ranks on sync.py's link (with ZeRO-3 its weight gathers too); the
context-parallel exchange on the fabric once its ranks outgrow a node
(step_time.context_parallel_span); the expert all-to-all on the link that sets its
time, the slower (step_time.expert_alltoall_on_fabric: the fabric once ep outgrows a node,
unless the per-node dispatcher's forwarding makes NVLink the slower); pipeline sends once
the grid does
(step_time.pipeline_span). The pipeline bubble waits on no link.
"""
from ..step_time import context_parallel_span, expert_alltoall_on_fabric, pipeline_span

# Kinds of traffic, in the order the page lists them.
TRAFFIC = ("tp", "sync", "sync_zero3", "cp", "ep", "pp")


def placed_traffic(ctx, par, dp_link):
    """[(kind, on the fabric)] of the traffic the plan has, in TRAFFIC's order (ctx: the
    workload's lab_core.context)."""
    gpus_per_node = ctx.gpus_per_node
    placed = []
    if par.tp > 1:
        placed.append(("tp", par.tp > gpus_per_node))
    if dp_link != "none":
        placed.append(("sync_zero3" if par.zero == 3 else "sync", dp_link == "inter_node"))
    if par.cp > 1:
        placed.append(("cp", context_parallel_span(par.tp, par.cp) > gpus_per_node))
    if par.ep > 1:
        placed.append(("ep", expert_alltoall_on_fabric(ctx, par)))
    if par.pp > 1:
        placed.append(("pp", pipeline_span(par.tp, par.cp, par.dp, par.pp) > gpus_per_node))
    return placed


def fabric_traffic(ctx, par, dp_link):
    """The kinds of traffic that cross the fabric between nodes (the page lists them)."""
    return [kind for kind, on_fabric in placed_traffic(ctx, par, dp_link) if on_fabric]


def nvlink_traffic(ctx, par, dp_link):
    """The kinds of traffic that stay on NVLink inside a node."""
    return [kind for kind, on_fabric in placed_traffic(ctx, par, dp_link) if not on_fabric]


def exposed_by_link(ctx, par, report):
    """(fabric, nvlink, bubble): the seconds of the step that wait on exposed traffic on
    each link, and on the pipeline bubble; together the comms meter's waiting time
    (report.waiting_s)."""
    exposed = {"tp": report.tp_comm_s, "sync": report.dp_comm_s + report.zero_comm_s,
               "cp": report.cp_comm_s, "ep": report.ep_comm_s, "pp": report.pp_p2p_s}
    exposed["sync_zero3"] = exposed["sync"]
    fabric = nvlink = 0.0
    for kind, on_fabric in placed_traffic(ctx, par, report.dp_link):
        if on_fabric:
            fabric += exposed[kind]
        else:
            nvlink += exposed[kind]
    return fabric, nvlink, report.pipeline_bubble_s
