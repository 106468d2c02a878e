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


def test_a_rule_that_applies_to_an_unknown_feature_stops_the_build(monkeypatch, tmp_path):
    """A contributor's typo in ``applies`` would hide the rule from every lab plan: the build
    names the rule, the word and the features the lab knows."""
    from labsite.errors import BuildError
    from labsite.pages import rules as rules_page

    text = rules_page.RULES_FILE.read_text(encoding="utf-8").replace("applies: [ep]", "applies: [experts]")
    bad = tmp_path / "rules.yaml"
    bad.write_text(text, encoding="utf-8")
    monkeypatch.setattr(rules_page, "RULES_FILE", bad)
    with pytest.raises(BuildError) as error:
        rules_page.load_rules()
    message = str(error.value)
    assert "rule expert_parallel" in message and "'experts' is not a plan feature" in message
    assert "allowed: tp, pp, dp, cp, ep" in message


def test_context_and_expert_parallel_rules_reach_the_lab_plans_that_use_them():
    """The lab lists the context-parallel rule beside a plan with CP > 1 and the expert-parallel
    rule beside one with EP > 1 (lab_view.view.plan_features), and their examples say what the
    rules claim: the split sequence keeps 1/cp of a layer's activations; the ring exposes less
    than the all-gather; without expert parallelism DeepSeek-V3's layout would not fit a GPU."""
    from labsite.examples import EXAMPLES
    from lab_view.view import plan_features

    rules = {rule["id"]: rule for rule in load_rules()}
    assert rules["context_parallel"]["applies"] == ["cp"] and rules["expert_parallel"]["applies"] == ["ep"]
    base = {"tp": 8, "pp": 1, "dp": 1, "zero": 0, "recompute": "none"}
    plan = {"parallelism": dict(base, cp=16, ep=8), "meters": {"activation": {"level": "ok"}},
            "checkpoint": {"interruptions_per_day": 0}, "gpus": {"used": 128}, "stage": "full_3d"}
    assert {"cp", "ep"} <= plan_features(plan)
    assert not {"cp", "ep"} & plan_features(dict(plan, parallelism=base))
    cp = EXAMPLES["context_parallel"]()
    assert cp["layer_act"][0] == pytest.approx(cp["cp"][0] * cp["layer_act_cp"][0])
    assert cp["ring_exposed"][0] < cp["cp_exposed"][0] == pytest.approx(cp["cp_total"][0])
    ep = EXAMPLES["expert_parallel"]()
    assert ep["mem"][0] < ep["device"][0] < ep["no_ep_mem"][0]
    assert ep["experts_per_gpu"][0] * ep["ep"][0] == ep["experts"][0]
