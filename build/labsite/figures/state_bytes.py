"""Figure kind ``state_bytes``: the training state of one parameter, byte by byte.

Mixed-precision Adam keeps a 16-bit weight, a gradient (16-bit in ZeRO's
accounting, fp32 in Megatron's bf16 training) and 12 bytes of fp32 optimizer
state — master weight, momentum, variance (arXiv:1910.02054 §3.1;
lab_core.memory). One bar per accounting, each byte a cell; on the right,
what that state costs for the given model.
"""
from lab_core import memory

from . import Drawing, figure_kind
from .svg import legend, rect, text, text_width

CELL = 24.0
CSS = """
.tut-figure-svg .sb-fp32 { fill: #009e73; }
.tut-figure-svg .sb-half { fill: #0072b2; }
.tut-figure-svg .sb-grad32 { fill: #e69f00; }
.tut-figure-svg .sb-grad16 { fill: #56b4e9; }
"""


@figure_kind("state_bytes", params={"params": 6.7e9, "accountings": (16, 18)}, css=CSS)
def draw_state_bytes(params, t):
    rows = []
    for state in params["accountings"]:
        state = int(state)
        grad = memory.gradient_bytes_per_param(state)
        cells = ([("sb-half", "weights")] * int(memory.WEIGHT_BYTES)
                 + [("sb-grad32" if grad > memory.WEIGHT_BYTES else "sb-grad16", "gradients")] * int(grad)
                 + [("sb-fp32", "optimizer")] * int(memory.OPTIMIZER_BYTES))
        rows.append((state, cells))
    label_w = max(text_width(t("row", n=state), 12.0) for state, _ in rows) + 12.0
    left = 8.0 + label_w
    parts = []
    for index, (state, cells) in enumerate(rows):
        y = 10.0 + index * 44.0
        parts.append(text(8.0, y + 17.0, t("row", n=state), "fig-text fig-head"))
        for k, (cls, part) in enumerate(cells):
            parts.append(rect(left + k * (CELL + 2.0), y, CELL, CELL, cls, 2.0, t(part)))
        end = left + len(cells) * (CELL + 2.0) + 10.0
        parts.append(text(end, y + 17.0, t("total", bytes=t.q(state * params["params"], "bytes"),
                                          params=t.q(params["params"], "params")), "fig-text fig-small"))
    y = 10.0 + len(rows) * 44.0
    keys, y = legend(left, y, [("sb-half", t("weights")), ("sb-grad16", t("grad16")), ("sb-grad32", t("grad32")),
                               ("sb-fp32", t("optimizer"))], right=692.0)
    parts += keys
    parts.append(text(left, y + 12.0, t("note"), "fig-text fig-small"))
    return Drawing(700.0, y + 20.0, parts)
