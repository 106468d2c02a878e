"""Figure kind ``tp_split``: a transformer layer's attention and MLP split over t GPUs.

Megatron-LM's split (arXiv:1909.08053 §3, Fig. 3): attention by heads — the
query/key/value projection split by columns, the output projection by rows —
and the MLP's first matrix by columns, its second by rows, each block ending
in one all-reduce (operator g; f is its backward twin). Matrix sizes are the
model's shape (lab_core.shape for the given size) divided as Megatron does;
the all-reduce carries b·s·h 16-bit values (lab_core.timing.layer_times).
"""
import lab_core

from . import Drawing, figure_kind
from .svg import arrow, rect, text, text_width

LANE_H = 30.0
CSS = """
.tut-figure-svg .tp-op { fill: #e69f00; stroke: none; }
"""


def _block(parts, t, x0, width, lanes, top, title, steps):
    """One block: the input, t lanes of (matrix, op, matrix), the all-reduce, the output."""
    mid = x0 + width / 2
    parts.append(text(mid, top, title, "fig-text fig-head", "middle"))
    label = t("input")
    box = text_width(label, 10.5) + 16.0
    parts.append(rect(mid - box / 2, top + 8.0, box, 22.0, "fig-box", 4.0))
    parts.append(text(mid, top + 23.0, label, "fig-text fig-small", "middle"))
    bx0 = x0 + 46.0
    box_w = (width - 58.0) / 3.0
    lane_top = top + 50.0
    centres = [lane_top + lane * (LANE_H + 8.0) + LANE_H / 2 for lane in range(lanes)]
    # The input reaches every lane along a rail on the left, the outputs leave along one on the right.
    rail_in, rail_out = bx0 - 8.0, bx0 + 3.0 * box_w + 4.0
    parts.append(f'<path class="fig-line" d="M{mid:.1f} {top + 30.0:.1f} V{top + 40.0:.1f} H{rail_in:.1f} '
                 f'V{centres[-1]:.1f}"/>')
    for lane, centre in enumerate(centres):
        y = centre - LANE_H / 2
        parts.append(arrow(rail_in, centre, bx0 - 1.0, centre))
        for k, (label, cls) in enumerate(steps):
            x = bx0 + k * (box_w + 2.0)
            parts.append(rect(x, y, box_w - 2.0, LANE_H, cls, 3.0))
            on = "fig-on-s0" if cls == "tc-s0" else "fig-on-fill"
            for i, line in enumerate(label.split("\n")):
                parts.append(text(x + (box_w - 2.0) / 2, y + 12.0 + 11.0 * i, line, f"fig-small {on}", "middle"))
        parts.append(text(x0, centre + 4.0, t("gpu", n=lane + 1), "fig-text fig-small"))
        parts.append(f'<path class="fig-line" d="M{bx0 + 3.0 * box_w - 2.0:.1f} {centre:.1f} H{rail_out:.1f}"/>')
    ar_y = centres[-1] + LANE_H / 2 + 22.0
    parts.append(f'<path class="fig-line" d="M{rail_out:.1f} {centres[0]:.1f} V{ar_y + 3.0:.1f} H{mid + 62.0:.1f}"/>')
    parts.append(rect(mid - 62.0, ar_y - 8.0, 124.0, 22.0, "tp-op", 11.0))
    parts.append(text(mid, ar_y + 7.0, t("allreduce"), "fig-small fig-on-fill", "middle"))
    parts.append(arrow(mid, ar_y + 14.0, mid, ar_y + 30.0))
    parts.append(text(mid, ar_y + 44.0, t("output"), "fig-text fig-small", "middle"))
    return ar_y + 50.0


@figure_kind("tp_split", params={"params": 175e9, "seq": 2048, "tp": 8, "lanes": 2, "hidden": 0, "heads": 0,
                                 "layers": 0, "ffn": 0}, css=CSS)
def draw_tp(params, t):
    tp, lanes = params["tp"], min(params["lanes"], params["tp"])
    w = lab_core.Workload(params=params["params"], seq_len=params["seq"], hidden=params["hidden"] or None,
                          heads=params["heads"] or None, layers=params["layers"] or None,
                          ffn_hidden=params["ffn"] or None)
    shape = w.shape
    h, f, a = shape.hidden, shape.ffn_hidden, shape.heads
    if a % tp or f % tp or not 2 <= lanes <= 4:
        raise ValueError(f"tp_split figure: heads and the MLP size must divide by tp, lanes 2 to 4 (got {params})")
    q = t.q
    attention = [(t("qkv", h=q(h, "count"), cols=q(3 * h // tp, "count")), "tc-s0"),
                 (t("heads", k=q(a // tp, "count")), "tc-s2"),
                 (t("proj", rows=q(h // tp, "count"), h=q(h, "count")), "tc-s0")]
    mlp = [(t("mlp_a", h=q(h, "count"), cols=q(f // tp, "count")), "tc-s0"),
           (t("gelu"), "tc-s2"),
           (t("mlp_b", rows=q(f // tp, "count"), h=q(h, "count")), "tc-s0")]
    parts = []
    bottom = _block(parts, t, 6.0, 320.0, lanes, 14.0, t("attention", t=q(tp, "count")), attention)
    _block(parts, t, 354.0, 320.0, lanes, 14.0, t("mlp", t=q(tp, "count")), mlp)
    message = 2.0 * w.seq_len * h
    parts.append(text(6.0, bottom + 8.0, t("shown", lanes=q(lanes, "count"), t=q(tp, "count")), "fig-text fig-small"))
    parts.append(text(6.0, bottom + 24.0, t("traffic", message=q(message, "bytes"), seq=q(w.seq_len, "count")),
                      "fig-text fig-small"))
    return Drawing(700.0, bottom + 32.0, parts)
