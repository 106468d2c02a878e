"""Figure kind ``dp_overlap``: what the data-parallel all-reduce hides behind, on two stacks.

For plain data parallelism of the given workload, one row of compute — the m
micro-batches' forward and backward passes — and one row of communication:
the traffic the last micro-batch's backward hides (the only window, since
gradients are final only after it) and what is left exposed after it. Times
are lab_core.evaluate's on the 2021 stack (one calibrated overlap window,
sync.legacy_sync) and on the modern stack (buckets behind the backward, the
last one exposed, contention; sync.modern_sync).
"""
import lab_core

from . import Drawing, figure_kind
from .svg import legend, rect, text, text_width

STACKS = ("megatron_lm_2021", "modern")
CSS = """
.tut-figure-svg .dp-hidden { fill: #0072b2; fill-opacity: 0.3; stroke: #0072b2; stroke-width: 1; }
.tut-figure-svg .dp-exposed { fill: #d55e00; }
"""


def _runs(params):
    workload = dict(params=params["params"], gpus=params["gpus"], seq_len=params["seq"],
                    global_batch_tokens=params["batch_tokens"], inter_node_gbps=params["gbps"])
    runs = []
    for stack in STACKS:
        w = lab_core.Workload(**dict(workload, stack=stack))
        runs.append((stack, lab_core.evaluate(w, lab_core.Parallelism(dp=params["gpus"], micro_batch=params["micro_batch"]))))
    return runs


@figure_kind("dp_overlap", params={"params": 1.3e9, "gpus": 64, "seq": 2048, "batch_tokens": 1048576, "gbps": 200.0,
                                   "micro_batch": 2}, css=CSS)
def draw_dp_overlap(params, t):
    runs = _runs(params)
    label_w = max(text_width(t(stack), 12.0) for stack in STACKS) + 14.0
    left, right_w = 8.0 + label_w, 8.0
    longest = max(r.forward_s + r.backward_s + r.dp_comm_s for _, r in runs)
    scale = (680.0 - left - right_w) / longest
    parts = []
    for index, (stack, r) in enumerate(runs):
        y = 8.0 + index * 84.0
        m = r.micro_batches
        fwd, bwd = r.forward_s / m, r.backward_s / m
        parts.append(text(8.0, y + 16.0, t(stack), "fig-text fig-head"))
        x = left
        for i in range(m):
            parts.append(rect(x, y, fwd * scale, 22.0, "tc-s0", 1.5, t("forward")))
            x += fwd * scale
            parts.append(rect(x, y, bwd * scale, 22.0, "tc-s2", 1.5, t("backward")))
            if i == m - 1:
                window = (x, bwd * scale)
            x += bwd * scale
        end = x
        hidden = r.dp_comm_total_s - min(r.dp_comm_s, r.dp_comm_total_s)
        parts.append(rect(window[0], y + 28.0, window[1], 16.0, "dp-hidden", 1.5))
        if r.dp_comm_s > 0.0:
            parts.append(rect(end, y + 28.0, r.dp_comm_s * scale, 16.0, "dp-exposed", 1.5))
        parts.append(text(left, y + 60.0, t("detail", m=t.q(m, "count"), total=t.q(r.dp_comm_total_s, "duration"),
                                           hidden=t.q(hidden, "duration"), exposed=t.q(r.dp_comm_s, "duration")),
                          "fig-text fig-small"))
    y = 8.0 + len(runs) * 84.0
    keys, y = legend(left, y, [("tc-s0", t("forward")), ("tc-s2", t("backward")), ("dp-hidden", t("hidden")),
                               ("dp-exposed", t("exposed"))])
    parts += keys
    parts.append(text(left, y + 12.0, t("setting", params=t.q(params["params"], "params"),
                                       gpus=t.q(params["gpus"], "count"), gbps=t.q(params["gbps"], "gbps"),
                                       b=t.q(params["micro_batch"], "count")), "fig-text fig-small"))
    return Drawing(680.0, y + 20.0, parts)
