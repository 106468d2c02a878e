"""Figure kind ``checkpoint_timeline``: what a failure costs between two checkpoints.

A run alternates compute intervals ``τ`` and checkpoints ``δ``; a failure
strikes part-way through an interval, the work since the last checkpoint is
lost, the job restarts (``R``) and redoes that work. The lengths are drawn to
scale from the chapter's lab_core numbers (failure figures of lab_core.failures:
Young 1974, Daly 2006), except that a checkpoint or restart too short to see
is drawn at a minimum width and labelled with its real length.
"""
from . import Drawing, figure_kind
from .svg import legend, line, rect, text

WIDTH, LEFT, RIGHT = 680.0, 8.0, 8.0
BAR_Y, BAR_H = 40.0, 26.0
MIN_W = 8.0
CSS = """
.tut-figure-svg .ckpt-lost { fill: #d55e00; fill-opacity: 0.35; stroke: #d55e00; stroke-width: 1; stroke-dasharray: 3 2; }
.tut-figure-svg .ckpt-fail { stroke: #d55e00; stroke-width: 2.5; fill: none; }
"""


@figure_kind("checkpoint_timeline", params={"interval_s": 1800.0, "write_s": 60.0, "restart_s": 600.0,
                                            "failure_at": 0.6}, css=CSS)
def draw_checkpoint_timeline(params, t):
    tau, delta, restart, at = params["interval_s"], params["write_s"], params["restart_s"], params["failure_at"]
    if min(tau, delta) <= 0.0 or restart < 0.0 or not 0.0 < at < 1.0:
        raise ValueError(f"checkpoint_timeline figure: positive interval and write, failure_at in (0, 1) (got {params})")
    lost = at * tau
    # Two full periods, the failed part of the third, the restart, the redone work and one more interval.
    pieces = [("work", tau), ("ckpt", delta), ("work", tau), ("ckpt", delta), ("lost", lost),
              ("restart", restart), ("redo", lost), ("work", tau - lost)]
    total = sum(seconds for _, seconds in pieces)
    scale = (WIDTH - LEFT - RIGHT - MIN_W * 4) / total
    classes = {"work": "tc-s0", "ckpt": "tc-s1", "lost": "ckpt-lost", "restart": "tc-s4", "redo": "tc-s2"}
    parts = [text(LEFT, 14.0, t("heading", interval=t.q(tau, "duration"), write=t.q(delta, "duration"),
                                restart=t.q(restart, "duration")), "fig-text fig-small")]
    x = LEFT
    failure_x = None
    for kind, seconds in pieces:
        width = max(seconds * scale, MIN_W) if seconds > 0.0 else 0.0
        if width == 0.0:
            continue
        parts.append(rect(x, BAR_Y, width, BAR_H, classes[kind], 1.5, f"{t(kind)}: {t.q(seconds, 'duration')}"))
        if kind == "lost":
            failure_x = x + width
        x += width
    # The failure: a mark where it strikes, and what it costs below the bar.
    parts.append(line(failure_x, BAR_Y - 10.0, failure_x, BAR_Y + BAR_H + 10.0, "ckpt-fail"))
    parts.append(text(failure_x, BAR_Y - 14.0, t("failure"), "fig-text fig-small", "middle"))
    lost_start = failure_x - max(lost * scale, MIN_W)
    cost_end = failure_x + max(restart * scale, MIN_W) + max(lost * scale, MIN_W)
    y = BAR_Y + BAR_H + 22.0
    parts.append(line(lost_start, y - 6.0, cost_end, y - 6.0, "fig-arrow"))
    parts.append(text((lost_start + cost_end) / 2, y + 8.0, t("cost", lost=t.q(lost, "duration"),
                                                              restart=t.q(restart, "duration")),
                      "fig-text fig-small", "middle"))
    y += 26.0
    keys = [("tc-s0", "work"), ("tc-s1", "ckpt"), ("ckpt-lost", "lost"), ("tc-s4", "restart"), ("tc-s2", "redo")]
    rows, bottom = legend(LEFT, y, [(cls, t(key)) for cls, key in keys])
    return Drawing(WIDTH, bottom + 4.0, parts + rows)
