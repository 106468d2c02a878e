"""Tutorial pages: one slot per chapter (``tutorial:<id>``) and the chapter
list (``tutorial:index``).

A chapter's body is its content/tutorial/chapters/<slug>.yaml text in the
page's language with every {placeholder} filled from tutorial_values (lab_core
at build time) — a ``case`` value by the words its number chose, a
``{ref_<id>}`` by a link to that chapter —, its charts (labsite.charts) and
figures (labsite.figures), its exercises (each a question, a link that opens
the lab in the exercise's state, and the computed answer folded in
``<details>``) and its sources. The section headings are added to the page's
table of contents.
"""
import hashlib
import html
import re
from functools import cache

import markdown

from lab_core.hardware import GPU_PRESETS
from lab_view import format_quantity
from lab_view.quantities import _significant as significant

from .. import charts
from ..bilingual import load_yaml
from ..errors import BuildError
from ..exercises import parse_lab
from ..figures import figure_params, figure_style, render_figure
from ..folding import cjk_tidy
from ..labquery import lab_url
from ..slots import slot_renderer
from ..tutorial import REF_PREFIX, chapter_files, load_chapter
from ..tutorial_values import chapter_data


@cache
def _book_order():
    """[{id, slug}] of the chapters in reading order (parsed once per process)."""
    return tuple({"id": load_yaml(path)["id"], "slug": path.stem} for path in chapter_files())


def load_chapters():
    """Chapters in reading order, validated against the values they use."""
    firsts = [(path, load_chapter(path)) for path in chapter_files()]
    ids = [first["id"] for _, first in firsts]
    if len(set(ids)) != len(ids):
        raise BuildError(firsts[0][0].parent, "two chapter files share an id")
    return [load_chapter(path, chapter_data(first["id"]).values, ids) for path, first in firsts]


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


def formatted(values, units):
    return {name: format_value(value, kind, units) for name, (value, kind) in values.items() if kind != "case"}


def chapter_values(chapter, values, lang, units, refs=None):
    """Every placeholder's text in ``lang``: numbers formatted, cases chosen, chapter links."""
    texts = formatted(values, units)
    texts.update(refs or {})
    for name, (value, kind) in values.items():
        if kind == "case":
            texts[name] = chapter["cases"][name][value.key][lang].format(**texts)
    return texts


_INPUT_KINDS = {"params": "params", "global_batch_tokens": "tokens", "inter_node_gbps": "gbps",
                "checkpoint_interval_min": "minutes", "training_tokens": "scaled"}


def input_text(name, value, units, terms):
    """A workload input as an exercise's lab-state summary shows it (``terms``: the catalog's
    ``lab.terms``, for on/off inputs)."""
    if name == "gpu":
        return GPU_PRESETS[value].name
    if isinstance(value, bool):
        return terms["yes" if value else "no"]
    if isinstance(value, str):
        return value
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


def _figure(chapter, section, data, lang, catalog, values):
    spec = section["figure"]
    path = f"content/tutorial/chapters/{chapter['slug']}.yaml"
    where = f"section {section['id']}"
    params = figure_params(path, where, spec, data.figures)
    caption = _inline(spec["caption"][lang].format(**values))
    alt = _plain(_inline(spec["alt"][lang].format(**values)))
    try:
        return render_figure(spec, params, f"figure-{section['id']}", catalog, caption, alt)
    except ValueError as err:
        raise BuildError(path, f"{where} figure: {err}") from None


def _exercise(chapter, exercise, lang, values, catalog, lab_link):
    path = f"content/tutorial/chapters/{chapter['slug']}.yaml"
    inputs, _ = parse_lab(path, f"exercise {exercise['id']}", exercise["lab"])
    return {
        "id": exercise["id"],
        "question": _md(exercise["question"][lang].format(**values)),
        "answer": _md(exercise["answer"][lang].format(**values)),
        "url": lab_url(lab_link, inputs),
        "state": [(catalog["input_labels"].get(name, name),
                   input_text(name, value, catalog["units"], catalog["lab"]["terms"])) for name, value in inputs.items()],
    }


def chapter_context(chapter, lang, catalog, refs=None, lab_link="../../lab/"):
    """Everything the chapter template needs, in one language (no HTML context).
    ``refs``: ``{ref_<id>: Markdown link}``; ``lab_link``: the lab page's URL."""
    units = catalog["units"]
    data = chapter_data(chapter["id"])
    if lang == "zh":
        chapter = cjk_tidy(chapter)
        catalog = dict(catalog, tutorial=cjk_tidy(catalog["tutorial"]))
    if refs is None:
        refs = chapter_refs(_book_order(), catalog, lambda path: "../../" + path)
    values = chapter_values(chapter, data.values, lang, units, refs)
    chart_specs = {spec["id"]: spec for spec in data.charts}
    sections = []
    for section in chapter["sections"]:
        body = _md(section["body"][lang].format(**values))
        assumption = _md(section["assumption"][lang].format(**values)) if "assumption" in section else ""
        chart = render_chart(chart_specs[section["chart"]], catalog, units) if section.get("chart") else ""
        figure = _figure(chapter, section, data, lang, catalog, values) if section.get("figure") else ""
        sections.append({"id": section["id"], "heading": _inline(section["heading"][lang].format(**values)),
                         "body": body, "assumption": assumption, "chart": chart, "figure": figure})
    exercises = [_exercise(chapter, exercise, lang, values, catalog, lab_link)
                 for exercise in chapter.get("exercises") or []]
    # A source's locator may explain itself per language: where: {en: "§3.1 (…)", zh: "§3.1（…）"}.
    sources = [dict(s, where=s["where"][lang] if isinstance(s["where"], dict) else s["where"]) for s in chapter["sources"]]
    return {"sections": sections, "exercises": exercises, "sources": sources, "workload": data.workload}


def chapter_refs(chapters, catalog, link):
    """``{ref_<id>: "[chapter N](url)"}`` for every chapter in ``catalog``'s language;
    ``link(path)`` is a site path's URL from the page (``tutorial/<slug>/``)."""
    pattern = catalog["tutorial"]["chapter_ref"]
    refs = {}
    for number, chapter in enumerate(chapters, start=1):
        refs[REF_PREFIX + chapter["id"]] = f"[{pattern.format(n=number)}]({link('tutorial/' + chapter['slug'] + '/')})"
    return refs


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
        refs = chapter_refs(ctx.build.chapters, ctx.catalog, ctx.link)
        context = chapter_context(chapter, ctx.lang, ctx.catalog, refs, ctx.link("lab/"))
        t = ctx.catalog["tutorial"]
        ctx.add_to_toc([(s["id"], _plain(s["heading"])) for s in context["sections"]]
                       + ([("exercises", t["exercises_heading"])] if context["exercises"] else [])
                       + [("sources", t["sources_heading"])])
        return ctx.env.get_template("tutorial_chapter.html").render(
            t=ctx.catalog, chapter=chapter, sections=context["sections"], exercises=context["exercises"],
            sources=context["sources"], chart_css=chart_stylesheet(ctx), lang=ctx.lang)
    return render


def chart_stylesheet(ctx):
    """The charts' and figures' CSS (labsite.charts.CHART_STYLE, labsite.figures) as a
    stylesheet of the site, linked rather than inlined: the Content-Security-Policy
    allows no inline style."""
    data = (charts.CHART_STYLE + figure_style()).encode("utf-8")
    name = f"assets/css/charts.{hashlib.sha256(data).hexdigest()[:10]}.css"
    ctx.build.generated[name] = data
    return ctx.root + name


def _register_all():
    from ..tutorial import load_chapter as _load
    for path in chapter_files():
        _register(_load(path)["id"])


_register_all()


@slot_renderer("tutorial:glossary")
def render_glossary(ctx):
    """The glossary (content/tutorial/glossary.yaml): the words the Chinese chapters use."""
    from ..bilingual import load_yaml, require_languages
    from ..tutorial import TUTORIAL_DIR
    path = TUTORIAL_DIR / "glossary.yaml"
    terms = []
    for term in load_yaml(path)["terms"]:
        note = require_languages(term.get("note"), path, f"{term.get('en')}: note")
        terms.append({"en": term["en"], "zh": term["zh"], "avoid": term.get("avoid") or [], "note": note[ctx.lang]})
    return ctx.env.get_template("tutorial_glossary.html").render(t=ctx.catalog, terms=terms)
