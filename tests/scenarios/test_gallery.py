"""The gallery and the Contributing page: cards in both languages, escaped
text, the example file shown as the build reads it, and, in a copy of the
tree, a new file appearing with no code change (a bad one stopping the build:
tests/site/test_build_errors.py)."""
import jinja2
import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from labsite.labquery import lab_query
from labsite.paths import TEMPLATES
from labsite.scenarios import SCENARIOS, load_demo_path, load_scenarios
from labsite.scenarios.schema import SCENARIO_SCHEMA_FILE, load_schema
from lab_core.inputs import INPUT_SPECS
from lab_core.planner import STAGES, plan_json
from labtest import build_site, page_html


def test_catalogs_describe_every_field_input_and_figure():
    for lang, catalog in load_catalogs().items():
        c, s = catalog["contributing"], catalog["scenarios"]
        assert set(c["fields"]) == set(load_schema(str(SCENARIOS / SCENARIO_SCHEMA_FILE))["properties"]), lang
        assert set(c["inputs"]) == {spec.name for spec in INPUT_SPECS}, lang
        assert set(s["metrics"]) == set(c["metric_notes"]), lang


def test_card_text_is_escaped():
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined)
    t = load_catalogs()["en"]["scenarios"]
    evil = "<script>alert(1)</script>"
    c = {"id": "x", "step": None, "title": evil, "summary": evil, "narrative": evil, "notes": evil, "tags": [],
         "facts": [], "layout": None, "stage": None, "prediction": [], "published": [], "source": None,
         "lab_url": "lab/?a=1&b=2"}
    html = env.get_template("scenario_card.html").render(c=c, t=t)
    assert "<script>" not in html and "&lt;script&gt;" in html and "a=1&amp;b=2" in html


def test_the_gallery_shows_every_scenario_in_both_languages(built_site):
    scenarios = load_scenarios()
    for lang in LANGUAGES:
        html = page_html(built_site, lang, "scenarios/index.html")
        for s in scenarios:
            assert f'id="scenario-{s.id}"' in html, (lang, s.id)
            assert jinja2.utils.markupsafe.escape(s.title[lang]) in html, (lang, s.id)
        first = load_demo_path()[0]
        assert f"lab/?{lab_query(first.workload)}".replace("&", "&amp;") in html
        assert html.count('class="scn-published"') == sum(1 for s in scenarios if s.published)


def test_contributing_shows_the_example_file_as_the_build_reads_it(built_site):
    from labsite.pages.gallery import example_text
    text = example_text()
    assert "$schema=./scenario.schema.json" in text
    for lang in LANGUAGES:
        html = page_html(built_site, lang, "contributing/index.html")
        assert str(jinja2.utils.markupsafe.escape(text)) in html, lang
        for spec in INPUT_SPECS:
            assert f"<code>{spec.name}</code>" in html, (lang, spec.name)


def test_demo_path_steps_reach_their_stages_in_order():
    stages = tuple(plan_json(dict(s.workload))["plan"]["stage"] for s in load_demo_path())
    assert stages == STAGES


# --- a copy of the tree (the tree_copy fixture) -----------------------------------------


def test_a_new_file_appears_on_the_site_with_no_code_change(tree_copy, tmp_path):
    from labsite.pages.gallery import example_text
    new = tree_copy / "scenarios" / "minimal-example.yaml"
    new.write_text(example_text(), encoding="utf-8")
    try:
        result = build_site(tmp_path / "site", source_root=tree_copy)
        assert result.returncode == 0, result.stdout + result.stderr
        for lang, title in (("en", "A 13B model on 256 GPUs"), ("zh", "256 块 GPU 上的 13B 模型")):
            html = page_html(tmp_path / "site", lang, "scenarios/index.html")
            assert 'id="scenario-minimal-example"' in html and title in html, lang
            assert "lab/?params=13000000000&amp;gpus=256" in html
    finally:
        new.unlink()


def test_a_card_shows_every_dimension_of_the_layout_the_run_used():
    """tp x cp x pp x dp is the GPU count: a card that left out context parallelism would show a layout
    for a fraction of the GPUs (Llama 3's 128K run: 1,024 of 16,384); expert parallelism and an uneven
    split are shown too."""
    from lab_core import evaluate
    from labsite.pages.gallery import _layout_text
    for lang, catalog in load_catalogs().items():
        t = catalog["scenarios"]
        for scenario in load_scenarios():
            par = scenario.parallelism
            if not par:
                continue
            report = evaluate(scenario.workload_object(), scenario.parallelism_object()).to_dict()
            text = _layout_text(par, t, report, catalog)
            for dim in ("tp", "cp", "pp", "dp", "ep"):
                if par.get(dim, 1) > 1:
                    assert t["layout_parts"][dim].format(n=par[dim]) in text, (lang, scenario.id, dim)
            if par.get("first_stage_layers"):
                assert str(par["first_stage_layers"]) in text, (lang, scenario.id)
