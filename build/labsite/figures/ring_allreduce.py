"""Figure kind ``ring_allreduce``: a ring all-reduce of n ranks, step by step.

Each rank's buffer is n chunks; a cell shows how many ranks' contributions it
sums. Reduce-scatter: in step s rank r sends chunk (r − s) mod n to rank r + 1,
which adds it to its own; after n − 1 steps each rank owns one fully reduced
chunk. All-gather: n − 1 more steps pass the reduced chunks around
(arXiv:1910.02054 §7.1; NCCL's ring). The volume per rank, 2(n − 1)/n of the
message, is lab_core.comms' ring formula.
"""
from lab_core import comms

from . import Drawing, figure_kind
from .svg import rect, text

CELL, GAP = 14.0, 2.0
CSS = """
.tut-figure-svg .ring-cell { fill: #0072b2; stroke: none; }
.tut-figure-svg .ring-send { fill: none; stroke: #d55e00; stroke-width: 2; }
"""


def ring_states(n):
    """[(phase, step, counts, sends)] from the start to the end of the all-gather;
    counts[r][c]: contributions chunk c of rank r sums; sends: (rank, chunk) sent next."""
    counts = [[1] * n for _ in range(n)]
    states = []
    for phase, steps in (("reduce_scatter", n - 1), ("all_gather", n - 1)):
        for s in range(steps):
            if phase == "reduce_scatter":
                sends = [(r, (r - s) % n) for r in range(n)]
            else:
                sends = [(r, (r + 1 - s) % n) for r in range(n)]
            states.append((phase, s, [row[:] for row in counts], sends))
            new = [row[:] for row in counts]
            for r, c in sends:
                nxt = (r + 1) % n
                new[nxt][c] = counts[nxt][c] + counts[r][c] if phase == "reduce_scatter" else counts[r][c]
            counts = new
    states.append(("done", 0, counts, []))
    return states


@figure_kind("ring_allreduce", params={"ranks": 4, "message_bytes": 0.0}, css=CSS)
def draw_ring(params, t):
    n = params["ranks"]
    if not 2 <= n <= 6:
        raise ValueError(f"ring_allreduce figure: ranks must be 2 to 6 (got {n})")
    states = ring_states(n)
    left, top = 58.0, 46.0
    column = n * (CELL + GAP) + 16.0
    parts = []
    for index, (phase, step, counts, sends) in enumerate(states):
        x0 = left + index * column
        label = t("done") if phase == "done" else t("step", n=t.q(step + 1, "count"))
        parts.append(text(x0 + column / 2 - 8.0, top - 8.0, label, "fig-text fig-small", "middle"))
        if step == 0 and phase != "done":
            span = (n - 1) * column - 16.0
            parts.append(text(x0 + span / 2, top - 26.0, t(phase), "fig-text fig-head", "middle"))
            parts.append(f'<line class="fig-line" x1="{x0:.1f}" y1="{top - 21.0:.1f}" x2="{x0 + span:.1f}" '
                         f'y2="{top - 21.0:.1f}"/>')
        for r in range(n):
            y = top + r * (CELL + 6.0)
            for c in range(n):
                x = x0 + c * (CELL + GAP)
                share = counts[r][c] / n
                parts.append(f'<rect class="ring-cell" x="{x:.1f}" y="{y:.1f}" width="{CELL:.1f}" height="{CELL:.1f}" '
                             f'rx="2.0" fill-opacity="{0.22 + 0.78 * share:.2f}"><title>'
                             f'{t("cell", rank=t.q(r + 1, "count"), chunk=t.q(c + 1, "count"), k=t.q(counts[r][c], "count"))}'
                             f'</title></rect>')
                if (r, c) in sends:
                    parts.append(rect(x - 1.0, y - 1.0, CELL + 2.0, CELL + 2.0, "ring-send", 3.0))
    for r in range(n):
        parts.append(text(left - 8.0, top + r * (CELL + 6.0) + CELL - 3.0, t("rank", n=r + 1), "fig-text fig-small", "end"))
    width = left + len(states) * column + 4.0
    y = top + n * (CELL + 6.0) + 16.0
    for boundary in (n - 1, 2 * (n - 1)):
        split = left + boundary * column - 8.0
        parts.append(f'<line class="fig-line" x1="{split:.1f}" y1="{top - 34.0:.1f}" x2="{split:.1f}" '
                     f'y2="{y - 12.0:.1f}"/>')
    steps = 2 * (n - 1)
    parts.append(text(left, y + 4.0, t("legend_steps", steps=t.q(steps, "count"), n=t.q(n, "count")), "fig-text fig-small"))
    lines = 1
    size = params["message_bytes"]
    if size > 0:
        # The volume each rank sends: lab_core.comms.ring_time at a bus bandwidth of 1 byte/s.
        per_rank = comms.ring_time(size, n, 1.0) * comms.bus_bandwidth(size, 1.0)
        parts.append(text(left, y + 22.0, t("legend_volume", chunk=t.q(size / n, "bytes"),
                                           volume=t.q(per_rank, "bytes"), size=t.q(size, "bytes")),
                          "fig-text fig-small"))
        lines = 2
    key_y = y + 4.0 + 18.0 * lines
    parts.append(rect(left, key_y, CELL, CELL, "ring-send", 3.0))
    parts.append(text(left + CELL + 6.0, key_y + CELL - 3.0, t("key_send"), "fig-text fig-small"))
    return Drawing(max(width, 640.0), key_y + CELL + 6.0, parts)
