"""Site pages in a real browser: the walkthrough in both languages, its links
into the lab, and search finding Chinese words."""
import re

import pytest

from labtest import settle, wait_live

PAGES = {"en": "walkthrough/", "zh": "zh/walkthrough/"}


@pytest.mark.parametrize("lang", PAGES)
def test_walkthrough_renders_the_six_steps(page, lang):
    page.goto(PAGES[lang])
    assert page.get_attribute("html", "lang") == lang
    assert page.locator(".wt-step").count() == 6
    assert page.locator(".wt-step .decision").count() == 36
    assert page.locator(".wt-step .meter").count() == 30


@pytest.mark.parametrize("lang", PAGES)
def test_a_step_link_opens_the_lab_at_that_workload(page, lang):
    page.goto(PAGES[lang])
    step = page.locator("#step-tensor-pipeline")
    stage = step.locator(".wt-stage").get_attribute("data-stage")
    facts = step.locator(".wt-facts dd").all_text_contents()
    step.locator("a.md-button").click()
    page.wait_for_url(re.compile(r"/lab/\?"))
    wait_live(page)
    settle(page)
    assert page.get_attribute("#lab-app", "data-stage") == stage
    assert page.input_value("#typed-params") == facts[0]
    assert page.input_value("#typed-gpus") == facts[1]


@pytest.mark.parametrize("lang, query, expected", [("en", "checkpoint", "checkpoint"), ("zh", "故障", "故障")])
def test_search_finds_words_in_both_languages(page, lang, query, expected):
    page.goto("" if lang == "en" else "zh/")
    page.click("label.md-search__icon, .md-search__input", timeout=30_000)
    page.fill(".md-search__input", query)
    page.press(".md-search__input", "End")  # fill() types Chinese without key events; a key press runs the search
    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=60_000)
    assert results.count() >= 1
    assert expected in page.text_content(".md-search-result").lower()


@pytest.mark.parametrize("lang", PAGES)
def test_every_tab_is_visible_at_the_narrowest_width_with_tabs(page, lang):
    # Material shows the tab bar from 76.25em (1,220 px) up and scrolls it sideways, with no
    # scrollbar, when the labels are wider: a tab past the edge is one a reader never finds.
    page.set_viewport_size({"width": 1220, "height": 700})
    page.goto("" if lang == "en" else "zh/")
    tabs = page.locator(".md-tabs__list")
    labels = [text.strip() for text in tabs.locator(".md-tabs__link").all_text_contents()]
    assert len(labels) == 8
    if lang == "zh":
        assert all(re.search(r"[\u4e00-\u9fff]", label) for label in labels), labels
    width = tabs.evaluate("list => [list.scrollWidth, list.clientWidth]")
    assert width[0] <= width[1], (labels, width)


@pytest.mark.parametrize("lang", PAGES)
def test_the_validation_pages_figures_line_up_on_the_right(page, lang):
    """Numbers in the validation tables are right-aligned, as their column headers (pages.css; Material's own
    cell rule would left-align them), in the summary, the kinds of run and every group's table."""
    page.goto("validation/" if lang == "en" else "zh/validation/")
    for table in ('table[data-table="summary"]', 'table[data-table="run-kinds"]', "table[data-group]"):
        cell = page.locator(f"{table} td.num").first
        assert cell.evaluate("el => getComputedStyle(el).textAlign") == "right", table
