"""Browser fixtures: the built site served on 127.0.0.1 and a real headless
Chromium (see labtools.browser for how the executable is chosen)."""
from urllib.parse import urlparse

import pytest
from playwright.sync_api import sync_playwright

from labtest import LIVE_TIMEOUT_MS
from labtools.browser import LAUNCH_ARGS, executable_path
from labtools.serve import serve_in_thread


def pytest_collection_modifyitems(items):
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def base_url(built_site):
    server = serve_in_thread(built_site)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable_path(), args=LAUNCH_ARGS, headless=True)
        yield browser
        browser.close()


class RequestLog:
    """Every URL the page asked for; the test decides what is allowed."""

    def __init__(self, base_url):
        self.origin = urlparse(base_url).netloc
        self.urls = []

    def record(self, request):
        self.urls.append(request.url)

    def other_origins(self):
        return [u for u in self.urls if urlparse(u).scheme in ("http", "https", "ws", "wss") and urlparse(u).netloc != self.origin]


@pytest.fixture
def context(browser, base_url):
    # Playwright's wait_for_function evaluates strings, which the site's
    # Content-Security-Policy forbids; tests/e2e/test_site_policy.py checks the
    # policy itself with contexts that do not bypass it.
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900}, bypass_csp=True)
    log = RequestLog(base_url)
    context.on("request", log.record)
    context.request_log = log
    yield context
    context.close()


@pytest.fixture
def page(context):
    page = context.new_page()
    page.set_default_timeout(LIVE_TIMEOUT_MS)
    return page


