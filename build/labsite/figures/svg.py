"""Small SVG builders for the figures: stable number text, escaped labels, classes only."""
from html import escape


def num(value):
    """Coordinate text with one decimal and no negative zero (same data, same bytes)."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def rect(x, y, w, h, cls, rx=2.0, title=None):
    inner = f"<title>{escape(title)}</title>" if title else ""
    tail = f">{inner}</rect>" if inner else "/>"
    return f'<rect class="{cls}" x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" rx="{num(rx)}"{tail}'


def text(x, y, label, cls="fig-text", anchor="start"):
    return f'<text class="{cls}" x="{num(x)}" y="{num(y)}" text-anchor="{anchor}">{escape(label)}</text>'


def line(x1, y1, x2, y2, cls="fig-line"):
    return f'<line class="{cls}" x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}"/>'


def arrow(x1, y1, x2, y2, cls="fig-arrow"):
    """A line with a small head at (x2, y2)."""
    dx, dy = x2 - x1, y2 - y1
    length = (dx * dx + dy * dy) ** 0.5 or 1.0
    ux, uy = dx / length, dy / length
    size = 5.0
    left = (x2 - size * ux + size * 0.6 * uy, y2 - size * uy - size * 0.6 * ux)
    right = (x2 - size * ux - size * 0.6 * uy, y2 - size * uy + size * 0.6 * ux)
    return (f'<path class="{cls}" d="M{num(x1)} {num(y1)} L{num(x2)} {num(y2)} '
            f'M{num(left[0])} {num(left[1])} L{num(x2)} {num(y2)} L{num(right[0])} {num(right[1])}"/>')


# Shared by every kind: text follows the theme (currentColor), outlines are faint.
BASE_CSS = """
.tut-figure-svg { width: 100%; height: auto; max-width: 46rem; display: block; color: var(--md-default-fg-color); }
.tut-figure-svg text { fill: currentColor; font-size: 12px; font-family: inherit; }
.tut-figure-svg .fig-small { font-size: 10.5px; }
.tut-figure-svg .fig-head { font-weight: 700; }
.tut-figure-svg .fig-muted { fill-opacity: 0.72; }
.tut-figure-svg .fig-line { stroke: currentColor; stroke-opacity: 0.35; stroke-width: 1; fill: none; }
.tut-figure-svg .fig-arrow { stroke: currentColor; stroke-width: 1.4; fill: none; }
.tut-figure-svg .fig-box { fill: none; stroke: currentColor; stroke-opacity: 0.45; stroke-width: 1; }
.tut-figure-svg .fig-empty { fill: currentColor; fill-opacity: 0.08; stroke: currentColor; stroke-opacity: 0.25; }
.tut-figure-svg .fig-on-fill { fill: #111; }
.tut-figure-svg .fig-on-s0 { fill: #fff; }
.tut-figure-scroll { overflow-x: auto; }
@media (max-width: 600px) { .tut-figure-svg { min-width: 560px; } }
"""


def text_width(label, size=12.0):
    """About how wide ``label`` is drawn: CJK characters a full em, others about half."""
    wide = sum(1 for ch in label if ord(ch) >= 0x2e80)
    return size * (wide + 0.56 * (len(label) - wide))


LEGEND_ROW = 18.0


def legend(x, y, items, right=672.0, size=10.5):
    """Rows of keys from (x, y), wrapped before ``right``: ``items`` [(class of the swatch, label)].
    Returns (SVG parts, the y below the last row)."""
    parts, start = [], x
    for cls, label in items:
        width = 19.0 + text_width(label, size) + 18.0
        if x > start and x + width - 18.0 > right:
            x, y = start, y + LEGEND_ROW
        parts.append(rect(x, y, 14.0, 12.0, cls, 1.0))
        parts.append(text(x + 19.0, y + 10.5, label, "fig-text fig-small"))
        x += width
    return parts, y + LEGEND_ROW
