"""The lab's scripts under content-hashed names (``lab.<sha12>.js``, ...).

A page and the scripts it runs must come from one build, so the service
worker serves unhashed scripts network first: on a repeat visit each module
of the lab's import chain (lab.js, its imports, worker.js and its import) cost
a round trip before the worker could boot. With the hash in the name a script
never changes under its URL, so the service worker and the HTTP cache answer
it at once, and a page from a new build names new files.

Each module's name hashes its text *after* its own imports are renamed, so a
change to downloads.js renames worker.js too. The sources in docs/assets/lab/
keep plain relative imports (``from "./runtime.js"``); only the built copies
are renamed, and the unhashed copies MkDocs made are removed.
"""
import hashlib
import os
import re
from pathlib import Path

from .paths import ROOT

SOURCE_DIR = ROOT / "docs" / "assets" / "lab"
SITE_DIR = "assets/lab"
_IMPORT = re.compile(r'''(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(["'])\./([\w-]+)\.js\2''')


def _sources():
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(SOURCE_DIR.glob("*.js"))}


def _imports(text):
    return {match.group(3) for match in _IMPORT.finditer(text)}


def built():
    """``{module: (hashed file name, text with renamed imports)}`` for every lab script."""
    sources = _sources()
    done = {}

    def build(name, seen=()):
        if name in done:
            return done[name]
        if name in seen:
            raise ValueError(f"import cycle through {name}.js")
        for dependency in _imports(sources[name]):
            if dependency not in sources:
                raise ValueError(f"{name}.js imports ./{dependency}.js, which docs/assets/lab/ does not have")
            build(dependency, (*seen, name))
        text = _IMPORT.sub(lambda m: f"{m.group(1)}{m.group(2)}./{done[m.group(3)][0]}{m.group(2)}", sources[name])
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        done[name] = (f"{name}.{digest}.js", text)
        return done[name]

    for name in sources:
        build(name)
    return done


def url(root, module):
    """The URL of one built lab script from a page at ``root``."""
    return f"{root}{SITE_DIR}/{built()[module][0]}"


def preloads(root, module):
    """URLs of the modules ``module`` imports, for ``<link rel="modulepreload">``:
    fetched with the page's script instead of one round trip after it."""
    return [url(root, name) for name in sorted(_imports(_sources()[module]))]


def write(site_dir):
    """Write the hashed scripts; remove the plain copies and hashed ones of earlier builds."""
    target_dir = Path(site_dir) / SITE_DIR
    target_dir.mkdir(parents=True, exist_ok=True)
    scripts = built()
    keep = {name for name, _ in scripts.values()}
    for module, (name, text) in scripts.items():
        target = target_dir / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            partial = target.with_name(f"{name}.{os.getpid()}.tmp")
            partial.write_text(text, encoding="utf-8")
            partial.replace(target)
        plain = target_dir / f"{module}.js"
        if plain.exists():
            plain.unlink()
    for stale in target_dir.glob("*.js"):
        if stale.name not in keep:
            stale.unlink()
    return scripts
