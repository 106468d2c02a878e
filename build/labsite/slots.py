"""HTML slots: a page's Markdown calls ``{{ slot('name') }}``; after Markdown
has run, the slot is replaced by the HTML its renderer returns. Renderers are
registered by the module that owns the page part:

    @slot_renderer("gallery")
    def render_gallery(ctx):   # ctx: SlotContext
        return ctx.env.get_template("gallery.html").render(...)
"""
from dataclasses import dataclass

_RENDERERS = {}


@dataclass
class SlotContext:
    page: object
    lang: str
    root: str
    catalog: dict
    catalogs: dict
    env: object
    state: dict

    def link(self, path):
        """URL of a page of the site in this page's language (``path`` like ``lab/``)."""
        prefix = "" if self.lang == self.state["default_lang"] else f"{self.lang}/"
        return f"{self.root}{prefix}{path}"


def slot_renderer(name):
    def register(function):
        if name in _RENDERERS:
            raise ValueError(f"slot {name!r} already has a renderer")
        _RENDERERS[name] = function
        return function

    return register


def renderer(name):
    return _RENDERERS.get(name)


def names():
    return sorted(_RENDERERS)
