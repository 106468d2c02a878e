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
from labtest import page_html


def test_both_languages_have_the_same_pages(built_site):
    english = {p.relative_to(built_site).as_posix() for p in built_site.rglob("index.html") if "zh/" not in p.relative_to(built_site).as_posix()[:3]}
    chinese = {p.relative_to(built_site / "zh").as_posix() for p in (built_site / "zh").rglob("index.html")}
    assert english == chinese
    assert {"index.html", "lab/index.html", "walkthrough/index.html", "rules/index.html", "scenarios/index.html",
            "validation/index.html", "contributing/index.html", "tutorial/index.html"} <= english


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
