"""Figure kind ``context_parallel``: one sequence split over ``cp`` GPUs the way
Megatron-Core's context parallelism does it, and the keys and values going
round the ring.

The sequence is cut into ``2·cp`` chunks and GPU ``i`` keeps chunks ``i`` and
``2·cp − 1 − i``, so that under the causal mask every GPU computes the same
number of attention blocks (Megatron-Core's load-balanced split, the one
lab_core.parallelism.check_layout requires; ring attention arXiv:2310.01889).
The block matrix colours each query chunk's row by the GPU that owns it and
counts the blocks per GPU; the ring passes each GPU's keys and values to the
next in ``cp − 1`` steps.
"""
import math

from . import Drawing, figure_kind
from .svg import arrow, rect, text

WIDTH = 680.0


def owner(chunk, cp):
    """The GPU that keeps chunk ``chunk`` of ``2·cp`` (load-balanced causal split)."""
    return chunk if chunk < cp else 2 * cp - 1 - chunk


def blocks_per_gpu(cp):
    """Causal attention blocks (query chunk, key chunk) each GPU computes."""
    counts = [0] * cp
    for q in range(2 * cp):
        counts[owner(q, cp)] += q + 1
    return counts


@figure_kind("context_parallel", params={"cp": 4, "seq": 131072})
def draw_context_parallel(params, t):
    cp, s = params["cp"], params["seq"]
    if not 2 <= cp <= 6 or s % (2 * cp):
        raise ValueError(f"context_parallel figure: cp from 2 to 6 dividing the sequence in 2 cp chunks (got {params})")
    chunks = 2 * cp
    parts = [text(8.0, 14.0, t("sequence", seq=t.q(s, "count"), chunks=t.q(chunks, "count"),
                               chunk=t.q(s // chunks, "count"), cp=t.q(cp, "count")), "fig-text fig-small")]
    bar_w = WIDTH - 16.0
    piece = bar_w / chunks
    for c in range(chunks):
        gpu = owner(c, cp)
        x = 8.0 + c * piece
        parts.append(rect(x, 22.0, piece - 2.0, 22.0, f"tc-s{gpu}", 1.5, t("chunk_title", n=c + 1, gpu=gpu + 1)))
        parts.append(text(x + piece / 2, 37.0, t("gpu_short", n=gpu + 1), "fig-small fig-on-s0", "middle"))
    # The causal block matrix: row = query chunk (its owner's colour), columns up to the diagonal.
    size = 220.0
    top, left = 74.0, 40.0
    cell = size / chunks
    parts.append(text(left, top - 8.0, t("matrix"), "fig-text fig-head"))
    parts.append(rect(left, top, size, size, "fig-empty", 0.0))
    for q in range(chunks):
        gpu = owner(q, cp)
        for k in range(q + 1):
            parts.append(rect(left + k * cell + 0.5, top + q * cell + 0.5, cell - 1.0, cell - 1.0, f"tc-s{gpu}", 0.0))
    counts = blocks_per_gpu(cp)
    parts.append(text(left + size / 2, top + size + 18.0, t("balanced", blocks=t.q(counts[0], "count")),
                      "fig-text fig-small", "middle"))
    # The ring: cp GPUs on a circle, each sending its keys and values to the next.
    cx, cy, radius = 500.0, top + size / 2, 82.0
    parts.append(text(cx, top - 8.0, t("ring"), "fig-text fig-head", "middle"))
    points = [(cx + radius * math.sin(2 * math.pi * i / cp), cy - radius * math.cos(2 * math.pi * i / cp))
              for i in range(cp)]
    for i, (x, y) in enumerate(points):
        nx, ny = points[(i + 1) % cp]
        dx, dy = nx - x, ny - y
        length = math.hypot(dx, dy)
        shrink = 24.0 / length
        parts.append(arrow(x + dx * shrink, y + dy * shrink, nx - dx * shrink, ny - dy * shrink))
    for i, (x, y) in enumerate(points):
        parts.append(rect(x - 22.0, y - 13.0, 44.0, 26.0, f"tc-s{i}", 4.0))
        parts.append(text(x, y + 4.0, t("gpu_short", n=i + 1), "fig-small fig-on-s0", "middle"))
    parts.append(text(cx, top + size + 18.0, t("steps", steps=t.q(cp - 1, "count")), "fig-text fig-small", "middle"))
    return Drawing(WIDTH, top + size + 30.0, parts)
