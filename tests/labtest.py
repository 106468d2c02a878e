"""Helpers shared by test folders (import as ``from labtest import ...``).

A plain module rather than conftest.py: several folders have their own
conftest, and ``from conftest import`` would pick whichever was imported last.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from labsite.catalog import LANGUAGES

ROOT = Path(__file__).resolve().parents[1]
# Left out of a copy of the tree: generated, installed, or not part of the site.
_NOT_COPIED = {".git", ".venv", "node_modules", "site", ".pytest_cache", ".hypothesis", ".stamps", "__pycache__",
               "tests", "bench"}

#: Pyodide boots in about 4 s on two idle cores; CI may be loaded.
LIVE_TIMEOUT_MS = 120_000


def build_site(target, source_root=ROOT):
    """Run a strict MkDocs build of ``source_root`` into ``target``; return the CompletedProcess."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = Path(sys.executable).with_name("mkdocs")
    command = [str(mkdocs)] if mkdocs.exists() else [sys.executable, "-m", "mkdocs"]
    return subprocess.run(
        [*command, "build", "--strict", "--quiet", "--site-dir", str(target)],
        cwd=source_root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def language_dir(site, lang):
    """Where a language's pages are in a built site: the default language at the root, others under it."""
    return site if lang == LANGUAGES[0] else site / lang


def page_html(site, lang, path):
    """A built page's HTML (``path`` like ``lab/index.html``) in ``lang``."""
    return (language_dir(site, lang) / path).read_text(encoding="utf-8")


def copy_tree(target):
    """A copy of the repository at ``target`` to build with changes (node_modules linked, not copied)."""
    def ignore(folder, names):
        return [n for n in names if n in _NOT_COPIED or n.endswith(".pyc")]

    shutil.copytree(ROOT, target, ignore=ignore, symlinks=True)
    os.symlink(ROOT / "node_modules", target / "node_modules")
    return target


def wait_live(page):
    page.wait_for_function("document.getElementById('lab-app').dataset.labState === 'live'", timeout=LIVE_TIMEOUT_MS)


def wait_applied(page, seq):
    page.wait_for_function(f"Number(document.getElementById('lab-app').dataset.appliedSeq || 0) >= {seq}", timeout=LIVE_TIMEOUT_MS)


def requested(page):
    return int(page.get_attribute("#lab-app", "data-requested-seq") or 0)


def settle(page, after=0):
    """Wait until the newest request (newer than ``after``) has been answered."""
    page.wait_for_function(
        """(after) => { const d = document.getElementById('lab-app').dataset;
            const r = Number(d.requestedSeq || 0); return r > after && Number(d.appliedSeq || 0) === r; }""",
        arg=after, timeout=LIVE_TIMEOUT_MS)
