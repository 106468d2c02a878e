"""HTML slots: a page's Markdown calls ``{{ slot('name') }}``; after Markdown
has run, the slot is replaced by the HTML its renderer returns. Renderers are
registered by the module that owns the page part:

    @slot_renderer("gallery")
    def render_gallery(ctx):   # ctx: SlotContext
        return ctx.env.get_template("gallery.html").render(...)
"""
from .registry import registrar

_RENDERERS = {}


class SlotContext:
    """A slot being rendered: its page (labsite.site.PageRef) and language, the
    page's catalog, the build (shared state: ``env``, ``catalogs``, ...) and
    the headings the slot adds to the page's table of contents."""

    def __init__(self, page, catalog, build, toc):
        self.page, self.catalog, self.build, self.toc = page, catalog, build, toc
        self.lang, self.root = page.lang, page.root
        self.env, self.catalogs = build.env, build.catalogs

    def link(self, path):
        """URL of a page of the site in this page's language (``path`` like ``lab/``)."""
        return self.build.link(self.page, path)

    def add_to_toc(self, entries):
        """Headings the slot adds to the page's table of contents: ``[(anchor, title)]``."""
        self.toc.extend(entries)


#: ``@slot_renderer("name")``: register the function that renders slot ``name``.
slot_renderer = registrar(_RENDERERS, "slot")


def renderer(name):
    return _RENDERERS.get(name)


def names():
    return sorted(_RENDERERS)
