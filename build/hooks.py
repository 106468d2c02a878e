"""MkDocs hooks: the only MkDocs-specific code of the build.

Loaded by path from mkdocs.yml (``hooks: [build/hooks.py]``) so the folder is
never imported as a top-level ``build`` package (that name belongs to PyPA's
build frontend). Everything real lives in ``labsite`` (installed with the
project: ``pip install -e .``): these functions make one ``labsite.SiteBuild``
per build, hand it plain page facts, put the headings its slots add into
MkDocs' table of contents, and turn the build's own errors (a bad scenario
file, a missing translation) into MkDocs' error type, so a failed build says
what is wrong in one message instead of a traceback. ARCHITECTURE.md says
what moving to another generator would take.
"""
import logging
from contextlib import contextmanager

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.toc import AnchorLink

from labsite import BuildError, PageRef, SiteBuild
from labsite.catalog import LANGUAGES

_command = None     # the MkDocs command: build, serve, gh-deploy
_build = None       # the SiteBuild of the build under way


class _ToMkDocsLog(logging.Handler):
    """labsite logs under ``labsite``; MkDocs shows (and --strict counts) its own logger's records."""

    def emit(self, record):
        target = logging.getLogger("mkdocs.hooks.labsite")
        if target.isEnabledFor(record.levelno):
            target.handle(record)


logging.getLogger("labsite").addHandler(_ToMkDocsLog())
logging.getLogger("labsite").setLevel(logging.DEBUG)  # MkDocs' own level decides (--quiet, --verbose)


@contextmanager
def _reported():
    try:
        yield
    except BuildError as err:
        raise PluginError(str(err)) from None


def _i18n(config):
    return config["plugins"].get("i18n")


def _check_languages(config):
    """The site's languages are labsite's (catalogs, page twins, data files)."""
    i18n = _i18n(config)
    configured = [language.locale for language in i18n.config.languages] if i18n else [LANGUAGES[0]]
    if configured != list(LANGUAGES):
        raise BuildError("mkdocs.yml", f"plugins.i18n.languages: {', '.join(configured)} "
                                       f"(allowed: {', '.join(LANGUAGES)}, the default first)")


def _page(page):
    return PageRef(src=page.file.src_uri, url=page.url, lang=getattr(page.file, "locale", None) or LANGUAGES[0])


def on_startup(command, dirty):
    global _command
    _command = command


def on_config(config):
    # mkdocs-static-i18n builds each further language inside its own
    # on_post_build, which runs on_config again: keep the build's state then.
    global _build
    i18n = _i18n(config)
    if _build is None or not (i18n and i18n.building):
        with _reported():
            _check_languages(config)
            _build = SiteBuild(dev_server=_command == "serve")


def on_page_markdown(markdown, page, config, files):
    with _reported():
        return _build.render_markdown(markdown, _page(page))


def on_page_content(html, page, config, files):
    with _reported():
        html, headings = _build.fill_slots(html, _page(page))
    toc = page.toc.items[0].children if page.toc.items else None
    if toc is not None:
        known = {link.id for link in toc}
        toc.extend(AnchorLink(title, anchor, 2) for anchor, title in headings if anchor not in known)
    return html


# After mkdocs-static-i18n (-100) has built the other languages inside its own
# on_post_build, so this sees the final tree; idempotent because i18n fires it
# once per language build as well.
@event_priority(-200)
def on_post_build(config):
    with _reported():
        _build.write_assets(config["site_dir"])
