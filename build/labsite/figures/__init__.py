"""Figures of the tutorial: pictures drawn as SVG at build time from lab_core numbers.

A chapter section carries ``figure: {kind, params, caption {en, zh}, alt {en, zh}}``.
Each kind is a function registered with ``@figure_kind(name, params={...},
css=...)`` in a module of this package (modules are imported by discovery, so
adding a kind is one new module): it receives its params (the defaults
completed, numbers parsed) and a ``FigureText`` (its catalog texts in the
page's language, ``content/i18n/<lang>/figures.yaml`` under ``figures.<kind>``,
and the language's number formats) and returns a ``Drawing``. Its CSS classes
(no inline style: the site's Content-Security-Policy allows none) go into the
tutorial's stylesheet; colours follow the light and dark themes (text in
``currentColor``, fills from the chart palette ``tc-s0`` … ``tc-s5``).

``render_figure`` wraps a drawing in ``<figure>``: the SVG with ``role="img"``,
its ``<title>`` (the kind's title) and ``<desc>`` (the section's ``alt``,
named by ``aria-labelledby``), and the visible caption.
"""
import importlib
import pkgutil
from dataclasses import dataclass, field
from html import escape

from lab_view import QuantityError, format_quantity, parse_quantity

from ..errors import BuildError
from ..registry import registrar

FIGURE_KINDS = {}


@dataclass
class Drawing:
    """An SVG body (``parts``, joined) in a ``width`` × ``height`` viewBox."""
    width: float
    height: float
    parts: list = field(default_factory=list)


@dataclass(frozen=True)
class Kind:
    name: str
    draw: object
    params: dict
    css: str


def figure_kind(name, params=None, css=""):
    """Register ``draw(params, text) -> Drawing`` as figure kind ``name``;
    ``params``: every parameter with its default (its type is the one accepted)."""
    return registrar(FIGURE_KINDS, "figure kind",
                     lambda kind, draw: Kind(kind, draw, dict(params or {}), css))(name)


class FigureText:
    """A kind's texts in one language (``text("stage", n=1)``) and number formats (``text.q(value, "bytes")``)."""

    def __init__(self, catalog, kind):
        self.texts = catalog["figures"][kind]
        self.units = catalog["units"]

    def __call__(self, key, **values):
        return self.texts[key].format(**values)

    def q(self, value, kind):
        return format_quantity(value, kind, self.units)


def _param(path, where, kind, name, raw):
    default = kind.params[name]
    if isinstance(default, bool):
        if not isinstance(raw, bool):
            raise BuildError(path, f"{where} figure.params.{name}: expected true or false, not {raw!r}")
        return raw
    if isinstance(default, (int, float)):
        try:
            value = parse_quantity(raw)
        except QuantityError:
            raise BuildError(path, f"{where} figure.params.{name}: {raw!r} is not a number") from None
        if isinstance(default, int) and value != int(value):
            raise BuildError(path, f"{where} figure.params.{name}: {raw!r} is not a whole number")
        return int(value) if isinstance(default, int) else float(value)
    if isinstance(default, (list, tuple)):
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            raise BuildError(path, f"{where} figure.params.{name}: expected a list of names")
        return tuple(raw)
    if not isinstance(raw, str):
        raise BuildError(path, f"{where} figure.params.{name}: expected text, not {raw!r}")
    return raw


def figure_params(path, where, spec, computed=None):
    """The kind's params: its defaults, then ``computed[spec.params.from]`` (from the
    chapter's values function), then what the chapter file writes."""
    kind = FIGURE_KINDS[spec["kind"]]
    given = dict(spec.get("params") or {})
    source = given.pop("from", None)
    merged = dict(kind.params)
    if source is not None:
        if computed is None or source not in computed:
            raise BuildError(path, f"{where} figure.params.from: the chapter's values function computes no "
                                   f"figure params named {source!r}")
        merged.update(computed[source])
    for name, raw in given.items():
        if name not in kind.params:
            raise BuildError(path, f"{where} figure.params.{name}: unknown for kind {kind.name} "
                                   f"(allowed: {', '.join(kind.params) or 'none'})")
        merged[name] = _param(path, where, kind, name, raw)
    return merged


def render_figure(spec, params, figure_id, catalog, caption_html, alt_text):
    """``<figure>`` with the SVG of ``spec`` drawn in the catalog's language."""
    kind = FIGURE_KINDS[spec["kind"]]
    text = FigureText(catalog, kind.name)
    drawing = kind.draw(params, text)
    title_id, desc_id = f"{figure_id}-title", f"{figure_id}-desc"
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" class="tut-figure-svg fig-{kind.name.replace("_", "-")}" '
           f'viewBox="0 0 {drawing.width:.0f} {drawing.height:.0f}" role="img" '
           f'aria-labelledby="{title_id} {desc_id}">'
           f'<title id="{title_id}">{escape(text("title"))}</title><desc id="{desc_id}">{escape(alt_text)}</desc>'
           + "".join(drawing.parts) + "</svg>")
    return (f'<figure class="tut-chart tut-figure" id="{figure_id}" data-figure-kind="{kind.name}">'
            f'<div class="tut-figure-scroll">{svg}</div><figcaption>{caption_html}</figcaption></figure>')


def figure_style():
    """The CSS every kind declared, in kind order (part of the tutorial's stylesheet)."""
    from .svg import BASE_CSS
    return BASE_CSS + "".join(FIGURE_KINDS[name].css for name in sorted(FIGURE_KINDS))


for _module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
    if _module != "svg":
        importlib.import_module(f"{__name__}.{_module}")
