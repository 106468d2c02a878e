"""The plan's curves as charts (SVG) with the table behind each, in the reader's words.

Input: lab_core.curves.curves() points. Memory charts stack weights,
gradients, optimizer state and activations per point, with the device's
memory drawn as a dashed line; the strong-scaling chart draws step time
against GPUs on log scales with the ideal (linear) speed-up through the
plan's own point, and marks where the plan stops fitting the device. Every
text is escaped; the table carries the same numbers for screen readers and
for copying.
"""
import math
from html import escape

from .bars import MEMORY_PARTS, memory_segments
from .quantities import format_quantity

W, H = 480.0, 240.0
LEFT, RIGHT, TOP, BOTTOM = 64.0, 12.0, 12.0, 40.0
X_KINDS = {"seq_len": "tokens", "micro_batch": "count", "gpus": "count"}


def _x_positions(n):
    span = W - LEFT - RIGHT
    step = span / n
    return [LEFT + step * (i + 0.5) for i in range(n)], step


def _y(value, top):
    return H - BOTTOM - (H - TOP - BOTTOM) * (value / top if top > 0 else 0.0)


def _x_labels(points, xs, kind, units):
    every = 1 if len(points) <= 8 else 2
    return "".join(
        f'<text class="ch-tick" x="{x:.1f}" y="{H - BOTTOM + 14:.0f}" text-anchor="middle">'
        f'{escape(format_quantity(p["x"], kind, units))}</text>'
        for i, (p, x) in enumerate(zip(points, xs)) if i % every == 0 or i == len(points) - 1)


def _memory_svg(name, points, texts, units, label):
    good = [p for p in points if p["ok"]]
    device = good[0]["device_bytes"] if good else 0.0
    top = max([p["memory_bytes"] for p in good] + [device]) * 1.05 if good else 1.0
    xs, step = _x_positions(len(points))
    parts = []
    for p, x in zip(points, xs):
        if not p["ok"]:
            parts.append(f'<text class="ch-missing" x="{x:.1f}" y="{H - BOTTOM - 4:.0f}" text-anchor="middle">×</text>')
            continue
        base = 0.0
        for part, value in memory_segments(p):
            y0, y1 = _y(base, top), _y(base + value, top)
            parts.append(f'<rect class="bar-{part}" x="{x - step * 0.35:.1f}" y="{y1:.1f}" width="{step * 0.7:.1f}" '
                         f'height="{max(y0 - y1, 0.0):.1f}"/>')
            base += value
    yd = _y(device, top)
    grid = "".join(
        f'<line class="ch-grid" x1="{LEFT:.0f}" x2="{W - RIGHT:.0f}" y1="{_y(top * f, top):.1f}" y2="{_y(top * f, top):.1f}"/>'
        f'<text class="ch-tick" x="{LEFT - 4:.0f}" y="{_y(top * f, top) + 4:.1f}" text-anchor="end">'
        f'{escape(format_quantity(top * f, "bytes", units))}</text>' for f in (0.25, 0.5, 0.75, 1.0))
    limit = (f'<line class="ch-limit" x1="{LEFT:.0f}" x2="{W - RIGHT:.0f}" y1="{yd:.1f}" y2="{yd:.1f}"/>'
             f'<text class="ch-limit-label" x="{W - RIGHT:.0f}" y="{yd - 4:.1f}" text-anchor="end">'
             f'{escape(texts["device_line"].format(device=format_quantity(device, "bytes", units)))}</text>')
    axis = f'<text class="ch-axis" x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 6:.0f}" text-anchor="middle">{escape(texts["x"][name])}</text>'
    return _svg(label, grid + "".join(parts) + limit + _x_labels(points, xs, X_KINDS[name], units) + axis)


def _svg(label, body):
    return (f'<svg class="ch-svg" viewBox="0 0 {W:.0f} {H:.0f}" role="img" aria-label="{escape(label)}">'
            f'{body}</svg>')


def _log_scale(values, low_px, high_px):
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    return lambda v: low_px + (high_px - low_px) * (math.log10(v) - lo) / (hi - lo)


def _scaling_svg(points, current_gpus, texts, units, label):
    good = [p for p in points if p["ok"]]
    if not good:
        return _svg(label, "")
    here = next((p for p in good if p["x"] == current_gpus), good[0])
    ideal = [here["step_s"] * here["x"] / p["x"] for p in good]
    fx = _log_scale([p["x"] for p in good], LEFT + 12, W - RIGHT - 12)
    fy = _log_scale([p["step_s"] for p in good] + ideal, H - BOTTOM - 6, TOP + 6)
    line = " ".join(f'{fx(p["x"]):.1f},{fy(p["step_s"]):.1f}' for p in good)
    ideal_line = " ".join(f'{fx(p["x"]):.1f},{fy(v):.1f}' for p, v in zip(good, ideal))
    dots = "".join(
        f'<circle class="ch-dot{"" if p["fits"] else " ch-nofit"}{" ch-here" if p is here else ""}" '
        f'cx="{fx(p["x"]):.1f}" cy="{fy(p["step_s"]):.1f}" r="{5 if p is here else 3.5}"/>' for p in good)
    fitting = [p["x"] for p in good if p["fits"]]
    limit = ""
    if fitting and min(fitting) > good[0]["x"]:
        x = fx(min(fitting))
        limit = (f'<line class="ch-limit" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP:.0f}" y2="{H - BOTTOM:.0f}"/>'
                 f'<text class="ch-limit-label" x="{x + 4:.1f}" y="{TOP + 10:.0f}">'
                 f'{escape(texts["fits_from"].format(gpus=format_quantity(min(fitting), "count", units)))}</text>')
    ticks = "".join(
        f'<text class="ch-tick" x="{fx(p["x"]):.1f}" y="{H - BOTTOM + 14:.0f}" text-anchor="middle">'
        f'{escape(format_quantity(p["x"], "count", units))}</text>'
        for i, p in enumerate(good) if i % (1 if len(good) <= 8 else 2) == 0 or p is good[-1])
    steps = [p["step_s"] for p in good]
    yticks = "".join(
        f'<text class="ch-tick" x="{LEFT - 4:.0f}" y="{fy(v) + 4:.1f}" text-anchor="end">'
        f'{escape(format_quantity(v, "duration", units))}</text>' for v in (max(steps), min(steps)))
    axis = f'<text class="ch-axis" x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 6:.0f}" text-anchor="middle">{escape(texts["x"]["gpus"])}</text>'
    body = (f'<polyline class="ch-ideal" points="{ideal_line}"/><polyline class="ch-line" points="{line}"/>'
            f'{dots}{limit}{ticks}{yticks}{axis}')
    return _svg(label, body)


def _table(name, points, texts, units, catalog):
    parts = catalog["lab"]["bars"]["memory_parts"]
    if name == "gpus":
        head = (texts["x"]["gpus"], texts["columns"]["step"], texts["columns"]["memory"], texts["columns"]["fits"])
    else:
        head = (texts["x"][name],) + tuple(parts[p] for p in MEMORY_PARTS) + (texts["columns"]["memory"],
                                                                                 texts["columns"]["fits"])
    rows = []
    for p in points:
        x = format_quantity(p["x"], X_KINDS[name], units)
        if not p["ok"]:
            cells = [texts["invalid"]] + [""] * (len(head) - 2)
        elif name == "gpus":
            cells = [format_quantity(p["step_s"], "duration", units), format_quantity(p["memory_bytes"], "bytes", units),
                     catalog["lab"]["terms"]["yes" if p["fits"] else "no"]]
        else:
            cells = [format_quantity(value, "bytes", units) for _, value in memory_segments(p)]
            cells += [format_quantity(p["memory_bytes"], "bytes", units), catalog["lab"]["terms"]["yes" if p["fits"] else "no"]]
        rows.append(f'<tr><th scope="row">{escape(x)}</th>{"".join(f"<td>{escape(c)}</td>" for c in cells)}</tr>')
    head_html = "".join(f'<th scope="col">{escape(h)}</th>' for h in head)
    return (f'<details class="ch-data"><summary>{escape(texts["table"])}</summary>'
            f'<table><thead><tr>{head_html}</tr></thead><tbody>{"".join(rows)}</tbody></table></details>')


def render_curves(curves, plan_gpus, catalog):
    """{name: {"title", "svg", "table", "caption"}} for lab_core.curves.curves() output."""
    texts, units = catalog["curves"], catalog["units"]
    out = {}
    for name, points in curves.items():
        title = texts["titles"][name]
        if name == "gpus":
            svg = _scaling_svg(points, plan_gpus, texts, units, title)
        else:
            svg = _memory_svg(name, points, texts, units, title)
        out[name] = {"title": title, "caption": texts["captions"][name], "svg": svg,
                     "table": _table(name, points, texts, units, catalog)}
    return out
