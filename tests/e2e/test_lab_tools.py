"""The lab's tools for a real launch (issue 16) in a real headless Chromium, in
both languages, on desktop (1366×900) and phone (390×844): model presets,
pinned choices and their errors, compare A/B, the curves, GB/GiB, copy link
and the launch configuration, all in the URL. Tests wait on conditions (the
applied sequence numbers), never on fixed sleeps."""
import re
import tomllib
from urllib.parse import parse_qs, urlparse

import pytest

from labsite.catalog import load_catalogs
from labtest import open_lab, requested, settle, wait_live

LANGS = {"en": "lab/", "zh": "zh/lab/"}
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
CATALOGS = load_catalogs()
H100_512 = "?gpus=512&gpu=h100_80gb"


def open_page(browser, base_url, path, viewport=DESKTOP, clipboard=False, init_script=None):
    return open_lab(browser, base_url, path, viewport, ("clipboard-read", "clipboard-write") if clipboard else (),
                    init_script)


def act(page, action):
    """Run ``action`` (a callable) and wait for the answer to the request it makes."""
    seq = requested(page)
    action()
    settle(page, seq)


def extras_done(page):
    """Wait until the open panels (pins, curves, export) show the latest answer's plan:
    the page asks for them once answers pause (lab-tools.js), and says when they are in."""
    page.wait_for_function("document.getElementById('lab-app').dataset.extras === 'done'")


def open_panel(page, panel):
    """Open a panel and wait for what it asks the worker for: the request the panel was
    open for has been answered (an extras request sent just before the click, for the
    other panels, may be answered first; lab-tools.js marks each panel)."""
    before = int(page.get_attribute(f"#{panel}", "data-requested") or 0)
    page.click(f"#{panel} summary")
    page.wait_for_function(f"""() => {{ const d = document.getElementById('{panel}').dataset;
        return Number(d.requested || 0) > {before} && d.applied === d.requested; }}""")
    extras_done(page)


def query(page):
    return parse_qs(urlparse(page.url).query, keep_blank_values=True)


def plan_item(page, key):
    return page.text_content(f'.lab-plan-grid dd[data-bind="plan.items.{key}"]')


@pytest.mark.parametrize("lang", LANGS)
def test_a_preset_sets_the_published_shape_and_custom_derives_it_again(browser, base_url, lang):
    context, page = open_page(browser, base_url, LANGS[lang] + H100_512)
    act(page, lambda: page.select_option("#lab-preset", "llama3-70b"))
    q = query(page)
    assert q["layers"] == ["80"] and q["hidden"] == ["8192"] and q["kv_heads"] == ["8"] and q["vocab"] == ["128256"]
    assert page.input_value("#adv-layers") == "80"
    note = page.text_content(".lab-preset-note")
    assert "arXiv:2407.21783" in note and "Table 3" in note
    act(page, lambda: page.select_option("#lab-preset", "custom"))
    assert "layers" not in query(page) and page.input_value("#lab-preset") == "custom"
    assert page.get_attribute("#adv-layers", "placeholder") and page.input_value("#adv-layers") == ""
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_pins_fix_choices_and_an_invalid_pin_says_why_with_the_nearest_values(browser, base_url, lang):
    context, page = open_page(browser, base_url, LANGS[lang] + H100_512 + "&params=70000000000")
    open_panel(page, "lab-pins")
    act(page, lambda: page.select_option("#pin-tp", "8"))
    extras_done(page)
    act(page, lambda: page.select_option("#pin-zero", "3"))
    extras_done(page)
    assert plan_item(page, "tp") == "8" and plan_item(page, "zero") == "3"
    assert query(page)["tp"] == ["8"] and query(page)["zero"] == ["3"]
    assert page.get_attribute("#lab-app", "data-pinned") == "tp zero"
    good_url = page.url
    act(page, lambda: page.select_option("#pin-dp", "512"))  # 8 × 512 GPUs is more than 512
    error = page.text_content("#error-dp")
    assert CATALOGS[lang]["pin_errors"]["why"]["dp"] in error and re.search(r"\d+, \d+", error)
    assert page.get_attribute("#pin-dp", "aria-invalid") == "true"
    assert page.url == good_url and plan_item(page, "tp") == "8"
    act(page, lambda: page.click("#lab-unpin"))
    assert "tp" not in query(page) and not page.is_visible("#error-dp")
    context.close()


# 42B at 64K tokens on 61 H100: the plan recomputes fully, only the first layers of each chunk (planner/trim.py).
LONG_42B = "?params=42000000000&gpus=61&gpu=h100_80gb&seq_len=65536&global_batch_tokens=262144"


@pytest.mark.parametrize("lang", LANGS)
def test_recompute_layers_are_the_planners_and_a_pin_sets_them(browser, base_url, lang):
    context, page = open_page(browser, base_url, LANGS[lang] + LONG_42B)
    open_panel(page, "lab-pins")
    chosen = page.eval_on_selector("#pin-recompute_layers", "s => s.options[0].text")
    fewest = int(re.search(r"\d+", chosen).group())
    assert str(fewest) in plan_item(page, "recompute")
    act(page, lambda: page.select_option("#pin-recompute_layers", str(fewest + 2)))
    extras_done(page)
    assert str(fewest + 2) in plan_item(page, "recompute")
    assert query(page)["recompute_layers"] == [str(fewest + 2)]
    context.close()


# Counts what the page writes into its <select>s that they already hold: Chromium's autofill
# takes any such write for the reader changing the form and re-reads every field of the page
# on the main thread (lab-static.js setValue).
SELECT_WRITES_SPY = """(() => {
  const counts = window.__selectWrites = { sameValue: 0, sameOptions: 0, changed: 0 };
  const proto = HTMLSelectElement.prototype;
  const value = Object.getOwnPropertyDescriptor(proto, "value");
  Object.defineProperty(proto, "value", { configurable: true, get() { return value.get.call(this); },
    set(v) { counts[value.get.call(this) === String(v) ? "sameValue" : "changed"]++; value.set.call(this, v); } });
  const html = Object.getOwnPropertyDescriptor(Element.prototype, "innerHTML");
  Object.defineProperty(proto, "innerHTML", { configurable: true, get() { return html.get.call(this); },
    set(v) { counts[html.get.call(this) === String(v) ? "sameOptions" : "changed"]++; html.set.call(this, v); } });
})();"""


def test_answers_leave_selects_that_already_show_the_value_alone(browser, base_url):
    context, page = open_page(browser, base_url, "lab/" + H100_512 + "&params=70000000000",
                              init_script=SELECT_WRITES_SPY)
    open_panel(page, "lab-pins")  # its selects get their options with each plan
    for name in ("gpus", "seq_len", "gpus"):
        act(page, lambda: page.press(f"#slider-{name}", "ArrowRight"))
        extras_done(page)
    act(page, lambda: page.click('.lab-card[data-scenario="full-3d"]'))
    extras_done(page)
    counts = page.evaluate("window.__selectWrites")
    assert counts["changed"] > 0  # the spy saw the new plans' pin options
    assert counts["sameValue"] == 0 and counts["sameOptions"] == 0, counts
    context.close()


def test_a_link_with_pins_opens_them_and_drops_one_that_cannot_run(browser, base_url):
    context, page = open_page(browser, base_url, "lab/" + H100_512 + "&params=70000000000&tp=8&pp=7")
    assert page.evaluate("document.getElementById('lab-pins').open")
    assert plan_item(page, "tp") == "8"
    page.wait_for_function("!new URLSearchParams(location.search).has('pp')")  # the link is rewritten to what applied
    assert query(page)["tp"] == ["8"]
    assert CATALOGS["en"]["pin_errors"]["why"]["pp"] in page.text_content("#lab-notice")
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_compare_pins_a_and_shows_what_changed_and_survives_the_link(browser, base_url, lang):
    context, page = open_page(browser, base_url, LANGS[lang] + H100_512 + "&params=70000000000")
    assert not page.is_visible("#lab-compare")
    act(page, lambda: page.click("#lab-pin-a"))
    assert page.is_visible("#lab-compare") and page.is_visible("#lab-clear-a")
    assert page.text_content("#lab-compare-summary") == CATALOGS[lang]["compare"]["same"]
    act(page, lambda: (page.fill("#typed-gpus", "1024"), page.press("#typed-gpus", "Enter")))
    gpus_row = page.locator('#lab-compare tr[data-row="gpus"]')
    assert "cmp-differs" in gpus_row.get_attribute("class")
    assert "512" in gpus_row.text_content() and "1,024" in gpus_row.text_content()
    assert page.locator("#lab-compare .cmp-better").count() > 0
    a = parse_qs(query(page)["a"][0])
    assert a["gpus"] == ["512"] and query(page)["gpus"] == ["1024"]
    link = page.url
    page.goto(link)
    wait_live(page)
    page.wait_for_function("!document.getElementById('lab-app').dataset.linkPending")
    settle(page)
    page.wait_for_function("!document.getElementById('lab-compare').hidden")
    assert "1,024" in page.text_content('#lab-compare tr[data-row="gpus"]')
    act(page, lambda: page.click("#lab-clear-a"))
    assert not page.is_visible("#lab-compare") and "a" not in query(page)
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_curves_are_computed_for_the_current_plan_with_tables_and_units(browser, base_url, lang):
    context, page = open_page(browser, base_url, LANGS[lang] + H100_512 + "&params=70000000000")
    seq = requested(page)
    open_panel(page, "lab-curves")
    assert requested(page) == seq  # the panel asked for extras only, not a new plan
    for name in ("seq_len", "micro_batch", "gpus"):
        figure = page.locator(f"#curve-{name}")
        assert figure.locator("svg.ch-svg").count() == 1
        rows = figure.locator(".ch-data tbody tr").count()
        assert rows >= 2, name
    assert page.locator("#curve-gpus .ch-dot.ch-here").count() == 1
    before = page.text_content("#curve-seq_len .ch-data")
    act(page, lambda: page.check('input[name="lab-units"][value="gib"]'))
    extras_done(page)
    assert "GiB" in page.text_content("#curve-seq_len .ch-data") and "GiB" not in before
    assert "GiB" in page.text_content(".lab-plan .bar-summary") and query(page)["units"] == ["gib"]
    act(page, lambda: (page.fill("#typed-params", "13B"), page.press("#typed-params", "Enter")))
    extras_done(page)
    assert page.text_content("#curve-seq_len .ch-data") != before
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_launch_configuration_follows_the_plan_and_copies(browser, base_url, lang):
    context, page = open_page(browser, base_url, LANGS[lang] + H100_512 + "&params=70000000000&tp=4", clipboard=True)
    open_panel(page, "lab-export")
    text = page.text_content("#lab-export-text")
    assert "--tensor-model-parallel-size 4" in text
    assert CATALOGS[lang]["export"]["header"] in text
    seq = page.get_attribute("#lab-app", "data-extras-requested")
    page.select_option("#lab-export-format", "torchtitan")
    page.wait_for_function(f"document.getElementById('lab-app').dataset.extrasApplied !== '{seq}'")
    extras_done(page)
    job = tomllib.loads(page.text_content("#lab-export-text"))
    assert job["parallelism"]["tensor_parallel_degree"] == 4
    assert page.text_content("#lab-export-status") == ""  # torchtitan runs this plan: no warning
    page.click("#lab-export-copy")
    page.wait_for_function("document.getElementById('lab-toast').textContent.length > 0")
    copied, shown = page.evaluate("navigator.clipboard.readText()"), page.text_content("#lab-export-text")
    # This pair failed once in a batch and never again in 20 runs (some under load): say what differed.
    state = page.evaluate("({...document.getElementById('lab-app').dataset})")
    assert copied == shown, (copied[:300], shown[:300], page.text_content("#lab-toast"), state)
    assert page.text_content("#lab-toast") == CATALOGS[lang]["export_panel"]["copied"], state
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_an_export_the_framework_would_refuse_is_flagged(browser, base_url, lang):
    """8 pipeline stages and 4 sequences per step: torchtitan's 1F1B refuses fewer micro-batches than
    stages, so its job file comes with the panel's warning; the Megatron command, which runs, without."""
    url = "?params=70000000000&gpus=64&gpu=h100_80gb&seq_len=8192&global_batch_tokens=32768&tp=8&pp=8"
    context, page = open_page(browser, base_url, LANGS[lang] + url)
    open_panel(page, "lab-export")
    assert "--pipeline-model-parallel-size 8" in page.text_content("#lab-export-text")
    assert page.text_content("#lab-export-status") == ""
    seq = page.get_attribute("#lab-app", "data-extras-requested")
    page.select_option("#lab-export-format", "torchtitan")
    page.wait_for_function(f"document.getElementById('lab-app').dataset.extrasApplied !== '{seq}'")
    extras_done(page)
    warning = CATALOGS[lang]["export_panel"]["refused"].format(framework="torchtitan")
    assert page.text_content("#lab-export-status") == warning
    assert CATALOGS[lang]["export"]["notes"]["torchtitan_too_few_micro_batches"].split("{")[0] in \
        page.text_content("#lab-export-text")
    context.close()


def test_copy_link_copies_the_state_with_pins_units_and_a(browser, base_url):
    context, page = open_page(browser, base_url, "lab/" + H100_512 + "&params=70000000000&tp=8&units=gib", clipboard=True)
    act(page, lambda: page.click("#lab-pin-a"))
    page.click("#lab-copy-link")
    page.wait_for_function("document.getElementById('lab-toast').textContent.length > 0")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.url
    q = parse_qs(urlparse(copied).query)
    assert q["tp"] == ["8"] and q["units"] == ["gib"] and parse_qs(q["a"][0])["tp"] == ["8"]
    context.close()


PAGE_WIDTH = "() => document.scrollingElement.scrollWidth - innerWidth"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_tools_fit_the_screen_in_both_languages(browser, base_url, lang, viewport, tmp_path):
    context, page = open_page(browser, base_url, LANGS[lang] + H100_512 + "&params=70000000000", viewport)
    act(page, lambda: page.click("#lab-pin-a"))
    act(page, lambda: (page.fill("#typed-gpus", "1024"), page.press("#typed-gpus", "Enter")))
    for panel in ("lab-pins", "lab-curves", "lab-export"):
        open_panel(page, panel)
    assert page.evaluate(PAGE_WIDTH) <= 1
    # Chart text stays legible at the chart's drawn size.
    smallest = page.evaluate("""() => Math.min(...[...document.querySelectorAll('#lab-curves svg.ch-svg')].flatMap((svg) => {
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
    }))""")
    assert smallest >= 8, smallest
    for section in ("lab-compare", "lab-curves", "lab-export"):
        page.locator(f"#{section}").screenshot(path=str(tmp_path / f"{section}.png"))
    context.close()
