"""Stacked bars of the plan: per-GPU memory against the device, and the step
time broken into its parts. SVG + legend markup; every text is escaped."""
from html import escape

from .quantities import format_quantity

WIDTH, HEIGHT = 600.0, 22.0

MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations", "loss")
TIME_PARTS = (("compute", ("forward_s", "backward_s")), ("recompute", ("recompute_s",)),
              ("tp_comm", ("tp_comm_s",)), ("cp_comm", ("cp_comm_s",)), ("ep_comm", ("ep_comm_s",)),
              ("pp_p2p", ("pp_p2p_s",)), ("bubble", ("pipeline_bubble_s",)),
              ("dp_comm", ("dp_comm_s",)), ("zero_comm", ("zero_comm_s",)), ("optimizer", ("optimizer_s",)))


def _stacked(segments, scale, label, limit=None):
    x = 0.0
    rects = []
    for part, value in segments:
        width = WIDTH * value / scale if scale > 0 else 0.0
        if width > 0.0:
            rects.append(f'<rect class="bar-{part}" x="{x:.1f}" y="0" width="{width:.1f}" height="{HEIGHT:.0f}"/>')
        x += width
    if limit is not None and scale > 0:
        at = WIDTH * limit / scale
        rects.append(f'<line class="bar-limit" x1="{at:.1f}" y1="-3" x2="{at:.1f}" y2="{HEIGHT + 3:.0f}"/>')
    return (f'<svg class="bar-svg" viewBox="0 -4 {WIDTH:.0f} {HEIGHT + 8:.0f}" preserveAspectRatio="none" '
            f'role="img" aria-label="{escape(label)}">{"".join(rects)}</svg>')


def _legend(items):
    entries = "".join(
        f'<li><span class="bar-key bar-{part}" aria-hidden="true"></span>{escape(name)} <strong>{escape(text)}</strong></li>'
        for part, name, text in items
    )
    return f'<ul class="bar-legend">{entries}</ul>'


def memory_parts(memory, texts, units):
    """(summary, [(part, name, amount)]) of ``memory`` (Report.to_dict()["memory"]) in words."""
    summary = texts["memory_summary"].format(total=format_quantity(memory["total_bytes"], "bytes", units),
                                             device=format_quantity(memory["device_bytes"], "bytes", units))
    return summary, [(part, texts["memory_parts"][part], format_quantity(value, "bytes", units))
                     for part, value in memory_segments(memory) if part != "loss" or value > 0.0]


def memory_segments(memory):
    """(part, bytes) of a memory bar (a Report.to_dict()["memory"] or a curve point): the loss's buffers apart from the other activations they are part of."""
    loss = memory["loss_bytes"]
    values = {"weights": memory["weights_bytes"], "gradients": memory["gradients_bytes"],
              "optimizer": memory["optimizer_bytes"], "activations": memory["activations_bytes"] - loss, "loss": loss}
    return [(part, values[part]) for part in MEMORY_PARTS]


def time_parts(time, texts, units, recompute):
    """(summary, [(part, name, amount)]) of ``time`` (Report.to_dict()["time"]), parts that take time.

    ``recompute``: the plan's recompute mode. With none, the recompute part is
    only FlashAttention's backward replaying the attention core (timing.py), and
    is named so, not "recompute" beside a plan that says it recomputes nothing.
    """
    summary = texts["time_summary"].format(step=format_quantity(time["step_s"], "duration", units))
    names = texts["time_parts"]
    return summary, [(part, names["attention_replay" if part == "recompute" and recompute == "none" else part],
                      format_quantity(value, "duration", units))
                     for part, value in _time_segments(time) if value > 0.0]


def _time_segments(time):
    return [(part, sum(time[key] for key in keys)) for part, keys in TIME_PARTS]


def memory_bar(memory, texts, units):
    """``memory``: Report.to_dict()["memory"]; ``texts``: catalog ``lab.bars``."""
    segments = memory_segments(memory)
    total, device = memory["total_bytes"], memory["device_bytes"]
    summary, legend = memory_parts(memory, texts, units)
    svg = _stacked(segments, max(total, device), summary, limit=device)
    return f'{svg}<p class="bar-summary">{escape(summary)}</p>{_legend(legend)}'


def time_bar(time, texts, units, recompute):
    """``time``: Report.to_dict()["time"]; ``recompute``: the plan's recompute mode."""
    summary, legend = time_parts(time, texts, units, recompute)
    svg = _stacked(_time_segments(time), time["step_s"], summary)
    return f'{svg}<p class="bar-summary">{escape(summary)}</p>{_legend(legend)}'
