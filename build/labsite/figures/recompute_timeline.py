"""Figure kind ``recompute_timeline``: one layer's forward, recompute and backward
under no, selective and full recomputation, with what each keeps in memory.

Times are lab_core.timing.layer_times at the workload's achievable rates
(lab_core.context); stored bytes lab_core.activations.per_layer_bytes
(arXiv:2205.05198 Table 2, §5; full recompute keeps the layer input only,
arXiv:2104.04473 Eq. 3).
"""
import lab_core
from lab_core.activations import per_layer_bytes
from lab_core.context import context_for
from lab_core.timing import layer_times

from . import Drawing, figure_kind
from .svg import legend, rect, text, text_width

MODES = ("none", "selective", "full")


@figure_kind("recompute_timeline", params={"params": 175e9, "seq": 2048, "tp": 8, "sequence_parallel": True,
                                           "flash_attention": False, "gpu": "a100_80gb"})
def draw_recompute(params, t):
    w = lab_core.Workload(params=params["params"], seq_len=params["seq"], gpu=params["gpu"],
                          flash_attention=params["flash_attention"])
    ctx = context_for(w)
    s, h, a, f, tp, sp = w.seq_len, ctx.hidden, ctx.heads, ctx.ffn_hidden, params["tp"], params["sequence_parallel"]
    rows = []
    for mode in MODES:
        lt = layer_times(s, 1, h, a, f, tp, sp, mode, ctx.flash, ctx.flops_rate, ctx.hbm_rate, ctx.nvlink_rate,
                         ctx.kv_ratio, ctx.dropout)
        stored = per_layer_bytes(s, 1, h, a, tp, sp, mode, ctx.flash, f, ctx.kv_ratio, ctx.dropout)
        rows.append((mode, lt.forward, lt.recompute, lt.backward, stored))
    label_w = max(text_width(t(mode), 12.0) for mode in MODES) + 12.0
    left, right_w = 8.0 + label_w, 150.0
    longest = max(fw + rc + bw for _, fw, rc, bw, _ in rows)
    scale = (680.0 - left - right_w) / longest
    parts = [text(680.0 - 4.0, 14.0, t("kept"), "fig-text fig-small", "end")]
    for index, (mode, fw, rc, bw, stored) in enumerate(rows):
        y = 24.0 + index * 40.0
        parts.append(text(8.0, y + 16.0, t(mode), "fig-text fig-head"))
        x = left
        for key, seconds, cls in (("forward", fw, "tc-s0"), ("recompute", rc, "tc-s1"), ("backward", bw, "tc-s2")):
            if seconds <= 0.0:
                continue
            width = seconds * scale
            parts.append(rect(x, y, width, 22.0, cls, 2.0, f"{t(key)}: {t.q(seconds, 'duration')}"))
            if width > 52.0:
                on = "fig-on-s0" if cls == "tc-s0" else "fig-on-fill"
                parts.append(text(x + width / 2, y + 15.0, t.q(seconds, "duration"), f"fig-small {on}", "middle"))
            x += width
        parts.append(text(680.0 - 4.0, y + 16.0, t.q(stored, "bytes"), "fig-text fig-head", "end"))
    y = 24.0 + len(rows) * 40.0
    keys, y = legend(left, y, [(cls, t(key)) for key, cls in (("forward", "tc-s0"), ("recompute", "tc-s1"),
                                                              ("backward", "tc-s2"))])
    parts += keys
    parts.append(text(8.0, y + 12.0, t("setting", params=t.q(w.params, "params"), seq=t.q(s, "count"),
                                      tp=t.q(tp, "count")), "fig-text fig-small"))
    return Drawing(680.0, y + 20.0, parts)
