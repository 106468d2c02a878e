"""Figure kind ``schedule``: GPipe, 1F1B and interleaved 1F1B on one time scale.

The blocks are lab_view.schedule's simulation (the lab's own renderer, forward
one unit, backward two, a chunk 1/v of that); the bubble and the micro-batches
the first stage holds are lab_core.pipeline's and lab_core.activations' figures
for the drawn p, m and v (arXiv:1811.06965 §2.3, arXiv:2104.04473 §2.2).
"""
from lab_core import activations, pipeline
from lab_view.schedule import gpipe_order, interleaved_order, schedule_rows, simulate_orders, stage_order

from . import Drawing, figure_kind
from .svg import legend, text

WIDTH, LEFT = 680.0, 70.0
CSS = """
.tut-figure-svg .pp-chunk { fill-opacity: 0.62; }
"""


def _panels(p, m, v, names):
    panels = []
    for name in names:
        if name == "gpipe":
            orders, chunks = [gpipe_order(s, p, m) for s in range(p)], 1
            bubble, held = pipeline.bubble_fraction(p, m), m
        elif name == "1f1b":
            orders, chunks = [stage_order(s, p, m) for s in range(p)], 1
            bubble, held = pipeline.bubble_fraction(p, m), pipeline.in_flight_micro_batches(p, m)
        else:
            orders, chunks = [interleaved_order(s, p, m, v) for s in range(p)], v
            bubble = pipeline.bubble_fraction(p, m, v)
            held = pipeline.in_flight_micro_batches(p, m) * activations.interleave_multiplier(p, v)
        blocks, total = simulate_orders(orders, chunks)
        panels.append((name, blocks, total, bubble, held))
    return panels


@figure_kind("schedule", params={"pp": 4, "micro": 8, "interleave": 2, "schedules": ("gpipe", "1f1b", "interleaved")},
             css=CSS)
def draw_schedule(params, t):
    p, m, v = params["pp"], params["micro"], params["interleave"]
    names = params["schedules"]
    unknown = [n for n in names if n not in ("gpipe", "1f1b", "interleaved")]
    if unknown or p < 2 or m < 1 or ("interleaved" in names and (v < 2 or m % p)):
        raise ValueError(f"schedule figure: schedules from gpipe, 1f1b, interleaved; pp >= 2; "
                         f"interleaved needs interleave >= 2 and micro divisible by pp (got {params})")
    panels = _panels(p, m, v, names)
    longest = max(total for _, _, total, _, _ in panels)
    scale = (WIDTH - LEFT - 10.0) / longest
    parts, y = [], 4.0
    labels = {"stage": t.texts["stage"]}
    for name, blocks, total, bubble, held in panels:
        heading = t(f"heading_{name}", v=t.q(v, "count"))
        detail = t("detail", units=t.q(total, "plain"), bubble=t.q(bubble, "percent"), held=t.q(held, "plain"))
        parts.append(text(LEFT, y + 12.0, heading, "fig-text fig-head"))
        parts.append(text(LEFT, y + 27.0, detail, "fig-text fig-small fig-muted"))
        rows, height = schedule_rows(blocks, total, labels, WIDTH, LEFT, y + 34.0, scale, label_chunks=True)
        parts.extend(rows)
        y += 34.0 + height + 8.0
    keys = [("pp-fwd", "forward"), ("pp-bwd", "backward")]
    keys += [("pp-fwd pp-chunk", "second_chunk")] if "interleaved" in names else []
    legend_parts, bottom = legend(LEFT, y + 2.0, [(cls, t(key)) for cls, key in keys + [("pp-idle", "idle")]])
    return Drawing(WIDTH, bottom + 2.0, parts + legend_parts)
