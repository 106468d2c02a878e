"""Tutorial pages: one slot per chapter (``tutorial:<id>``) and the chapter
list (``tutorial:index``).

A chapter's body is its content/tutorial/NN-<slug>.yaml text in the page's
language with every {placeholder} filled from tutorial_values (lab_core at
build time), its charts drawn by charts.py, a "try it in the lab" link whose
query carries the chapter's workload, and its sources. The section headings
are added to the page's table of contents so the right-hand TOC lists them.
"""
import hashlib
import html
import re

import markdown

from lab_core.hardware import GPU_PRESETS
from lab_view import format_quantity
from lab_view.quantities import _significant as significant

from .. import charts
from ..labquery import lab_url
from ..slots import slot_renderer
from ..tutorial import chapter_files, cjk_tidy, load_chapter
from ..tutorial_values import chapter_data


def load_chapters():
    """Chapters in reading order, validated against the values they use."""
    loaded = []
    for path in chapter_files():
        first = load_chapter(path)
        loaded.append(load_chapter(path, chapter_data(first["id"]).values))
    return loaded


SMALL_SHARE_DIGITS = 2


def format_value(value, kind, units):
    if kind == "text":
        return str(value).lower() if isinstance(value, bool) else str(value)
    if kind == "scaled":
        return format_quantity(value, "params", units)
    if kind == "percent" and 0.0 < abs(value) < 1e-3:
        # The lab rounds shares below 0.1% to 0; prose keeps their digits (0.05%, not 0%).
        return units["percent"].format(n=significant(value * 100.0, SMALL_SHARE_DIGITS))
    return format_quantity(value, kind, units)


def formatted(values, units, cases=None, lang=None):
    """Every value as the page prints it; a case value becomes its chosen
    variant's text in ``lang`` (from the chapter's ``cases``), placeholders filled."""
    out = {name: format_value(value, kind, units) for name, (value, kind) in values.items() if kind != "case"}
    for name, (variant, kind) in values.items():
        if kind == "case":
            out[name] = cases[name][variant][lang].strip().format(**out)
    return out


_INPUT_KINDS = {"params": "params", "global_batch_tokens": "tokens", "inter_node_gbps": "gbps",
                "checkpoint_interval_min": "minutes", "training_tokens": "scaled"}


def input_text(name, value, units):
    """A workload input as the try-it summary shows it."""
    if name == "gpu":
        return GPU_PRESETS[value].name
    return format_value(value, _INPUT_KINDS.get(name, "count"), units)


def _md(text):
    return markdown.markdown(text, extensions=["attr_list", "tables"], output_format="html")


def _inline(text):
    """Markdown of one line (a heading) without the paragraph around it."""
    out = _md(text)
    return out[3:-4] if out.startswith("<p>") and out.endswith("</p>") else out


def _plain(heading_html):
    return html.unescape(re.sub(r"<[^>]+>", "", heading_html))


def _fill(template, values):
    return template.format(**values) if template else ""


def render_chart(spec, catalog, units):
    texts = catalog["tutorial"]["charts"][spec["id"]]
    common = formatted(spec.get("text_values", {}), units)
    title = _fill(texts["title"], common)
    desc = _fill(texts["desc"], common)
    caption = _fill(texts.get("caption", ""), common)
    chart_id = f"chart-{spec['id'].replace('_', '-')}"
    reference = None
    if spec.get("reference"):
        value, label_values = spec["reference"]
        reference = charts.Reference(value, _fill(texts["reference"], formatted(label_values, units)))
    if spec["type"] == "line":
        series = []
        for item in spec["series"]:
            label = _fill(texts["series"][item["key"]], formatted(item.get("label_values", {}), units))
            series.append(charts.Series(label, item["points"], item.get("dashed", False)))
        return charts.line_chart(chart_id, title, desc, texts["x"], texts["y"], series,
                                 x_log=spec.get("x_log", False), y_log=spec.get("y_log", False),
                                 y_min=spec.get("y_min"), y_max=spec.get("y_max"), reference=reference,
                                 caption=caption)
    categories = []
    for category in spec["categories"]:
        first, second = category
        if isinstance(second, str):
            categories.append(format_value(first, second, units))
        else:
            categories.append(_fill(texts["categories"][first], formatted(second, units)))
    segments = [charts.Segment(texts["segments"][key], values) for key, values in spec["segments"]]
    return charts.stacked_bar_chart(chart_id, title, desc, texts["x"], texts["y"], categories, segments,
                                    reference=reference, caption=caption)


def chapter_context(chapter, lang, catalog):
    """Everything the chapter template needs, in one language (no HTML context)."""
    units = catalog["units"]
    data = chapter_data(chapter["id"])
    chart_specs = {spec["id"]: spec for spec in data.charts}
    sections = []
    if lang == "zh":
        chapter = cjk_tidy(chapter)
        catalog = dict(catalog, tutorial=cjk_tidy(catalog["tutorial"]))
    values = formatted(data.values, units, chapter.get("cases"), lang)
    for section in chapter["sections"]:
        body = _md(section["body"][lang].format(**values))
        assumption = _md(section["assumption"][lang].format(**values)) if "assumption" in section else ""
        chart = render_chart(chart_specs[section["chart"]], catalog, units) if section.get("chart") else ""
        sections.append({"id": section["id"], "heading": _inline(section["heading"][lang].format(**values)),
                         "body": body, "assumption": assumption, "chart": chart})
    # A source's locator may explain itself per language: where: {en: "§3.1 (…)", zh: "§3.1（…）"}.
    sources = [dict(s, where=s["where"][lang] if isinstance(s["where"], dict) else s["where"]) for s in chapter["sources"]]
    return {"sections": sections, "sources": sources, "workload": data.workload}


@slot_renderer("tutorial:index")
def render_index(ctx):
    items = []
    for number, chapter in enumerate(ctx.build.chapters, start=1):
        texts = ctx.catalog["tutorial"]["chapters"][chapter["id"]]
        items.append({"number": number, "title": texts["title"], "summary": texts["summary"],
                      "url": ctx.link(f"tutorial/{chapter['slug']}/")})
    return ctx.env.get_template("tutorial_index.html").render(t=ctx.catalog, chapters=items,
                                                              validation_url=ctx.link("validation/"))


def _register(chapter_id):
    @slot_renderer(f"tutorial:{chapter_id}")
    def render(ctx):
        chapter = next(c for c in ctx.build.chapters if c["id"] == chapter_id)
        context = chapter_context(chapter, ctx.lang, ctx.catalog)
        ctx.add_to_toc([(s["id"], _plain(s["heading"])) for s in context["sections"]]
                       + [("try-it", ctx.catalog["tutorial"]["try_heading"]),
                          ("sources", ctx.catalog["tutorial"]["sources_heading"])])
        workload = [(ctx.catalog["input_labels"].get(name, name), input_text(name, value, ctx.catalog["units"]))
                    for name, value in context["workload"].items()]
        return ctx.env.get_template("tutorial_chapter.html").render(
            t=ctx.catalog, chapter=chapter, sections=context["sections"], sources=context["sources"],
            try_url=lab_url(ctx.link("lab/"), context["workload"]), workload=workload,
            chart_css=chart_stylesheet(ctx), lang=ctx.lang)
    return render


def chart_stylesheet(ctx):
    """The charts' CSS (labsite.charts.CHART_STYLE) as a stylesheet of the site,
    linked rather than inlined: the Content-Security-Policy allows no inline style."""
    data = charts.CHART_STYLE.encode("utf-8")
    name = f"assets/css/charts.{hashlib.sha256(data).hexdigest()[:10]}.css"
    ctx.build.generated[name] = data
    return ctx.root + name


def _register_all():
    from ..tutorial import load_chapter as _load
    for path in chapter_files():
        _register(_load(path)["id"])


_register_all()
