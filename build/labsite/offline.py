"""Offline: a hand-written service worker at the site root (``sw.js``) whose
precache list the build generates from the built tree.

- Every file the site uses is precached; a page ``x/index.html`` is stored
  under both ``x/`` and ``x/index.html``. Not precached: source maps, the
  build's precompressed ``x.br``/``x.gz`` twins (the host serves them under
  ``x``), and the search languages (lunr files) the site's search does not load.
- Nothing the visit already downloaded is downloaded again: the install takes
  the lab worker's boot files from its Cache Storage (``lab-runtime``, then
  dropped) and revalidates the rest (``cache: "no-cache"``: a file in the HTTP
  cache costs a 304, not its bytes). The cache is named by a hash of the list and
  of every file's contents, so a new build installs a new cache and, once
  active, deletes only this worker's own older caches (``lab-site-*``).
- Content-hashed files and the pinned Pyodide are served cache first; pages
  and the other files network first (a fresh build is seen at once when online,
  never mixed with scripts of an older one) and from the cache when offline.
- The lab page registers the worker once the live lab is up, so precaching
  never competes with the Pyodide boot. Other pages do not load it.
- Under ``mkdocs serve`` (``make dev``) the site gets a worker that unregisters
  itself and drops the caches instead, or edits would show stale pages; the lab
  page's config then carries no worker URL.
"""
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

SW_NAME = "sw.js"
CACHE_PREFIX = "lab-site-"
#: Files MkDocs stamps with the build date: listed, but left out of the version
#: hash, so two builds of one tree on different days give the same worker.
DATE_STAMPED = {"sitemap.xml", "sitemap.xml.gz"}

#: URL paths served cache-first: the pinned Pyodide and content-hashed names
#: (py.<sha12>.zip, snapshot.<key12>.bin.gz, python_stdlib.<sha12>.zip, Material's bundle.<hash>.min.js).
IMMUTABLE_JS = r"/\/assets\/pyodide\/|\.[0-9a-f]{8,}\.[^/]*$/"

#: The lab worker's cache of its boot downloads (docs/assets/lab/downloads.js).
RUNTIME_CACHE = "lab-runtime"
#: Precompressed twins the build writes beside a file (labsite.compress).
COMPRESSED_SUFFIXES = (".br", ".gz")

def search_languages(site_dir):
    """The languages the built search index names (its ``config.lang``): the search worker loads lunr files for these."""
    index = Path(site_dir) / "search" / "search_index.json"
    if not index.is_file():
        return ["en"]
    return json.loads(index.read_text(encoding="utf-8")).get("config", {}).get("lang") or ["en"]


def lunr_files_used(langs):
    """The lunr files Material's search worker imports for ``langs`` (its ``importScripts`` list)."""
    used = set()
    for lang in langs:
        if lang == "ja":
            used.add("tinyseg.js")
        if lang in ("hi", "th"):
            used.add("wordcut.js")
        if lang != "en":
            used.add(f"min/lunr.{lang}.min.js")
    if len(langs) > 1:
        used.add("min/lunr.multi.min.js")
    if used:
        used.add("min/lunr.stemmer.support.min.js")
    return used


def page_config(root, dev_server):
    """The worker URL the lab page registers, or None under ``mkdocs serve``."""
    return None if dev_server else f"{root}{SW_NAME}"


@lru_cache(maxsize=4096)
def _digest(path, size, mtime_ns):
    """sha256 of a file, remembered while its size and modification time stay the same."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _file_digest(path):
    stat = path.stat()
    return _digest(str(path), stat.st_size, stat.st_mtime_ns)


def _used_offline(site_dir, rel, lunr_used):
    if rel == SW_NAME or rel.endswith(".map"):
        return False
    if rel.endswith(COMPRESSED_SUFFIXES) and (site_dir / rel[:-3]).is_file():
        return False  # served in place of its twin, never under its own name
    lunr = "assets/javascripts/lunr/"
    return not rel.startswith(lunr) or rel[len(lunr):] in lunr_used


def site_files(site_dir, langs=None):
    """Every file of the built site the site uses offline (posix paths relative
    to its root): not the worker itself, source maps, precompressed twins or
    search languages ``langs`` (default: the built search index's) do not need."""
    site_dir = Path(site_dir)
    lunr_used = lunr_files_used(langs or search_languages(site_dir))
    files = []
    for path in site_dir.rglob("*"):
        if not path.is_file() or path.name.endswith(".tmp"):
            continue
        rel = path.relative_to(site_dir).as_posix()
        if _used_offline(site_dir, rel, lunr_used):
            files.append(rel)
    return sorted(files)


def url_forms(rel):
    """The URLs (relative to the site root) that serve one file."""
    if rel == "index.html":
        return ["./", "index.html"]
    if rel.endswith("/index.html"):
        return [rel[: -len("index.html")], rel]
    return [rel]


def precache(site_dir):
    """``(version, [[url, ...], ...])`` for the built tree."""
    site_dir = Path(site_dir)
    files = site_files(site_dir)
    digest = hashlib.sha256()
    for rel in files:
        content = "-" if rel.rsplit("/", 1)[-1] in DATE_STAMPED else _file_digest(site_dir / rel)
        digest.update(f"{rel}\0{content}\n".encode())
    return digest.hexdigest()[:16], [url_forms(rel) for rel in files]


_PRECACHING_WORKER = """\
// The site's service worker, generated by the build (build/labsite/offline.py).
// Precaches every file the site uses so that, after one visit, the site and the
// live lab work with the network off. Files whose URL changes with their
// content (hashed names) and the pinned Pyodide: the cache first. Everything
// else (pages, lab.js, worker.js, ...): the network first, then the cache, so
// a page from a new build never runs with scripts from an old one.
// The install downloads nothing the visit already did: the lab worker's boot
// files come from its own cache, the rest is revalidated against the HTTP cache.
const CACHE = "%(prefix)s%(version)s";
const RUNTIME = "%(runtime)s";
const IMMUTABLE = %(immutable)s;
const FILES = %(files)s;

function plain(response) {
  // A redirected response cannot answer a navigation: store a clean copy.
  if (!response.redirected) return response;
  return response.blob().then((body) => new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }));
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(FILES.map(async (forms) => {
      const url = new URL(forms[0], self.location);
      const booted = await caches.match(url, { cacheName: RUNTIME });  // reads the lab's cache, never creates it
      const response = booted || (await fetch(new Request(url, { cache: "no-cache" })));
      if (!response.ok) throw new Error(`precache ${forms[0]}: HTTP ${response.status}`);
      const body = await plain(response);
      await Promise.all(forms.map((url, i) => cache.put(new URL(url, self.location), i === forms.length - 1 ? body : body.clone())));
    }));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if ((key.startsWith("%(prefix)s") && key !== CACHE) || key === RUNTIME) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  event.respondWith((async () => {
    // caches.match with a cacheName never creates the cache, as caches.open would: a fetch this
    // worker is still answering after a newer worker (or the dev server's) deleted CACHE must not
    // bring it back, empty, for nothing to delete again.
    const cached = () => caches.match(request, { cacheName: CACHE, ignoreSearch: request.mode === "navigate",
                                                 ignoreVary: true });
    if (IMMUTABLE.test(url.pathname)) return (await cached()) || fetch(request);
    try {
      const response = await fetch(request);
      if (response.ok) return response;
      return (await cached()) || response;
    } catch (error) {
      const hit = await cached();
      if (hit) return hit;
      throw error;
    }
  })());
});
"""

_UNREGISTERING_WORKER = """\
// Written by the build under `mkdocs serve` (build/labsite/offline.py): a
// service worker left by a production build on this origin would serve stale
// pages during editing, so this one replaces it, deletes the site's caches,
// unregisters itself and reloads the pages it controlled.
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith("%(prefix)s") || key === "%(runtime)s") await caches.delete(key);
    }
    await self.registration.unregister();
    for (const client of await self.clients.matchAll({ type: "window" })) client.navigate(client.url);
  })());
});
"""


def service_worker_source(site_dir, dev):
    if dev:
        return _UNREGISTERING_WORKER % {"prefix": CACHE_PREFIX, "runtime": RUNTIME_CACHE}
    version, files = precache(site_dir)
    listing = json.dumps(files, separators=(",", ":"), ensure_ascii=False)
    return _PRECACHING_WORKER % {"prefix": CACHE_PREFIX, "version": version, "files": listing, "immutable": IMMUTABLE_JS,
                                 "runtime": RUNTIME_CACHE}


def write_service_worker(site_dir, dev):
    """Write ``sw.js`` at the site root (run last: it lists what the build wrote)."""
    target = Path(site_dir) / SW_NAME
    text = service_worker_source(site_dir, dev)
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return target
    partial = target.with_name(f"{SW_NAME}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(target)
    return target
