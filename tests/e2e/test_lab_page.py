"""The lab in a real headless Chromium, in both languages."""
import re

from conftest import wait_applied, wait_live

MEMORY_TEXT = "[data-meter=memory] .meter-text"


def test_precomputed_result_is_on_the_page_without_any_script(browser, base_url):
    context = browser.new_context(base_url=base_url, java_script_enabled=False)
    page = context.new_page()
    page.goto("lab/")
    assert page.get_attribute("#lab", "data-lab-state") == "precomputed"
    assert re.search(r"GB .* 80 GB", page.text_content(MEMORY_TEXT))
    page.goto("zh/lab/")
    assert "每 GPU" in page.text_content(MEMORY_TEXT)
    context.close()


def test_precomputed_value_shows_while_the_worker_is_still_loading(page):
    # Hold Pyodide's wasm back so the page is caught before the live lab is up.
    page.route("**/pyodide.asm.wasm", lambda route: None)
    page.goto("lab/")
    assert page.get_attribute("#lab", "data-lab-state") == "precomputed"
    assert "GB" in page.text_content(MEMORY_TEXT)


def test_moving_the_slider_changes_the_meter(page):
    page.goto("lab/")
    wait_live(page)
    before = page.text_content(MEMORY_TEXT)
    page.focus("#slider-params")
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    wait_applied(page, 1)
    page.wait_for_function(
        "([sel, before]) => document.querySelector(sel).textContent !== before", arg=[MEMORY_TEXT, before]
    )
    after = page.text_content(MEMORY_TEXT)
    assert after != before
    assert page.input_value("#typed-params") == page.get_attribute("#slider-params", "aria-valuetext")


def test_typed_value_out_of_range_is_rejected_and_state_kept(page):
    page.goto("lab/")
    wait_live(page)
    before = page.text_content(MEMORY_TEXT)
    page.fill("#typed-gpus", "100000")
    page.press("#typed-gpus", "Enter")
    error = page.locator("#error-gpus")
    error.wait_for(state="visible")
    assert "32,768" in error.text_content()
    assert page.get_attribute("#typed-gpus", "aria-invalid") == "true"
    assert page.input_value("#typed-gpus") == "100000"  # nothing the reader typed is lost
    assert page.text_content(MEMORY_TEXT) == before


def test_language_switch_leads_to_the_chinese_lab(page):
    page.goto("lab/")
    page.hover(".md-header__option .md-select")
    page.click("a[hreflang=zh]")
    page.wait_for_url(re.compile(r"/zh/lab/$"))
    assert page.get_attribute("html", "lang") == "zh"
    wait_live(page)
    assert "每 GPU" in page.text_content(MEMORY_TEXT)


def test_no_request_leaves_the_origin(page, context):
    for path in ("", "lab/", "zh/", "zh/lab/"):
        page.goto(path)
        if "lab" in path:
            wait_live(page)
    assert context.request_log.other_origins() == []
