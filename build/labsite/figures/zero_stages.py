"""Figure kind ``zero_stages``: what each data-parallel GPU holds under ZeRO stages 0–3.

One bar per GPU: weights, gradients and optimizer state side by side, sized by
their bytes per parameter (lab_core.memory: 2, the gradient bytes, 12). A
sharded part is cut into one block per rank and each GPU keeps only its own
(arXiv:1910.02054 §5, Fig. 1). The bytes per GPU on the right are
lab_core.memory.model_state_parts for the given model and data-parallel degree.
"""
from lab_core import memory

from . import Drawing, figure_kind
from .svg import legend, rect, text, text_width

BAR, ROW = 20.0, 44.0
PARTS = ("weights", "gradients", "optimizer")


@figure_kind("zero_stages", params={"params": 7.5e9, "dp": 64, "ranks": 4, "state_bytes_per_param": 16})
def draw_zero(params, t):
    n, psi, dp, state = params["ranks"], params["params"], params["dp"], params["state_bytes_per_param"]
    if not 2 <= n <= 6:
        raise ValueError(f"zero_stages figure: ranks must be 2 to 6 (got {n})")
    per_param = (memory.WEIGHT_BYTES, memory.gradient_bytes_per_param(state), memory.OPTIMIZER_BYTES)
    label_w = max(text_width(t("stage", n=k), 12.0) for k in range(4)) + 14.0
    left, right_w = 8.0 + label_w, 96.0
    gpu_w = (680.0 - left - right_w - 8.0 * n) / n
    unit = (gpu_w - 8.0) / sum(per_param)
    parts = [text(680.0 - 4.0, 12.0, t("per_gpu", params=t.q(psi, "params"), dp=t.q(dp, "count")),
                  "fig-text fig-small", "end")]
    for g in range(n):
        parts.append(text(left + g * (gpu_w + 8.0) + gpu_w / 2, 30.0, t("gpu", n=g + 1), "fig-text fig-small", "middle"))
    for stage in range(4):
        y = 42.0 + stage * ROW
        parts.append(text(8.0, y + BAR - 5.0, t("stage", n=stage), "fig-text fig-head"))
        sharded = {"optimizer": stage >= 1, "gradients": stage >= 2, "weights": stage >= 3}
        for g in range(n):
            x = left + g * (gpu_w + 8.0)
            parts.append(rect(x, y - 3.0, gpu_w, BAR + 6.0, "fig-box", 4.0))
            cursor = x + 4.0
            for index, (name, size) in enumerate(zip(PARTS, per_param)):
                width = size * unit
                if sharded[name]:
                    piece = width / n
                    parts.append(rect(cursor, y, width, BAR, "fig-empty", 1.0))
                    parts.append(rect(cursor + g * piece, y, piece, BAR, f"tc-s{index}", 1.0, t(name)))
                else:
                    parts.append(rect(cursor, y, width, BAR, f"tc-s{index}", 1.0, t(name)))
                cursor += width
        wts, grads, opt = memory.model_state_parts(psi, state, dp, stage)
        parts.append(text(680.0 - 4.0, y + BAR - 5.0, t.q(wts + grads + opt, "bytes"), "fig-text fig-head", "end"))
    y = 42.0 + 4 * ROW
    keys, bottom = legend(left, y, [(f"tc-s{index}", t(name)) for index, name in enumerate(PARTS)]
                          + [("fig-empty", t("elsewhere"))])
    return Drawing(680.0, bottom + 2.0, parts + keys)
