"""Figure kind ``packing``: documents packed into one training sequence, and the
attention each token may use under a plain causal mask and a per-document mask.

The sequence is ``docs`` documents of equal length; the shaded area of each
mask is the attention the kernel computes, so its share is the FLOP share the
chapter states (lab_core.flops.layer_forward_flops: attention grows with the
square of the span; per-document masking as in arXiv:2107.02027 and
arXiv:2407.21783 §3.2).
"""
from . import Drawing, figure_kind
from .svg import rect, text

WIDTH = 680.0
CSS = """
.tut-figure-svg .pack-mask { stroke: none; }
"""


def _triangle(x, y, size, cls):
    """The lower-left triangle of a size × size square at (x, y): causal attention."""
    return (f'<path class="{cls} pack-mask" d="M{x:.1f} {y:.1f} L{x:.1f} {y + size:.1f} '
            f'L{x + size:.1f} {y + size:.1f} Z"/>')


@figure_kind("packing", params={"seq": 8192, "docs": 8}, css=CSS)
def draw_packing(params, t):
    s, docs = params["seq"], params["docs"]
    if docs < 2 or docs > 16 or s % docs:
        raise ValueError(f"packing figure: 2 to 16 documents that divide the sequence (got {params})")
    parts = [text(8.0, 14.0, t("sequence", seq=t.q(s, "count"), docs=t.q(docs, "count"),
                               doc=t.q(s // docs, "count")), "fig-text fig-small")]
    bar_x, bar_w, bar_y = 8.0, WIDTH - 16.0, 22.0
    piece = bar_w / docs
    for d in range(docs):
        parts.append(rect(bar_x + d * piece, bar_y, piece - 2.0, 18.0, f"tc-s{d % 2 * 2}", 1.5,
                          t("document", n=d + 1)))
    size = 230.0
    y = bar_y + 44.0
    for panel, (key, blocks) in enumerate((("causal", 1), ("masked", docs))):
        x = 40.0 + panel * (size + 140.0)
        parts.append(text(x, y - 6.0, t(key), "fig-text fig-head"))
        parts.append(rect(x, y, size, size, "fig-empty", 0.0))
        cell = size / blocks
        for b in range(blocks):
            cls = "tc-s0" if blocks == 1 else f"tc-s{b % 2 * 2}"
            parts.append(_triangle(x + b * cell, y + b * cell, cell, cls))
        share = 1.0 / blocks
        parts.append(text(x + size / 2, y + size + 18.0, t("computed", share=t.q(share, "percent")),
                          "fig-text fig-small", "middle"))
        parts.append(text(x - 6.0, y + size / 2, t("query"), "fig-text fig-small", "end"))
    parts.append(text(WIDTH / 2, y + size + 40.0, t("axes"), "fig-text fig-small fig-muted", "middle"))
    return Drawing(WIDTH, y + size + 52.0, parts)
