"""The built site's offline support and the lab's boot snapshot: the service
worker at the root precaches every built file, and the snapshot each lab page
names is the one shipped, with a matching digest and size."""
import hashlib
import json
import re
from urllib.parse import urljoin

import pytest

from labsite import offline
from labsite.catalog import LANGUAGES
from labtest import language_dir

_FILES = re.compile(r"^const FILES = (\[.*\]);$", re.M)
_CACHE = re.compile(r'^const CACHE = "(lab-site-[0-9a-f]+)";$', re.M)
_CONFIG = re.compile(r'<script type="application/json" id="lab-config">(.*?)</script>', re.S)


def precache_urls(site):
    text = (site / "sw.js").read_text(encoding="utf-8")
    return json.loads(_FILES.search(text).group(1))


def lab_config(site, lang):
    page = language_dir(site, lang) / "lab/index.html"
    return page, json.loads(_CONFIG.search(page.read_text(encoding="utf-8")).group(1))


def test_service_worker_sits_at_the_site_root(built_site):
    text = (built_site / "sw.js").read_text(encoding="utf-8")
    assert _CACHE.search(text)
    assert "importScripts" not in text and "http://" not in text and "https://" not in text


def test_precache_covers_every_built_file_in_both_url_forms(built_site):
    groups = precache_urls(built_site)
    urls = {url for group in groups for url in group}
    files = {p.relative_to(built_site).as_posix() for p in built_site.rglob("*") if p.is_file()} - {"sw.js"}
    assert {group[-1] for group in groups} == files
    for rel in files:
        assert rel in urls
        if rel.endswith("index.html"):
            assert (rel[: -len("index.html")] or "./") in urls
    for needed in ("./", "lab/", "zh/lab/", "assets/pyodide/pyodide.asm.wasm", "assets/lab/worker.js"):
        assert needed in urls
    assert "sw.js" not in urls


def test_precache_version_follows_contents(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a/index.html").write_text("one", encoding="utf-8")
    (tmp_path / "index.html").write_text("home", encoding="utf-8")
    version, groups = offline.precache(tmp_path)
    assert groups == [["a/", "a/index.html"], ["./", "index.html"]]
    assert offline.precache(tmp_path)[0] == version
    (tmp_path / "a/index.html").write_text("two", encoding="utf-8")
    assert offline.precache(tmp_path)[0] != version
    offline.write_service_worker(tmp_path, dev=False)
    assert (tmp_path / "sw.js").exists()
    assert offline.precache(tmp_path)[1] == groups  # the worker does not list itself


def test_dev_server_gets_a_self_unregistering_worker(tmp_path):
    (tmp_path / "index.html").write_text("home", encoding="utf-8")
    text = offline.service_worker_source(tmp_path, dev=True)
    assert "registration.unregister()" in text and "FILES" not in text and "fetch" not in text
    assert offline.page_config("../", dev_server=True) is None
    assert offline.page_config("../", dev_server=False) == "../sw.js"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lab_page_names_the_shipped_snapshot_and_its_digest(built_site, lang):
    page, config = lab_config(built_site, lang)
    snapshot = config["snapshot"]
    rel = urljoin(page.relative_to(built_site).as_posix(), snapshot["url"])
    data = (built_site / rel).read_bytes()
    assert hashlib.sha256(data).hexdigest() == snapshot["sha256"]
    assert len(data) == snapshot["bytes"]
    assert data[:2] == b"\x1f\x8b"  # gzip
    assert config["serviceWorker"] == config["root"] + "sw.js"
    assert urljoin(page.relative_to(built_site).as_posix(), config["serviceWorker"]) == "sw.js"
    assert len(list((built_site / "assets/lab").glob("snapshot.*.bin.gz"))) == 1
