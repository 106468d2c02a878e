"""The tutorial: same chapters and sections in both languages, every number
from lab_core (no hand-typed numbers in the chapter texts), the book's order
in the nav, pictures with text alternatives, exercise links that open the lab
in their state, well-formed source links; the validation page shows exactly
the validation table's page rows (labsite.validation)."""
import re
from html import unescape
from urllib.parse import parse_qsl, urlsplit

import pytest
import yaml

import lab_core
from labsite import charts
from labsite.catalog import LANGUAGES
from labsite.exercises import parse_lab
from labsite.tutorial import SOURCE_URL, book_slugs, chapter_files, hand_typed_numbers, load_chapter
from labtest import language_dir, strings_in

ROOT_DOCS = "tutorial"
SECTION = re.compile(r'<section class="tut-section" data-section="([^"]+)"')
CHAPTER = re.compile(r'<div class="tutorial-chapter" data-chapter="([^"]+)"')


def chapter_slugs():
    return [path.stem for path in chapter_files()]


def chapter_html(site, lang, slug):
    return (language_dir(site, lang) / ROOT_DOCS / slug / "index.html").read_text(encoding="utf-8")


def test_every_chapter_has_twin_pages_in_the_books_order(repo_root):
    slugs = chapter_slugs()
    assert slugs == book_slugs() and len(slugs) >= 9
    for slug in slugs:
        assert (repo_root / "docs" / "tutorial" / f"{slug}.md").exists()
        assert (repo_root / "docs" / "tutorial" / f"{slug}.zh.md").exists()
    pages = {path.name.split(".")[0] for path in (repo_root / "docs" / "tutorial").glob("*.md")} - {"index"}
    assert pages == set(slugs), "a page without a chapter file, or the reverse"


def test_the_nav_lists_the_chapters_in_the_books_order(repo_root):
    nav = re.findall(r"^\s+- tutorial/([a-z0-9-]+)\.md$", (repo_root / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert nav == ["index"] + book_slugs()


def test_chapter_set_identical_in_both_languages(built_site):
    found = {}
    for lang in LANGUAGES:
        found[lang] = []
        for slug in chapter_slugs():
            match = CHAPTER.search(chapter_html(built_site, lang, slug))
            assert match, (lang, slug)
            found[lang].append(match.group(1))
        index = (language_dir(built_site, lang) / ROOT_DOCS / "index.html").read_text(encoding="utf-8")
        assert index.count("data-chapter-number=") == len(chapter_slugs())
    assert found["en"] == found["zh"]


@pytest.mark.parametrize("slug", chapter_slugs())
def test_same_sections_in_both_languages(built_site, slug):
    sections = {lang: SECTION.findall(chapter_html(built_site, lang, slug)) for lang in LANGUAGES}
    assert sections["en"] == sections["zh"]
    assert sections["en"][-1] == "sources" and len(sections["en"]) >= 5
    assert "exercises" not in sections["en"][:-2]
    assert len(set(sections["en"])) == len(sections["en"])


@pytest.mark.parametrize("path", chapter_files(), ids=lambda p: p.stem)
def test_no_hand_typed_numbers_in_chapter_texts(path):
    # load_chapter raises BuildError on a digit outside placeholders, formulas and citations.
    data = load_chapter(path)
    for section in data["sections"]:
        for field in ("heading", "body", "assumption"):
            for lang in LANGUAGES:
                text = section.get(field, {}).get(lang, "")
                assert not hand_typed_numbers(text), (section["id"], field, lang)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_hand_typed_numbers_in_tutorial_catalog(repo_root, lang):
    catalog = yaml.safe_load((repo_root / "content" / "i18n" / lang / "tutorial.yaml").read_text(encoding="utf-8"))
    bad = [(text, hand_typed_numbers(text)) for text in strings_in(catalog) if hand_typed_numbers(text)]
    assert not bad


def test_chapter_markdown_has_numbers_only_in_template_expressions(repo_root):
    for path in (repo_root / "docs" / "tutorial").glob("*.md"):
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", "", path.read_text(encoding="utf-8"))
        assert not re.search(r"[0-9]", text), path.name


@pytest.mark.parametrize("text,flagged", [
    ("A model with 175B parameters", True),
    ("uses 80 GB of memory", True),
    ("中断了 419 次", True),
    ("a {params} model", False),
    ("`s·b·h·(34 + 5·a·s/h)` bytes", False),
    ("see Table 2, Eq. 7, §3.1 and arXiv:2205.05198", False),
    ("表 5 与第 3 节", False),
    ("A100, H100, fp32, 16-bit, 1F1B, 3D, ZeRO-3, stage 1–3, GPT-3, Llama 3", False),
    ("Young (1974) and Daly (2006)", False),
    ("the 2021 stack of the 2021–2023 papers, 2021 年", False),
    ("sequences of 2048 tokens", True),
    ("GPU 0 sends to rank 3, micro-batch 12", False),
])
def test_number_checker(text, flagged):
    assert bool(hand_typed_numbers(text)) is flagged


def _query_inputs(href):
    url = urlsplit(unescape(href))
    assert url.path.endswith("lab/")
    data = {}
    for name, value in parse_qsl(url.query, strict_parsing=True):
        spec = lab_core.SPEC_BY_NAME[name]
        if spec.kind == "bool":
            data[name] = value == "true"
        elif spec.kind == "choice" and isinstance(spec.default, str):
            data[name] = value
        else:
            number = float(value)
            data[name] = int(number) if number == int(number) else number
    return data


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("slug", chapter_slugs())
def test_pictures_have_text_alternatives_and_exercises_open_the_lab_in_their_state(built_site, lang, slug):
    html = chapter_html(built_site, lang, slug)
    svgs = re.findall(r"<svg xmlns=[^>]*role=\"img\"[^>]*>.*?</svg>", html, re.S)
    assert svgs and all("<title" in svg and "<desc" in svg for svg in svgs)
    assert not re.search(r"\b(nan|inf)\b", " ".join(svgs))
    for figure in re.findall(r'<figure class="tut-chart tut-figure".*?</figure>', html, re.S):
        assert re.search(r"<figcaption>.+</figcaption>", figure, re.S)
    path = next(p for p in chapter_files() if p.stem == slug)
    chapter = load_chapter(path)
    links = re.findall(r'<li class="tut-exercise" id="exercise-([^"]+)".*?'
                       r'<a class="md-button tut-exercise-link" href="([^"]+)"', html, re.S)
    assert [eid for eid, _ in links] == [e["id"] for e in chapter.get("exercises") or []]
    for (eid, href), exercise in zip(links, chapter.get("exercises") or []):
        inputs, _ = parse_lab(path, eid, exercise["lab"])
        assert _query_inputs(href) == inputs
        lab_core.Workload.from_dict(_query_inputs(href))
    assert html.count('<details class="tut-answer">') == len(links)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("slug", chapter_slugs())
def test_source_links_are_well_formed(built_site, lang, slug):
    html = chapter_html(built_site, lang, slug)
    sources = re.search(r'<ol class="tut-sources">(.*?)</ol>', html, re.S).group(1)
    links = re.findall(r'<a href="([^"]+)"', sources)
    assert links
    for link in links:
        assert SOURCE_URL.match(unescape(link)), link


def test_every_source_in_the_chapter_files_is_well_formed():
    for path in chapter_files():
        for source in yaml.safe_load(path.read_text(encoding="utf-8"))["sources"]:
            assert SOURCE_URL.match(source["url"]), (path.name, source["url"])
            assert re.match(r"^(arXiv:\d{4}\.\d{4,5}|doi:10\.\S+)$", source["id"]), source["id"]


def test_charts_are_deterministic():
    from labsite.pages.tutorial import render_chart
    from labsite.catalog import load_catalogs
    from labsite.tutorial_values import CHAPTERS, chapter_data

    catalogs = load_catalogs()
    for chapter_id in CHAPTERS:
        for spec in chapter_data(chapter_id).charts:
            for lang in LANGUAGES:
                first = render_chart(spec, catalogs[lang], catalogs[lang]["units"])
                assert first == render_chart(spec, catalogs[lang], catalogs[lang]["units"])
                assert 'id="chart-' in first


def test_line_chart_has_axes_labels_and_legend():
    svg = charts.line_chart("c", "T", "D", "X (s)", "Y (GB)", [charts.Series("a", [(1, 1.0), (10, 2.0)])], x_log=True)
    assert "X (s)" in svg and "Y (GB)" in svg and 'class="tut-legend"' in svg and "<title" in svg


@pytest.mark.parametrize("lang", LANGUAGES)
def test_validation_page_shows_what_the_module_computes(built_site, lang):
    from labsite.pages.validation import number, signed
    from labsite.validation import page_rows, summary

    html = (language_dir(built_site, lang) / "validation" / "index.html").read_text(encoding="utf-8")
    rows = page_rows()
    cells = re.findall(r'<td class="num" data-value="predicted">([^<]*)</td>\s*'
                       r'<td class="num" data-value="published">([^<]*)</td>\s*<td>[^<]*</td>\s*'
                       r'<td class="num[^"]*" data-value="error">([^<]*)%</td>', html)
    assert len(cells) == len(rows)
    for row, (predicted, published, error) in zip(rows, cells):
        assert predicted == number(row.predicted)
        assert published == number(row.published)
        assert error == signed(row.error)
    mean = summary(rows)["prediction"][0]
    assert f'data-prediction-mean="{mean:.1f}"' in html
    assert any(row.kind == "prediction" and abs(row.error) > 10 for row in rows), "misses must be shown too"
