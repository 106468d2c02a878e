"""Pipeline schedule pictures: who computes what, and the bubble.

Simulates three schedules for a few stages and micro-batches — forward takes
one time unit, backward two, a model chunk 1/v of that — and draws them as SVG:
- GPipe (Huang et al. arXiv:1811.06965 §2.3): every forward, then every backward;
- 1F1B / PipeDream-Flush (Narayanan et al. arXiv:2104.04473 §2.2.1): warm-up
  forwards, then one forward and one backward in turn, then the drain;
- interleaved 1F1B (arXiv:2104.04473 §2.2.2): v model chunks per GPU, in the
  order Megatron-LM's forward_backward_pipelining_with_interleaving runs them.
The lab draws the plan's own schedule, 1F1B or interleaved 1F1B; large p, m
and v are drawn cut down (the caption says so); the bubble it quotes is the
model's (p − 1)/(v m) for the real p, m and v.
"""
from html import escape

MAX_STAGES = 8
MAX_MICRO = 12
# More chunks than this are drawn as this many: each block would be too narrow to read.
MAX_CHUNKS = 2
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


def gpipe_order(stage, stages, micro):
    """GPipe's order on one stage: all forwards, then all backwards."""
    return [("F", i) for i in range(micro)] + [("B", i) for i in range(micro)]


def interleaved_order(stage, stages, micro, chunks):
    """Interleaved 1F1B on one stage as (kind, micro-batch, chunk): Megatron-LM's
    warm-up of (p − stage − 1)·2 + (v − 1)·p chunk forwards, then one forward
    and one backward in turn; forwards go chunk 0 → v − 1 in groups of p
    micro-batches, backwards chunk v − 1 → 0. Needs m divisible by p."""
    total = micro * chunks

    def unit(k, backward):
        group = (k // stages) % chunks
        chunk = chunks - 1 - group if backward else group
        return (k // (stages * chunks)) * stages + k % stages, chunk

    warmup = min((stages - stage - 1) * 2 + (chunks - 1) * stages, total)
    order = [("F",) + unit(k, False) for k in range(warmup)]
    next_f, next_b = warmup, 0
    while next_b < total:
        if next_f < total:
            order.append(("F",) + unit(next_f, False))
            next_f += 1
        order.append(("B",) + unit(next_b, True))
        next_b += 1
    return order


def simulate_orders(orders, chunks=1):
    """Start and end of every block when stage s runs ``orders[s]`` in turn
    (items (kind, micro-batch) or (kind, micro-batch, chunk)); model chunk c of
    stage s is virtual stage c·p + s. Returns (blocks per stage as
    (kind, micro, start, end, chunk), makespan)."""
    stages = len(orders)
    last = stages * chunks - 1
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
            item = orders[s][position[s]]
            kind, i = item[0], item[1]
            chunk = item[2] if len(item) > 2 else 0
            virtual = chunk * stages + s
            if kind == "F":
                dep = done.get(("F", virtual - 1, i)) if virtual > 0 else 0.0
            else:
                dep = done.get(("B", virtual + 1, i)) if virtual < last else done.get(("F", virtual, i))
            if dep is None:
                continue
            start = max(free[s], dep)
            end = start + (FORWARD if kind == "F" else BACKWARD) / chunks
            done[(kind, virtual, i)] = end
            free[s] = end
            blocks[s].append((kind, i, start, end, chunk))
            position[s] += 1
            remaining -= 1
            progressed = True
        if not progressed:  # cannot happen for a valid order; guards against an endless loop
            break
    return blocks, max(free)


def simulate(stages, micro):
    """Start and end time of every (kind, micro-batch) on every stage under 1F1B."""
    blocks, total = simulate_orders([stage_order(s, stages, micro) for s in range(stages)])
    return [[block[:4] for block in row] for row in blocks], total


def schedule_rows(blocks, total, texts, width=640.0, left=64.0, top=4.0, scale=None, label_chunks=False):
    """SVG elements of a simulated schedule: one row per stage, a block per
    forward or backward (chunk c > 0 marked ``pp-chunk``), its micro-batch number."""
    row_h, gap = 22.0, 6.0
    if scale is None:
        scale = (width - left - 8.0) / total
    parts = []
    for s, row in enumerate(blocks):
        y = top + s * (row_h + gap)
        parts.append(f'<text class="pp-stage" x="{left - 8:.0f}" y="{y + row_h * 0.7:.1f}" text-anchor="end">{escape(texts["stage"].format(n=s + 1))}</text>')
        parts.append(f'<rect class="pp-idle" x="{left:.1f}" y="{y:.1f}" width="{total * scale:.1f}" height="{row_h:.0f}"/>')
        for block in row:
            kind, i, start, end = block[:4]
            chunk = block[4] if len(block) > 4 else 0
            x = left + start * scale
            w = (end - start) * scale
            extra = " pp-chunk" if label_chunks and chunk % 2 else ""
            parts.append(
                f'<rect class="pp-{"fwd" if kind == "F" else "bwd"}{extra}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{row_h:.0f}" rx="2"/>'
            )
            if w >= 14:
                parts.append(f'<text class="pp-label" x="{x + w / 2:.1f}" y="{y + row_h * 0.7:.1f}" text-anchor="middle">{i + 1}</text>')
    return parts, len(blocks) * (row_h + gap)


# render_schedule's pictures by (stages, micro-batches drawn, the two texts it uses): at most
# 8 x 12 per language, and simulating and drawing one is half of a full answer's view.
_DRAWN = {}


def render_schedule(pp, micro_batches, texts, interleave=1):
    """SVG of the plan's schedule for min(pp, 8) stages and min(m, 12) micro-batches:
    1F1B, or with interleave v > 1 interleaved 1F1B with min(v, MAX_CHUNKS) chunks on
    a multiple of the stages drawn (what interleaving needs: the plan's m is a
    multiple of its p, parallelism.py)."""
    stages = max(1, min(pp, MAX_STAGES))
    micro = max(1, min(micro_batches, MAX_MICRO))
    chunks = min(interleave, MAX_CHUNKS) if stages > 1 else 1
    if chunks > 1:
        micro = max(stages, micro // stages * stages)
    aria = texts["aria_interleaved"] if chunks > 1 else texts["aria"]
    key = (stages, micro, chunks, texts["stage"], aria)
    found = _DRAWN.get(key)
    if found is None:
        found = _DRAWN[key] = _draw_schedule(stages, micro, chunks, texts["stage"], aria)
    return found


def _draw_schedule(stages, micro, chunks, stage_label, aria):
    if chunks > 1:
        blocks, total = simulate_orders([interleaved_order(s, stages, micro, chunks) for s in range(stages)], chunks)
    else:
        blocks, total = simulate(stages, micro)
    width = 640.0
    rows, rows_height = schedule_rows(blocks, total, {"stage": stage_label}, width, label_chunks=chunks > 1)
    height = rows_height + 8.0
    parts = [f'<svg class="pp-svg" viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(aria)}">']
    parts.extend(rows)
    parts.append("</svg>")
    return "".join(parts), {"stages_drawn": stages, "micro_drawn": micro, "chunks_drawn": chunks}
