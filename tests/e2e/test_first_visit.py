"""The live lab on a slow network, as a new reader meets it: the site served
with its precompressed files through a throttled link (tools/serve.py: one
shared link for the page, its worker and its service worker). The progress bar
advances from the first paint, a slider moved before the lab is live marks the
panels pending and is applied once live, the search index waits for the lab,
and no file is downloaded twice (the service worker's precache included)."""
from collections import Counter

import pytest

from labsite.catalog import load_catalogs
from labtest import LIVE_TIMEOUT_MS, settle, wait_live
from labtools.serve import serve_in_thread

MEMORY_TEXT = "[data-meter=memory] .meter-text"
#: Slow enough that the boot download takes several seconds (about 4 MB at 700 kB/s).
THROTTLE = {"compress": "precompressed", "throttle_kbps": 700, "latency_ms": 40}


@pytest.fixture
def slow_site(browser, built_site):
    server = serve_in_thread(built_site, **THROTTLE)
    # bypass_csp: the waits below evaluate expressions (test_site_policy runs the lab under the policy).
    context = browser.new_context(base_url=f"http://127.0.0.1:{server.server_address[1]}/", viewport={"width": 1280, "height": 900},
                                  bypass_csp=True)
    try:
        yield server, context
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def progress(page):
    return float(page.get_attribute("#lab-app", "data-boot-progress") or 0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_first_visit_on_a_slow_network(slow_site, lang):
    server, context = slow_site
    catalog = load_catalogs()[lang]["lab"]
    page = context.new_page()
    page.set_default_timeout(LIVE_TIMEOUT_MS)
    page.goto("lab/" if lang == "en" else "zh/lab/")
    assert page.locator("#lab-progress").is_visible()  # from the first paint
    precomputed = page.text_content(MEMORY_TEXT)

    # The bar is determinate and advances while the runtime downloads.
    page.wait_for_function("Number(document.getElementById('lab-app').dataset.bootProgress || 0) > 0")
    first = progress(page)
    assert first < 1
    downloading = catalog["status_downloading"].split("{loaded}")[0]
    assert page.text_content("#lab-status").startswith(downloading)
    page.wait_for_function(f"Number(document.getElementById('lab-app').dataset.bootProgress || 0) > {first}")

    # A move before the lab is live: the box follows, the panels are marked pending.
    assert page.get_attribute("#lab-app", "data-lab-state") == "precomputed"
    before = page.input_value("#typed-params")
    page.focus("#slider-params")
    page.keyboard.press("ArrowRight")
    moved = page.input_value("#typed-params")
    assert moved != before
    if page.get_attribute("#lab-app", "data-lab-state") == "precomputed":
        assert page.get_attribute("#lab-app", "data-pending") is not None
        assert catalog["status_pending"] in page.text_content("#lab-status")

    # Once live, the move is applied: new numbers for the moved input, nothing pending.
    wait_live(page)
    settle(page)
    assert page.get_attribute("#lab-app", "data-pending") is None
    assert page.input_value("#typed-params") == moved
    assert page.text_content(MEMORY_TEXT) != precomputed
    assert not page.locator("#lab-progress").is_visible()

    # After the service worker has precached the site: no file came twice.
    page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=LIVE_TIMEOUT_MS)
    page.evaluate("navigator.serviceWorker.ready")
    served = server.served()
    full = Counter(r.path for r in served if r.status == 200 and r.bytes > 0)
    assert [path for path, n in full.items() if n > 1] == []
    wasm = [r for r in served if r.path.endswith("/pyodide.asm.wasm")]
    assert len(wasm) == 1 and wasm[0].encoding == "br"
    assert not [r for r in served if r.path.endswith((".map", "pyodide-lock.json", "wordcut.js"))]
    # The search index waited for the lab's download.
    index = min((r for r in served if r.path.endswith("/search/search_index.json")), key=lambda r: r.started)
    assert index.started >= wasm[0].ended
