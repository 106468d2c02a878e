"""Static SVG charts drawn at build time: a line chart and a stacked bar chart.

Pure Python, no random ids, stable float formatting: the same data gives the
same bytes. Colours come from CSS classes (``tc-s0`` … ``tc-s5``, see
``CHART_STYLE``) and text uses ``currentColor``, so the charts follow the
light and dark themes. Every chart has ``<title>`` and ``<desc>`` (named by
``aria-labelledby``), axis labels with units, and a legend in the figure.

    svg = line_chart("memory", title, desc, x_label, y_label,
                     [Series("A100", [(1, 2.0), (2, 3.5)])], x_log=True)
"""
import math
from dataclasses import dataclass, field
from html import escape

from lab_view.quantities import format_scaled

WIDTH, HEIGHT = 640, 340
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 18, 56
PALETTE_SIZE = 6

# Inline once per page (the chapter template includes it). Colour-blind-safe
# hues (Okabe-Ito) readable on both the light and the slate theme.
CHART_STYLE = """
.tut-chart { margin: 1.2em 0; }
.tut-chart svg { width: 100%; height: auto; max-width: 46rem; display: block; color: var(--md-default-fg-color); }
.tut-chart text { fill: currentColor; font-size: 12px; font-family: inherit; }
.tut-chart .tc-axis { stroke: currentColor; stroke-width: 1; fill: none; }
.tut-chart .tc-grid { stroke: currentColor; stroke-opacity: 0.15; stroke-width: 1; fill: none; }
.tut-chart .tc-ref { stroke: currentColor; stroke-dasharray: 6 4; stroke-width: 1.5; fill: none; }
.tut-chart .tc-line { fill: none; stroke-width: 2.5; }
.tut-chart .tc-dash { stroke-dasharray: 7 5; }
.tut-chart .tc-s0 { stroke: #0072b2; fill: #0072b2; }
.tut-chart .tc-s1 { stroke: #e69f00; fill: #e69f00; }
.tut-chart .tc-s2 { stroke: #009e73; fill: #009e73; }
.tut-chart .tc-s3 { stroke: #cc79a7; fill: #cc79a7; }
.tut-chart .tc-s4 { stroke: #56b4e9; fill: #56b4e9; }
.tut-chart .tc-s5 { stroke: #d55e00; fill: #d55e00; }
.tut-chart .tc-line.tc-s0, .tut-chart .tc-line.tc-s1, .tut-chart .tc-line.tc-s2,
.tut-chart .tc-line.tc-s3, .tut-chart .tc-line.tc-s4, .tut-chart .tc-line.tc-s5 { fill: none; }
.tut-chart figcaption { font-size: 0.7rem; color: var(--md-default-fg-color--light); }
.md-typeset .tut-legend { list-style: none; margin: 0.3em 0 0.4em; padding: 0; display: flex; flex-wrap: wrap; gap: 0.3em 1.6em; font-size: 0.7rem; }
.md-typeset .tut-legend li { margin: 0; padding: 0; display: inline-flex; align-items: center; gap: 0.5em; color: var(--md-default-fg-color); }
.tut-legend svg { width: 1.6em; height: 0.8em; display: inline; }
"""


@dataclass
class Series:
    label: str
    points: list            # [(x, y)] for a line chart
    dashed: bool = False


@dataclass
class Segment:
    label: str
    values: list            # one value per bar


@dataclass
class Reference:
    """A horizontal reference line (e.g. device memory) with its label."""
    value: float
    label: str


@dataclass
class _Axis:
    low: float
    high: float
    log: bool
    start: float
    end: float
    ticks: list = field(default_factory=list)

    def __call__(self, value):
        if self.log:
            lo, hi, v = math.log10(self.low), math.log10(self.high), math.log10(value)
        else:
            lo, hi, v = self.low, self.high, value
        return self.start + (v - lo) / (hi - lo) * (self.end - self.start)


def _num(value):
    """Stable coordinate text: one decimal, no negative zero."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _nice_step(span, target=5):
    raw = span / target
    power = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= mult * power:
            return mult * power
    return 10 * power


def _linear_axis(low, high, start, end):
    if high <= low:
        high = low + 1.0
    step = _nice_step(high - low)
    low = math.floor(low / step + 1e-9) * step
    high = math.ceil(high / step - 1e-9) * step
    count = int(round((high - low) / step))
    ticks = [low + i * step for i in range(count + 1)]
    return _Axis(low, high, False, start, end, ticks)


def _nice_log_bounds(low, high):
    """Widen [low, high] to the nearest 1-2-5 values so the axis ends on ticks."""
    def down(v):
        k = math.floor(math.log10(v) + 1e-9)
        return max(m * 10.0 ** k for m in (1, 2, 5) if m * 10.0 ** k <= v * (1 + 1e-9))

    def up(v):
        k = math.floor(math.log10(v) + 1e-9)
        return min(m * 10.0 ** k for m in (1, 2, 5, 10) if m * 10.0 ** k >= v * (1 - 1e-9))

    return down(low), up(high)


def _log_axis(low, high, start, end):
    low, high = _nice_log_bounds(low, high)
    lo = math.floor(math.log10(low) + 1e-9)
    hi = math.ceil(math.log10(high) - 1e-9)
    if hi == lo:
        hi += 1
    ticks = []
    for mults in ((1, 2, 5), (1, 3), (1,)):
        ticks = [m * 10.0 ** k for k in range(lo, hi + 1) for m in mults
                 if low * 0.999 <= m * 10.0 ** k <= high * 1.001]
        if len(ticks) <= 8:
            break
    if len(ticks) > 8:
        every = -(-(hi - lo) // 6)
        ticks = [10.0 ** k for k in range(lo, hi + 1, every) if low * 0.999 <= 10.0 ** k <= high * 1.001]
    return _Axis(low, high, True, start, end, ticks)


def tick_text(value):
    """Tick labels: 1.5, 40, 2K, 1M (language-neutral)."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return format_scaled(value, 3)
    return f"{value:.3g}"


def _frame(chart_id, title, desc, body):
    t_id, d_id = f"{chart_id}-title", f"{chart_id}-desc"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
            f'aria-labelledby="{t_id} {d_id}" id="{chart_id}">'
            f'<title id="{t_id}">{escape(title)}</title><desc id="{d_id}">{escape(desc)}</desc>'
            f'{body}</svg>')


def _axes(x, y, x_label, y_label, x_ticks_text=None, y_fmt=tick_text):
    parts = []
    bottom, top = y.start, y.end
    for tick in y.ticks:
        py = _num(y(tick))
        parts.append(f'<line class="tc-grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{py}" y2="{py}"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{py}" text-anchor="end" dominant-baseline="middle">{escape(y_fmt(tick))}</text>')
    if x_ticks_text is None:
        for tick in x.ticks:
            px = _num(x(tick))
            parts.append(f'<line class="tc-axis" x1="{px}" x2="{px}" y1="{_num(bottom)}" y2="{_num(bottom + 5)}"/>')
            parts.append(f'<text x="{px}" y="{_num(bottom + 18)}" text-anchor="middle">{escape(tick_text(tick))}</text>')
    else:
        for px, text in x_ticks_text:
            parts.append(f'<text x="{_num(px)}" y="{_num(bottom + 18)}" text-anchor="middle">{escape(text)}</text>')
    parts.append(f'<path class="tc-axis" d="M{LEFT} {_num(top)} V{_num(bottom)} H{WIDTH - RIGHT}"/>')
    mid_x = (LEFT + WIDTH - RIGHT) / 2
    parts.append(f'<text x="{_num(mid_x)}" y="{HEIGHT - 8}" text-anchor="middle" font-weight="600">{escape(x_label)}</text>')
    mid_y = (top + bottom) / 2
    parts.append(f'<text transform="translate(16 {_num(mid_y)}) rotate(-90)" text-anchor="middle" '
                 f'font-weight="600">{escape(y_label)}</text>')
    return parts


def _reference(y, ref):
    py = _num(y(ref.value))
    return [f'<line class="tc-ref" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{py}" y2="{py}"/>',
            f'<text x="{WIDTH - RIGHT - 4}" y="{_num(y(ref.value) - 6)}" text-anchor="end">{escape(ref.label)}</text>']


def _legend(items):
    rows = []
    for index, (label, dashed, kind) in enumerate(items):
        cls = f"tc-s{index % PALETTE_SIZE}"
        if kind == "line":
            mark = (f'<line class="tc-line {cls}{" tc-dash" if dashed else ""}" x1="0" y1="5" x2="24" y2="5"/>')
        else:
            mark = f'<rect class="{cls}" x="4" y="0" width="16" height="10"/>'
        rows.append(f'<li><svg viewBox="0 0 24 10" aria-hidden="true">{mark}</svg>{escape(label)}</li>')
    return '<ul class="tut-legend">' + "".join(rows) + "</ul>"


def figure(svg, legend_items, caption):
    cap = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return f'<figure class="tut-chart">{svg}{_legend(legend_items)}{cap}</figure>'


def line_chart(chart_id, title, desc, x_label, y_label, series, x_log=False, y_log=False,
               y_min=None, y_max=None, reference=None, y_fmt=tick_text, caption=""):
    """A line chart of ``series`` (list of Series) in a <figure> with its legend."""
    xs = [x for s in series for x, _ in s.points]
    ys = [y for s in series for _, y in s.points]
    if reference is not None:
        ys.append(reference.value)
    x_axis = (_log_axis if x_log else _linear_axis)(min(xs), max(xs), LEFT, WIDTH - RIGHT)
    low = min(ys) if y_min is None else y_min
    high = max(ys) if y_max is None else y_max
    y_axis = (_log_axis if y_log else _linear_axis)(low, high, HEIGHT - BOTTOM, TOP)
    parts = _axes(x_axis, y_axis, x_label, y_label, y_fmt=y_fmt)
    if reference is not None:
        parts += _reference(y_axis, reference)
    for index, s in enumerate(series):
        cls = f"tc-line tc-s{index % PALETTE_SIZE}" + (" tc-dash" if s.dashed else "")
        d = " ".join(f"{'M' if i == 0 else 'L'}{_num(x_axis(x))} {_num(y_axis(y))}" for i, (x, y) in enumerate(s.points))
        parts.append(f'<path class="{cls}" d="{d}"/>')
        for x, y in s.points:
            parts.append(f'<circle class="tc-s{index % PALETTE_SIZE}" cx="{_num(x_axis(x))}" cy="{_num(y_axis(y))}" r="2.5"/>')
    svg = _frame(chart_id, title, desc, "".join(parts))
    return figure(svg, [(s.label, s.dashed, "line") for s in series], caption)


def stacked_bar_chart(chart_id, title, desc, x_label, y_label, categories, segments,
                      reference=None, y_fmt=tick_text, caption=""):
    """Bars (one per category) stacked from ``segments`` (list of Segment)."""
    totals = [sum(seg.values[i] for seg in segments) for i in range(len(categories))]
    high = max(totals + ([reference.value] if reference else []))
    y_axis = _linear_axis(0.0, high, HEIGHT - BOTTOM, TOP)
    slot = (WIDTH - RIGHT - LEFT) / len(categories)
    bar = min(56.0, slot * 0.6)
    centres = [LEFT + slot * (i + 0.5) for i in range(len(categories))]
    x_axis = _Axis(0, 1, False, LEFT, WIDTH - RIGHT)
    parts = _axes(x_axis, y_axis, x_label, y_label, x_ticks_text=list(zip(centres, categories)), y_fmt=y_fmt)
    for i, centre in enumerate(centres):
        base = 0.0
        for index, seg in enumerate(segments):
            value = seg.values[i]
            if value <= 0:
                continue
            y_top, y_bottom = y_axis(base + value), y_axis(base)
            parts.append(f'<rect class="tc-s{index % PALETTE_SIZE}" x="{_num(centre - bar / 2)}" y="{_num(y_top)}" '
                         f'width="{_num(bar)}" height="{_num(y_bottom - y_top)}"><title>{escape(seg.label)}: '
                         f'{escape(y_fmt(value))}</title></rect>')
            base += value
        parts.append(f'<text x="{_num(centre)}" y="{_num(y_axis(totals[i]) - 5)}" text-anchor="middle">'
                     f'{escape(y_fmt(totals[i]))}</text>')
    if reference is not None:
        parts += _reference(y_axis, reference)
    svg = _frame(chart_id, title, desc, "".join(parts))
    return figure(svg, [(seg.label, False, "bar") for seg in segments], caption)
