"""Every number on the rules and walkthrough pages is what lab_core returns for
that input (computed again here and compared with the built HTML), and the
page set is the same in both languages."""
from markupsafe import escape

import pytest

from lab_view import Session
from labsite.catalog import LANGUAGES, load_catalogs
from labsite.labpage import default_inputs, load_lab_layout
from labsite.labquery import lab_query
from labsite.pages.lab import runtime_session_config
from labsite.pages.rules import assumption_sentence, example_sentence, load_assumptions, load_rules
from labsite.scenarios import load_demo_path
from labtest import language_dir, page_html


def test_every_page_has_its_twin_in_every_language(repo_root):
    """mkdocs-static-i18n silently shows English where a twin is missing: docs/x.md needs docs/x.<lang>.md."""
    docs = repo_root / "docs"
    pages = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")}
    sources = {p for p in pages if not any(p.endswith(f".{lang}.md") for lang in LANGUAGES[1:])}
    for lang in LANGUAGES[1:]:
        assert {p for p in pages if p.endswith(f".{lang}.md")} == {p[:-3] + f".{lang}.md" for p in sources}, lang


def test_every_language_has_the_same_pages(built_site):
    default, others = LANGUAGES[0], LANGUAGES[1:]
    built = {lang: {p.relative_to(language_dir(built_site, lang)).as_posix()
                    for p in language_dir(built_site, lang).rglob("index.html")} for lang in LANGUAGES}
    own = {page for page in built[default] if page.split("/")[0] not in others}
    for lang in others:
        assert built[lang] == own, lang
    assert {"index.html", "lab/index.html", "walkthrough/index.html", "rules/index.html", "scenarios/index.html",
            "validation/index.html", "contributing/index.html", "tutorial/index.html"} <= own


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rule_examples_and_assumptions_are_lab_core_numbers(built_site, lang):
    units = load_catalogs()[lang]["units"]
    html = page_html(built_site, lang, "rules/index.html")
    rules = load_rules()
    assert len(rules) >= 7
    for rule in rules:
        assert escape(example_sentence(rule, lang, units)) in html, rule["id"]
        assert rule["source"]["url"] in html
    for item in load_assumptions():
        assert escape(assumption_sentence(item, lang, units)) in html, item["id"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_walkthrough_steps_are_the_lab_views_of_the_demo_path(built_site, lang):
    catalog = load_catalogs()[lang]
    href = "../rules/" if lang == "en" else "../../zh/rules/"
    config = runtime_session_config(load_lab_layout(), catalog, lang, load_rules(), href)
    html = page_html(built_site, lang, "walkthrough/index.html")
    steps = load_demo_path()
    assert len(steps) == 6
    for scenario in steps:
        view = Session(config).evaluate(dict(default_inputs(), **scenario.workload))["view"]
        assert f'id="step-{scenario.id}"' in html
        assert view["decisions"] in html, scenario.id
        for meter in view["meters"].values():
            assert escape(meter["text"]) in html, (scenario.id, meter["text"])
        assert escape(view["stage"]["title"]) in html
        assert f"lab/?{escape(lab_query(scenario.workload))}" in html


def test_search_index_holds_both_languages_and_segments_chinese(built_site):
    import json

    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = [doc["location"] for doc in index["docs"]]
    assert any(loc.startswith("zh/") for loc in locations) and any(not loc.startswith("zh/") for loc in locations)
    chinese_text = " ".join(doc["text"] for doc in index["docs"] if doc["location"].startswith("zh/"))
    assert "\u200b" in chinese_text  # jieba's word boundaries, matched by the search separator
