"""The 1F1B pipeline schedule picture: who computes what, and the bubble.

Simulates PipeDream-Flush / 1F1B (Narayanan et al. arXiv:2104.04473 §2.2.1)
for a few stages and micro-batches — forward takes one time unit, backward
two — and draws it as SVG. Large p and m are drawn cut down (the picture says
so); the bubble it quotes is the model's (p − 1)/m for the real p and m.
"""
from html import escape

MAX_STAGES = 8
MAX_MICRO = 12
FORWARD, BACKWARD = 1.0, 2.0


def stage_order(stage, stages, micro):
    """1F1B order on one stage: warm-up forwards, then one-forward-one-backward, then the drain."""
    warmup = min(stages - stage - 1, micro)
    order = [("F", i) for i in range(warmup)]
    next_f, next_b = warmup, 0
    while next_b < micro:
        if next_f < micro:
            order.append(("F", next_f))
            next_f += 1
        order.append(("B", next_b))
        next_b += 1
    return order


def simulate(stages, micro):
    """Start and end time of every (kind, micro-batch) on every stage."""
    orders = [stage_order(s, stages, micro) for s in range(stages)]
    done = {}
    position = [0] * stages
    free = [0.0] * stages
    blocks = [[] for _ in range(stages)]
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(stages):
            if position[s] >= len(orders[s]):
                continue
            kind, i = orders[s][position[s]]
            if kind == "F":
                dep = done.get(("F", s - 1, i)) if s > 0 else 0.0
            else:
                dep = done.get(("B", s + 1, i)) if s < stages - 1 else done.get(("F", s, i))
            if dep is None:
                continue
            start = max(free[s], dep)
            end = start + (FORWARD if kind == "F" else BACKWARD)
            done[(kind, s, i)] = end
            free[s] = end
            blocks[s].append((kind, i, start, end))
            position[s] += 1
            remaining -= 1
            progressed = True
        if not progressed:  # cannot happen for a valid order; guards against an endless loop
            break
    return blocks, max(free)


def render_schedule(pp, micro_batches, texts):
    """SVG of the schedule for min(pp, 8) stages and min(m, 12) micro-batches."""
    stages = max(1, min(pp, MAX_STAGES))
    micro = max(1, min(micro_batches, MAX_MICRO))
    blocks, total = simulate(stages, micro)
    width, left, row_h, gap = 640.0, 64.0, 22.0, 6.0
    scale = (width - left - 8.0) / total
    height = stages * (row_h + gap) + 8.0
    parts = [
        f'<svg class="pp-svg" viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(texts["aria"])}">'
    ]
    for s in range(stages):
        y = 4.0 + s * (row_h + gap)
        parts.append(f'<text class="pp-stage" x="{left - 8:.0f}" y="{y + row_h * 0.7:.1f}" text-anchor="end">{escape(texts["stage"].format(n=s + 1))}</text>')
        parts.append(f'<rect class="pp-idle" x="{left:.1f}" y="{y:.1f}" width="{total * scale:.1f}" height="{row_h:.0f}"/>')
        for kind, i, start, end in blocks[s]:
            x = left + start * scale
            w = (end - start) * scale
            parts.append(
                f'<rect class="pp-{"fwd" if kind == "F" else "bwd"}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{row_h:.0f}" rx="2"/>'
            )
            if w >= 14:
                parts.append(f'<text class="pp-label" x="{x + w / 2:.1f}" y="{y + row_h * 0.7:.1f}" text-anchor="middle">{i + 1}</text>')
    parts.append("</svg>")
    return "".join(parts), {"stages_drawn": stages, "micro_drawn": micro}
