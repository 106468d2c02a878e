"""Helpers shared by test folders (import as ``from labtest import ...``).

A plain module rather than conftest.py: several folders have their own
conftest, and ``from conftest import`` would pick whichever was imported last.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from lab_view.chinese import CJK
from labsite.catalog import LANGUAGES

ROOT = Path(__file__).resolve().parents[1]
# Left out of a copy of the tree: generated, installed, or not part of the site.
_NOT_COPIED = {".git", ".venv", "node_modules", "site", ".pytest_cache", ".hypothesis", ".stamps", "__pycache__",
               "tests", "bench"}

#: Pyodide boots in about 4 s on two idle cores; CI may be loaded.
LIVE_TIMEOUT_MS = 120_000


def spaces_between_chinese(texts):
    """Each place in ``texts`` where a space stands between two CJK characters (with a little context)."""
    pattern = re.compile(f".{{0,8}}[{CJK}] [{CJK}].{{0,8}}")
    return [match.group(0) for text in texts for match in pattern.finditer(text)]


def strings_in(node):
    """Every string in a tree of dicts and lists loaded from YAML or JSON."""
    if isinstance(node, dict):
        for value in node.values():
            yield from strings_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings_in(value)
    elif isinstance(node, str):
        yield node


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


def wait_opaque(page):
    """Wait until no result panel is dimmed: an answer that took a while marks them pending
    (lab.css fades them, and back over 0.2 s), which axe would judge as low contrast."""
    page.wait_for_function("""() => {
      const lab = document.getElementById('lab-app');
      return !('pending' in lab.dataset) && !('stale' in lab.dataset)
        && [...lab.querySelectorAll('.lab-shape, .lab-meters, .lab-plan, .lab-why, .lab-rules')]
          .every((panel) => getComputedStyle(panel).opacity === '1');
    }""")


def open_lab(browser, base_url, path, viewport, permissions=(), init_script=None):
    """A new context and page at ``path``, once the live lab has answered the link: (context, page).
    The context bypasses the site's CSP (Playwright's waits evaluate strings); ``permissions`` are
    granted to the site's origin (e.g. the clipboard); ``init_script`` runs before the page's own."""
    context = browser.new_context(base_url=base_url, viewport=viewport, bypass_csp=True)
    if init_script:
        context.add_init_script(init_script)
    if permissions:
        context.grant_permissions(list(permissions), origin=base_url.rstrip("/"))
    page = context.new_page()
    page.set_default_timeout(LIVE_TIMEOUT_MS)
    page.goto(path)
    wait_live(page)
    page.wait_for_function("!document.getElementById('lab-app').dataset.linkPending")
    settle(page)
    return context, page
