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


def _leftover_reason(site, rel):
    """Why a built file is not precached, or None."""
    if rel.endswith(".map"):
        return "source map"
    if rel.endswith((".br", ".gz")) and (site / rel[:-3]).is_file():
        return "precompressed twin"
    if rel.startswith("assets/javascripts/lunr/"):
        return "search language the site does not use"
    return None


def test_precache_covers_every_file_the_site_uses_in_both_url_forms(built_site):
    groups = precache_urls(built_site)
    urls = {url for group in groups for url in group}
    files = {p.relative_to(built_site).as_posix() for p in built_site.rglob("*") if p.is_file()} - {"sw.js"}
    precached = {group[-1] for group in groups}
    assert precached <= files
    for rel in files - precached:
        assert _leftover_reason(built_site, rel), f"{rel} is neither precached nor left out for a reason"
    for rel in precached:
        if rel.endswith("index.html"):
            assert (rel[: -len("index.html")] or "./") in urls
    for needed in ("./", "lab/", "zh/lab/", "assets/pyodide/pyodide.asm.wasm", "search/search_index.json",
                   "assets/javascripts/lunr/min/lunr.zh.min.js", "assets/javascripts/lunr/min/lunr.multi.min.js",
                   "assets/javascripts/lunr/min/lunr.stemmer.support.min.js"):
        assert needed in urls
    assert any(u.startswith("assets/pyodide/python_stdlib.") for u in urls)
    for module in ("lab", "progress", "runtime", "worker", "downloads"):
        assert any(re.fullmatch(rf"assets/lab/{module}\.[0-9a-f]{{12}}\.js", u) for u in urls), module
    assert any(u.startswith("assets/lab/snapshot.") for u in urls)
    assert "sw.js" not in urls
    assert not (built_site / "sw.js.br").exists() and not (built_site / "sw.js.gz").exists()  # always the fresh worker


def test_precache_leaves_out_maps_twins_and_unused_search_languages(built_site):
    urls = {url for group in precache_urls(built_site) for url in group}
    assert not [u for u in urls if u.endswith(".map")]
    assert not [u for u in urls if u.endswith(".br")]
    assert "assets/pyodide/pyodide.asm.wasm.gz" not in urls and (built_site / "assets/pyodide/pyodide.asm.wasm.gz").exists()
    assert "assets/javascripts/lunr/wordcut.js" not in urls and "assets/javascripts/lunr/tinyseg.js" not in urls
    assert "assets/javascripts/lunr/min/lunr.de.min.js" not in urls
    assert "assets/pyodide/pyodide-lock.json" not in urls and "assets/pyodide/python_stdlib.zip" not in urls


def test_lunr_files_follow_the_search_languages():
    assert offline.lunr_files_used(["en"]) == set()
    assert offline.lunr_files_used(["en", "zh"]) == {"min/lunr.zh.min.js", "min/lunr.multi.min.js", "min/lunr.stemmer.support.min.js"}
    assert "tinyseg.js" in offline.lunr_files_used(["ja"]) and "wordcut.js" in offline.lunr_files_used(["th"])


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
    snapshot = config["boot"]["snapshot"]
    rel = urljoin(page.relative_to(built_site).as_posix(), snapshot["url"])
    data = (built_site / rel).read_bytes()
    assert hashlib.sha256(data).hexdigest() == snapshot["sha256"]
    assert len(data) == snapshot["bytes"]
    assert data[:2] == b"\x1f\x8b"  # gzip
    assert config["serviceWorker"] == config["root"] + "sw.js"
    assert urljoin(page.relative_to(built_site).as_posix(), config["serviceWorker"]) == "sw.js"
    assert len(list((built_site / "assets/lab").glob("snapshot.*.bin.gz"))) == 1
