"""Figure kind ``mesh``: a TP × PP × DP layout placed on the cluster's nodes.

Rows are pipeline stages, columns data-parallel replicas, and each cell one
tensor-parallel group of ``tp`` GPUs. Ranks follow Megatron-Core's default
order (tensor parallelism fastest, then data parallelism, the pipeline
outermost: arXiv:2104.04473 §3), so a node of ``gpus_per_node`` GPUs holds
``gpus_per_node / tp`` neighbouring replicas of one stage; the figure outlines
the nodes that way. Large layouts are drawn cut down to ``max_stages`` ×
``max_replicas`` cells (the labels give the real degrees).
"""
from . import Drawing, figure_kind
from .svg import arrow, legend, rect, text

WIDTH, LEFT, TOP = 680.0, 96.0, 40.0
CELL_H, GAP_Y, GAP_X = 46.0, 30.0, 12.0
CSS = """
.tut-figure-svg .mesh-node { fill: none; stroke: currentColor; stroke-width: 1.6; stroke-dasharray: 5 3; stroke-opacity: 0.75; }
"""


def _drawn(count, limit):
    """Indices drawn for ``count`` things when at most ``limit`` fit: the first ones and the last."""
    if count <= limit:
        return list(range(count)), False
    return list(range(limit - 1)) + [count - 1], True


@figure_kind("mesh", params={"tp": 8, "pp": 8, "dp": 16, "gpus_per_node": 8, "max_stages": 4, "max_replicas": 4},
             css=CSS)
def draw_mesh(params, t):
    tp, pp, dp, gpn = params["tp"], params["pp"], params["dp"], params["gpus_per_node"]
    if min(tp, pp, dp, gpn) < 1 or gpn % tp:
        raise ValueError(f"mesh figure: tp must divide gpus_per_node, all degrees >= 1 (got {params})")
    stages, cut_stages = _drawn(pp, max(2, params["max_stages"]))
    replicas, cut_replicas = _drawn(dp, max(2, params["max_replicas"]))
    per_node = max(1, gpn // tp)
    columns = len(replicas) + (1 if cut_replicas else 0)
    cell_w = (WIDTH - LEFT - 16.0 - GAP_X * (columns - 1)) / columns
    parts = [text(LEFT, 14.0, t("layout", tp=t.q(tp, "count"), pp=t.q(pp, "count"), dp=t.q(dp, "count"),
                                gpus=t.q(tp * pp * dp, "count")), "fig-text fig-head")]

    def column_x(position):
        return LEFT + position * (cell_w + GAP_X)

    positions = list(range(len(replicas)))
    if cut_replicas:
        positions[-1] += 1
    for position, replica in zip(positions, replicas):
        parts.append(text(column_x(position) + cell_w / 2, TOP - 4.0, t("replica", n=replica + 1),
                          "fig-text fig-small fig-muted", "middle"))
    y = TOP + 8.0
    row_ys = []
    for row, stage in enumerate(stages):
        if cut_stages and row == len(stages) - 1:
            parts.append(text(LEFT - 8.0, y + 10.0, "⋮", "fig-text fig-head", "end"))
            y += 18.0
        row_ys.append(y)
        parts.append(text(LEFT - 8.0, y + CELL_H / 2 + 4.0, t("stage", n=stage + 1), "fig-text fig-head", "end"))
        for position, replica in zip(positions, replicas):
            x = column_x(position)
            parts.append(rect(x, y, cell_w, CELL_H, "fig-box", 4.0))
            gpu_w = min(16.0, (cell_w - 8.0) / tp - 2.0)
            for g in range(tp):
                parts.append(rect(x + 4.0 + g * (gpu_w + 2.0), y + 6.0, gpu_w, 14.0, "tc-s0", 1.5,
                                  t("gpu_title", rank=t.q(stage * tp * dp + replica * tp + g, "count"))))
            parts.append(text(x + 4.0, y + CELL_H - 8.0, t("tp_group", t=t.q(tp, "count")), "fig-text fig-small"))
        if cut_replicas:
            parts.append(text(column_x(len(replicas) - 1) + cell_w / 2, y + CELL_H / 2 + 4.0,
                              "…", "fig-text fig-head", "middle"))
        # Node outlines: per_node neighbouring replicas of one stage share a node.
        nodes = {}
        for position, replica in zip(positions, replicas):
            nodes.setdefault(replica // per_node, []).append(position)
        for members in nodes.values():
            x0 = column_x(members[0]) - 4.0
            x1 = column_x(members[-1]) + cell_w + 4.0
            parts.append(rect(x0, y - 4.0, x1 - x0, CELL_H + 8.0, "mesh-node", 6.0))
        y += CELL_H + GAP_Y
    # Pipeline sends between stages (down the first column), the DP all-reduce across a row.
    x_pp = column_x(0) + cell_w / 2
    for upper, lower in zip(row_ys, row_ys[1:]):
        parts.append(arrow(x_pp, upper + CELL_H + 5.0, x_pp, lower - 6.0))
    parts.append(text(x_pp + 8.0, row_ys[0] + CELL_H + GAP_Y / 2 + 4.0, t("pp_link"), "fig-text fig-small"))
    y_dp = row_ys[-1] + CELL_H + 16.0
    x_end = column_x(positions[-1]) + cell_w
    parts.append(arrow(column_x(0), y_dp, x_end, y_dp))
    parts.append(arrow(x_end, y_dp, column_x(0), y_dp))
    parts.append(text((column_x(0) + x_end) / 2, y_dp + 16.0, t("dp_link", dp=t.q(dp, "count")),
                      "fig-text fig-small", "middle"))
    keys, bottom = legend(LEFT, y_dp + 30.0, [("tc-s0", t("gpu")), ("fig-box", t("tp_key")),
                                              ("mesh-node", t("node_key", n=t.q(gpn, "count")))])
    return Drawing(WIDTH, bottom + 4.0, parts + keys)
