"""The training mesh of the whiteboard diagram, drawn for one parallel layout.

Returns SVG markup (a string) for the mesh area: data-parallel replicas side
by side, each a stack of pipeline stages, each stage split into tensor-parallel
shards. Large degrees are drawn elided ("+N more") so the picture stays legible
from 1 GPU to 32,768. Built here rather than in the page's script so the
precomputed page and the live lab draw the same picture from one function.
"""
from html import escape

# The mesh's own SVG frame (content/templates/diagram.html scales it to the
# mesh box; a phone draws it about 230 px wide, where a 16-unit caption is 12 px tall).
VIEW_W, VIEW_H = 300.0, 262.0
VIEWBOX = f"0 0 {VIEW_W:.0f} {VIEW_H:.0f}"
# The replicas are drawn this far inside the frame: half their outline's 1.5-unit stroke
# (lab.css .wb-replica-box), which the frame clipped on the outer columns' sides.
INSET = 1.0
MESH_X, MESH_Y, MESH_W, MESH_H = INSET, INSET, VIEW_W - 2.0 * INSET, VIEW_H - 2.0 * INSET
MAX_COLUMNS = 3
MAX_STAGES = 4
MAX_SHARDS = 8
MAX_SEQUENCE_ROWS = 4
GAP = 10.0
# Above the stages a margin; below them the replica's number (".wb-caption", 16 units in
# lab.css): its baseline CAPTION_BASELINE above the box's bottom, its glyphs about 12 tall.
TOP_MARGIN = 8.0
CAPTION_BAND = 30.0
CAPTION_BASELINE = 9.0


def _shown(count, limit):
    """Indices drawn for ``count`` items when at most ``limit`` fit: first ones, then the last."""
    if count <= limit:
        return list(range(count)), 0
    return list(range(limit - 1)) + [count - 1], count - limit


def _f(value):
    return f"{value:.1f}".rstrip("0").rstrip(".")


def render_mesh(tp, pp, dp, texts, cp=1, ep=1):
    """SVG for a TP×CP×PP×DP mesh; ``texts`` holds ``mesh_replica``, ``mesh_more``.

    Context parallelism draws each stage's tensor shards in ``cp`` rows (the
    sequence's shards); expert parallelism, folded into TP × CP × DP
    (arXiv:2504.14960), outlines the first stage's GPUs of one expert group:
    ``ep`` consecutive ranks in that order, so a group larger than a replica's
    TP × CP spans ep / (tp × cp) replicas.
    """
    columns, hidden_columns = _shown(dp, MAX_COLUMNS)
    stages, hidden_stages = _shown(pp, MAX_STAGES)
    shards = min(tp, MAX_SHARDS)
    sequence_rows = min(cp, MAX_SEQUENCE_ROWS)
    slots = len(columns) + (1 if hidden_columns else 0)
    column_w = (MESH_W - GAP * (slots - 1)) / slots
    rows = len(stages) + (1 if hidden_stages else 0)
    stage_h = min(56.0, (MESH_H - TOP_MARGIN - CAPTION_BAND - GAP * (rows - 1)) / rows)
    parts = []
    for slot, replica in enumerate(columns):
        x = MESH_X + slot * (column_w + GAP)
        if hidden_columns and slot == len(columns) - 1:
            more_x = x
            x += column_w + GAP
            parts.append(
                f'<text class="wb-more" x="{_f(more_x + column_w / 2)}" y="{_f(MESH_Y + MESH_H / 2)}" text-anchor="middle">'
                f"{escape(texts['mesh_more'].format(n=f'{hidden_columns:,}'))}</text>"
            )
        parts.append(f'<g class="wb-replica" data-replica="{replica}">')
        parts.append(
            f'<rect class="wb-replica-box" x="{_f(x)}" y="{_f(MESH_Y)}" width="{_f(column_w)}" height="{_f(MESH_H)}" rx="8"/>'
        )
        y = MESH_Y + TOP_MARGIN
        for row, stage in enumerate(stages):
            if hidden_stages and row == len(stages) - 1:
                parts.append(
                    f'<text class="wb-more" x="{_f(x + column_w / 2)}" y="{_f(y + stage_h / 2 + 4)}" text-anchor="middle">{escape(texts["mesh_more"].format(n=f"{hidden_stages:,}"))}</text>'
                )
                y += stage_h + GAP
            parts.append(_stage(x + 6.0, y, column_w - 12.0, stage_h, stage, shards, sequence_rows))
            y += stage_h + GAP
        parts.append(
            f'<text class="wb-caption" x="{_f(x + column_w / 2)}" y="{_f(MESH_Y + MESH_H - CAPTION_BASELINE)}" text-anchor="middle">'
            f"{escape(texts['mesh_replica'].format(n=replica + 1))}</text>"
        )
        parts.append("</g>")
    if ep > 1:
        parts.append(_expert_group(tp * cp, ep, dp, column_w, slots, stage_h, shards, sequence_rows))
    return "".join(parts)


def _expert_group(ranks_per_replica, ep, dp, column_w, slots, stage_h, shards, sequence_rows):
    """The dashed outline of one expert-parallel group on the first stage."""
    y = MESH_Y + TOP_MARGIN - 3.0
    h = stage_h + 6.0
    if ep >= ranks_per_replica:
        # Whole replicas: ep / (tp x cp) of them from the first; the last column
        # drawn is the last replica, inside the group only when the group is all of them.
        replicas = ep // ranks_per_replica
        spanned = slots if replicas >= dp else min(replicas, slots - 1)
        x, w = MESH_X + 3.0, spanned * column_w + (spanned - 1) * GAP - 6.0
    else:
        # Part of one replica's stage: ep of its tp x cp GPUs (whole sequence rows first).
        inner = column_w - 12.0
        cells = max(1, round(shards * sequence_rows * ep / ranks_per_replica))
        rows = max(1, min(sequence_rows, cells // shards)) if cells >= shards else 1
        across = shards if cells >= shards else cells
        x, w = MESH_X + 6.0 - 3.0, inner * across / shards + 6.0
        h = stage_h * rows / sequence_rows + 6.0
    return f'<rect class="wb-ep" x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" rx="6"/>'


def _stage(x, y, w, h, stage, shards, sequence_rows=1):
    shard_w, row_h = w / shards, h / sequence_rows
    cells = "".join(
        f'<rect class="wb-shard" x="{_f(x + i * shard_w)}" y="{_f(y + j * row_h)}" width="{_f(shard_w)}" height="{_f(row_h)}"/>'
        for j in range(sequence_rows) for i in range(shards)
    )
    return f'<g class="wb-stage" data-stage="{stage}">{cells}<rect class="wb-stage-box" x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" rx="4"/></g>'
