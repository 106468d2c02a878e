"""The live lab's runtime in a real headless Chromium: boot from the build-time
Pyodide snapshot, cold-boot fallback for every broken-snapshot case, offline
reload from the service worker, and no Pyodide on pages without the lab.

Every wait is on a condition (never a fixed sleep), with generous timeouts so
the tests hold on two loaded cores."""
import gzip
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from playwright.sync_api import Error as PlaywrightError

from labtest import LIVE_TIMEOUT_MS, wait_applied, wait_live
from labtools.serve import make_server, serve_in_thread

SNAPSHOT_GLOB = "**/assets/lab/snapshot.*.bin.gz"
#: The worker fetches the snapshot on a first visit only when the connection
#: makes it pay; these tests are about the snapshot, so they ask for it.
WANT_SNAPSHOT = "globalThis.LAB_SNAPSHOT_POLICY = 'always';"
MEMORY_TEXT = "[data-meter=memory] .meter-text"


def open_controlled_lab(context):
    """Open the lab live, then wait until the service worker has installed (the
    whole precache) and controls the page."""
    page = context.new_page()
    page.set_default_timeout(LIVE_TIMEOUT_MS)
    page.goto("lab/")
    wait_live(page)
    page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=LIVE_TIMEOUT_MS)
    return page


def lab_config(page):
    return json.loads(page.text_content("#lab-config"))


def boot_kind(page):
    return page.get_attribute("#lab-app", "data-boot-kind")


def snapshot_file(site):
    (path,) = (site / "assets/lab").glob("snapshot.*.bin.gz")
    return path


def test_lab_boots_from_the_build_time_snapshot(page, context):
    page.add_init_script(WANT_SNAPSHOT)
    page.goto("lab/")
    config = lab_config(page)
    assert re.fullmatch(r"[0-9a-f]{64}", config["boot"]["snapshot"]["sha256"])
    wait_live(page)
    assert boot_kind(page) == "snapshot"
    assert any(url.endswith(config["boot"]["snapshot"]["url"].rsplit("/", 1)[-1]) for url in context.request_log.urls)


def test_snapshot_booted_lab_gives_the_precomputed_answer(page):
    page.add_init_script(WANT_SNAPSHOT)
    page.goto("lab/")
    precomputed = page.text_content(MEMORY_TEXT)
    wait_live(page)
    assert boot_kind(page) == "snapshot"
    page.focus("#slider-gpus")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    wait_applied(page, 2)  # the second move, back to the precomputed inputs
    assert page.text_content(MEMORY_TEXT) == precomputed


def _not_found(route):
    route.fulfill(status=404, body="not found")


def _flip_a_byte(site):
    data = bytearray(snapshot_file(site).read_bytes())
    data[len(data) // 2] ^= 0xFF
    return lambda route: route.fulfill(status=200, body=bytes(data), content_type="application/octet-stream")


def _truncated(site):
    data = snapshot_file(site).read_bytes()[: 100_000]
    return lambda route: route.fulfill(status=200, body=data, content_type="application/octet-stream")


BROKEN = {
    "http-404": lambda site: _not_found,
    "corrupt-byte": _flip_a_byte,
    "truncated": _truncated,
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_snapshot_falls_back_to_a_cold_boot(page, built_site, case):
    page.add_init_script(WANT_SNAPSHOT)
    hits = []

    def handler(route):
        hits.append(route.request.url)
        BROKEN[case](built_site)(route)

    page.route(SNAPSHOT_GLOB, handler)
    page.goto("lab/")
    precomputed = page.text_content(MEMORY_TEXT)
    wait_live(page)
    assert hits, "the snapshot was never requested"
    assert boot_kind(page) == "cold"
    assert page.text_content(MEMORY_TEXT) == precomputed
    page.focus("#slider-params")
    page.keyboard.press("ArrowRight")
    wait_applied(page, 1)
    page.wait_for_function("([sel, before]) => document.querySelector(sel).textContent !== before", arg=[MEMORY_TEXT, precomputed])


def test_snapshot_that_passes_the_digest_but_cannot_restore_falls_back(page):
    """A file matching the page's sha256 that is not a snapshot of this Pyodide
    (here: gzip of zeros, so a bad magic number) fails in loadPyodide itself."""
    page.add_init_script(WANT_SNAPSHOT)
    bogus = gzip.compress(b"\0" * 65536, mtime=0)
    digest = hashlib.sha256(bogus).hexdigest()

    def rewrite_page(route):
        response = route.fetch()
        html = response.text()
        config_text = re.search(r'<script type="application/json" id="lab-config">(.*?)</script>', html, re.S).group(1)
        config = json.loads(config_text)
        real = config["boot"]["snapshot"]["sha256"]
        html = html.replace(real, digest).replace(f'"bytes":{config["boot"]["snapshot"]["bytes"]}', f'"bytes":{len(bogus)}')
        route.fulfill(response=response, body=html)

    page.route("**/lab/", rewrite_page)
    page.route(SNAPSHOT_GLOB, lambda route: route.fulfill(status=200, body=bogus, content_type="application/octet-stream"))
    page.goto("lab/")
    assert lab_config(page)["boot"]["snapshot"]["sha256"] == digest
    wait_live(page)
    assert boot_kind(page) == "cold"


def test_hanging_snapshot_falls_back_cold_without_downloading_again(page, context):
    # The snapshot request is never answered; the worker's stall watch (shortened
    # here) gives it up and boots cold from the files it already has.
    page.add_init_script(WANT_SNAPSHOT)
    page.add_init_script("globalThis.LAB_BOOT_TIMEOUTS = { stall: 1500 };")
    page.route(SNAPSHOT_GLOB, lambda route: None)
    page.goto("lab/")
    wait_live(page)
    assert boot_kind(page) == "cold"
    wasm = [u for u in context.request_log.urls if u.endswith("/pyodide.asm.wasm")]
    assert len(wasm) == 1, wasm


def test_snapshot_restore_that_hangs_restarts_the_worker_cold(page):
    # The snapshot arrives but its restore never finishes (here: the worker's
    # first loadPyodide is made to hang); the page's restore timeout (shortened)
    # restarts the worker without the snapshot.
    page.add_init_script(WANT_SNAPSHOT)
    page.add_init_script("globalThis.LAB_BOOT_TIMEOUTS = { snapshot: 1500 };")
    page.route("**/assets/pyodide/pyodide.mjs", lambda route: route.fulfill(
        status=200, content_type="text/javascript",
        body="export function loadPyodide(options) { return options._loadSnapshot ? new Promise(() => {}) : import('./pyodide.mjs?real').then((m) => m.loadPyodide(options)); }",
    ) if "real" not in route.request.url else route.continue_())
    page.goto("lab/")
    wait_live(page)
    assert boot_kind(page) == "cold"
    assert page.evaluate("performance.getEntriesByName('lab:worker-start').length") == 2


def test_without_webassembly_the_page_says_why_and_keeps_precomputed_results(page, context):
    page.add_init_script("delete globalThis.WebAssembly;")
    page.goto("lab/")
    page.wait_for_function("document.getElementById('lab-app').dataset.labState === 'failed'")
    assert "WebAssembly" in page.text_content("#lab-status")
    assert "GB" in page.text_content(MEMORY_TEXT)
    assert not [u for u in context.request_log.urls if "/assets/pyodide/" in u]


def test_opened_from_a_file_the_page_says_why_and_keeps_precomputed_results(browser, built_site):
    context = browser.new_context(bypass_csp=True)
    try:
        page = context.new_page()
        page.goto((built_site / "lab/index.html").as_uri())
        page.wait_for_function("document.getElementById('lab-app').dataset.labState === 'unavailable'", timeout=10_000)
        assert "http" in page.text_content("#lab-status")
        assert "GB" in page.text_content(MEMORY_TEXT)
    finally:
        context.close()


@pytest.mark.parametrize("blocked", ["**/assets/pyodide/pyodide.asm.wasm", "**/assets/pyodide/**"])
def test_blocked_pyodide_fails_with_a_reason_and_keeps_precomputed_results(page, blocked):
    page.route(blocked, lambda route: route.abort())
    page.goto("lab/")
    precomputed = page.text_content(MEMORY_TEXT)
    page.wait_for_function("document.getElementById('lab-app').dataset.labState === 'failed'")
    status = page.text_content("#lab-status")
    assert re.search(r"\(.+\)|（.+）", status), status  # the reason is in the message
    assert page.text_content(MEMORY_TEXT) == precomputed


@pytest.mark.parametrize("path", ["", "zh/"])
def test_pages_without_the_lab_load_no_pyodide(page, context, path):
    page.goto(path, wait_until="load")
    page.wait_for_load_state("networkidle")
    loaded = [u for u in context.request_log.urls if "/assets/pyodide/" in u or "/assets/lab/" in u or u.endswith("/sw.js")]
    assert loaded == []


def test_offline_reload_after_one_visit(browser, built_site):
    """After one visit the service worker has precached the site: with the
    network off and the server gone, the lab page reloads and goes live, and
    other pages open too."""
    server = serve_in_thread(built_site)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    context = browser.new_context(base_url=base, bypass_csp=True)
    server_up = True
    try:
        page = open_controlled_lab(context)
        context.set_offline(True)
        server.shutdown()
        server.server_close()
        server_up = False
        page.reload()
        wait_live(page)
        assert boot_kind(page) == "snapshot"
        assert "GB" in page.text_content(MEMORY_TEXT)
        page.goto("zh/lab/")
        wait_live(page)
        assert page.get_attribute("html", "lang") == "zh"
        page.goto("./")
        assert page.locator("#lab-app").count() == 0
    finally:
        context.close()
        if server_up:
            server.shutdown()
            server.server_close()


def poll(page, async_predicate, timeout_ms=LIVE_TIMEOUT_MS, describe=None):
    """Wait until an async page function returns true (wait_for_function does not
    await promises); survives the reloads a service worker may trigger. describe:
    an async page function whose result the timeout's message shows (the state
    the wait was for)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            if page.evaluate(async_predicate):
                return
        except PlaywrightError as error:
            if "destroyed" not in str(error) and "navigat" not in str(error):
                raise
        if time.monotonic() >= deadline:
            state = page.evaluate(describe) if describe else None
            raise AssertionError(f"timed out waiting for {async_predicate}; state: {state}")
        page.wait_for_timeout(100)


# The service workers and caches of the page's origin, for a timed-out wait's message.
WORKER_STATE = """async () => ({
  controller: navigator.serviceWorker.controller && navigator.serviceWorker.controller.scriptURL,
  registrations: (await navigator.serviceWorker.getRegistrations()).map((r) => ({
    installing: r.installing && r.installing.state, waiting: r.waiting && r.waiting.state,
    active: r.active && r.active.state })),
  caches: await caches.keys(),
})"""


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_url(url, seconds):
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)  # polling a server that is starting, not waiting on the page


# `mkdocs serve` builds the whole site before it answers: about 50 s on an idle
# 2-core machine, 2.5 min seen at a load average of 11. A condition, not a sleep.
DEV_BUILD_SECONDS = 600


def test_dev_server_replaces_a_production_service_worker(browser, built_site, repo_root):
    """`make dev` (mkdocs serve) on an origin where a production build left its
    service worker: the dev build's sw.js unregisters it and drops its caches,
    so edits are not hidden behind a stale precache."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}/"
    production = make_server(built_site, port)
    threading.Thread(target=production.serve_forever, daemon=True).start()
    context = browser.new_context(base_url=base, bypass_csp=True)
    dev = None
    try:
        page = context.new_page()
        page.set_default_timeout(LIVE_TIMEOUT_MS)
        page.goto("lab/")
        page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=LIVE_TIMEOUT_MS)
        assert page.evaluate("caches.keys()")
        production.shutdown()
        production.server_close()
        production = None
        dev = subprocess.Popen(
            [sys.executable, "-m", "mkdocs", "serve", "--no-livereload", "-a", f"127.0.0.1:{port}"],
            cwd=repo_root, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        assert b"registration.unregister()" in _wait_for_url(base + "sw.js", DEV_BUILD_SECONDS)
        page.goto("lab/")
        # The browser looks for a new sw.js on navigation, on its own schedule; asking for the
        # update on each poll makes the wait about our worker's work, not the browser's timing
        # (on a loaded 2-core machine the automatic check took over two minutes).
        poll(page, """async () => {
          const registrations = await navigator.serviceWorker.getRegistrations();
          await Promise.all(registrations.map((r) => r.update().catch(() => null)));
          return registrations.length === 0 && (await caches.keys()).length === 0;
        }""", timeout_ms=DEV_BUILD_SECONDS * 1000, describe=WORKER_STATE)
        page.wait_for_load_state()
        assert lab_config(page)["serviceWorker"] is None
    finally:
        context.close()
        if production is not None:
            production.shutdown()
            production.server_close()
        if dev is not None:
            dev.terminate()
            dev.wait(timeout=30)


def test_a_fetch_the_old_worker_answers_never_brings_back_its_deleted_cache(browser, built_site):
    """Once a newer worker (a new build's, or the dev server's) has deleted the site
    cache, fetches the old worker still answers must not create it again, empty:
    nothing would delete it then (the dev-server test above waits for no cache)."""
    from labsite import offline

    server = serve_in_thread(built_site)
    context = browser.new_context(base_url=f"http://127.0.0.1:{server.server_address[1]}/", bypass_csp=True)
    try:
        page = open_controlled_lab(context)
        (name,) = [k for k in page.evaluate("caches.keys()") if k.startswith(offline.CACHE_PREFIX)]
        assert page.evaluate(f"caches.delete({name!r})")
        # A page (network first) and a pinned Pyodide file (cache first), both answered by the worker.
        assert page.evaluate("Promise.all(['/', '/assets/pyodide/pyodide.mjs'].map("
                             "(url) => fetch(url).then((r) => r.status)))") == [200, 200]
        assert page.evaluate("navigator.serviceWorker.controller !== null")
        assert name not in page.evaluate("caches.keys()")
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def test_a_new_build_replaces_only_the_sites_own_cache(browser, built_site, tmp_path):
    """A rebuilt site (new sw.js version) installs a new cache and deletes the
    previous one; caches that are not the site worker's (e.g. one the page made)
    are left alone."""
    from labsite import offline

    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    server = serve_in_thread(site)
    context = browser.new_context(base_url=f"http://127.0.0.1:{server.server_address[1]}/", bypass_csp=True)
    try:
        page = open_controlled_lab(context)
        page.evaluate("caches.open('someone-else').then((c) => c.put('/x', new Response('kept')))")
        (old,) = [k for k in page.evaluate("caches.keys()") if k.startswith(offline.CACHE_PREFIX)]
        index = site / "index.html"
        index.write_text(index.read_text(encoding="utf-8").replace("</body>", '<p id="rebuilt"></p></body>'), encoding="utf-8")
        for twin in (site / "index.html.br", site / "index.html.gz"):
            twin.unlink()  # a rebuild writes new precompressed twins; this hand edit drops the stale ones
        offline.write_service_worker(site, dev=False)
        new = offline.CACHE_PREFIX + offline.precache(site)[0]
        assert new != old
        page.goto("lab/")  # the navigation makes the browser check sw.js
        poll(page, f"async () => {{ const k = await caches.keys(); return k.includes({new!r}) && !k.includes({old!r}); }}")
        assert "someone-else" in page.evaluate("caches.keys()")
        page.goto("./")
        assert page.locator("#rebuilt").count() == 1  # pages come from the network first when online
    finally:
        context.close()
        server.shutdown()
        server.server_close()
