"""One build of the site, independent of the static-site generator.

``SiteBuild`` holds everything a build computes once: the Jinja2 environment,
the catalogs, the lab layout, the python zip, the validated scenarios and the
rows, rules and chapters the pages share. A page's Markdown is rendered as a
Jinja2 template in its language; ``{{ slot('name') }}`` leaves a marker that
``fill_slots`` replaces, after Markdown, with the HTML of the slot's renderer
(pages/). ``write_assets`` writes the runtime files once the pages are out.

The MkDocs hooks (build/hooks.py) make one SiteBuild per build and pass it
plain page facts (``PageRef``); nothing here imports MkDocs.
"""
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import jinja2

from . import assets, compress, offline, pages, scripts, snapshot
from .catalog import LANGUAGES, load_catalogs
from .errors import BuildError
from .jsonutil import script_json
from .labpage import load_lab_layout
from .paths import TEMPLATES
from .scenarios import load_all as load_scenario_folder
from .slots import SlotContext, renderer

_SLOT = "<!-- lab:slot:{name} -->"


@dataclass(frozen=True)
class PageRef:
    """What a build needs to know about a page: its source file, its URL
    (``lab/``, ``zh/lab/``) and its language."""

    src: str
    url: str
    lang: str

    @property
    def root(self):
        """Relative URL from the page to the site root (``../`` for ``lab/``)."""
        depth = self.url.count("/")
        return "../" * depth if depth else "./"


class SiteBuild:
    """The state of one build (both languages)."""

    def __init__(self, dev_server=False):
        self.dev_server = dev_server            # `mkdocs serve`: see labsite.offline
        self.default_lang = LANGUAGES[0]
        pages.load_all()
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATES)),
            autoescape=jinja2.select_autoescape(["html"], default_for_string=False),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
        )
        self.env.filters["script_json"] = script_json
        self.catalogs = load_catalogs()
        self.layout = load_lab_layout()
        self.pyzip = assets.python_zip_bytes()
        self.pyzip_name = assets.python_zip_name(self.pyzip)
        self.generated = {}     # {site-relative path: bytes} written by pages while rendering
        self.written = set()    # runtime files this build wrote (older ones are removed)
        self._slots = {}        # {(lang, src): slot names} between render_markdown and fill_slots
        # ``(scenarios by id, demo path ids)``: a bad scenario file stops the
        # build here, before any page is written (BuildError lists every problem).
        self.scenarios = load_scenario_folder()

    # --- what the pages share, computed once per build ------------------------

    @property
    def demo_path(self):
        by_id, steps = self.scenarios
        return [by_id[step] for step in steps]

    @cached_property
    def rules(self):
        from .pages.rules import load_rules
        return load_rules()

    @cached_property
    def assumptions(self):
        from .pages.rules import load_assumptions
        return load_assumptions()

    @cached_property
    def chapters(self):
        from .pages.tutorial import load_chapters
        return load_chapters()

    @cached_property
    def validation_rows(self):
        from .validation import page_rows, rows
        return page_rows(rows(self.scenarios[0].values()))

    # --- page events -----------------------------------------------------------

    def link(self, page, path):
        """URL of a page of the site (``lab/``) in ``page``'s language, relative to ``page``."""
        prefix = "" if page.lang == self.default_lang else f"{page.lang}/"
        return f"{page.root}{prefix}{path}"

    def render_markdown(self, markdown, page):
        """The page's Markdown rendered as a Jinja2 template in its language."""
        slots = self._slots.setdefault((page.lang, page.src), [])

        def slot(name):
            if renderer(name) is None:
                raise BuildError(page.src, f"unknown slot {name!r}")
            slots.append(name)
            return _SLOT.format(name=name)

        try:
            template = self.env.from_string(markdown)
            return template.render(t=self.catalogs[page.lang], lang=page.lang, root=page.root, slot=slot,
                                   link=lambda path: self.link(page, path))
        except jinja2.TemplateError as err:
            raise BuildError(page.src, f"{type(err).__name__}: {err}") from None

    def fill_slots(self, html, page):
        """``(html, toc entries)``: the page's slots filled; the entries
        (``[(anchor, title)]``) are headings the renderers added."""
        toc = []
        for name in self._slots.pop((page.lang, page.src), []):
            ctx = SlotContext(page=page, catalog=self.catalogs[page.lang], build=self, toc=toc)
            html = html.replace(_SLOT.format(name=name), renderer(name)(ctx))
        return html, toc

    def write_assets(self, site_dir):
        site_dir = Path(site_dir)
        assets.copy_pyodide(site_dir)
        assets.write_python_zip(site_dir, self.pyzip, self.written)
        assets.write_generated(site_dir, self.generated)
        snapshot.write(site_dir, self.written)
        scripts.write(site_dir)
        compress.compress_site(site_dir)
        # Last: the service worker's precache list is the tree as written so far.
        offline.write_service_worker(site_dir, self.dev_server)
