"""MkDocs hooks: the site's build step.

Loaded by path from mkdocs.yml (``hooks: [build/hooks.py]``) so the folder is
never imported as a top-level ``build`` package (that name belongs to PyPA's
build frontend). Everything real lives in ``labsite``; these functions only
route MkDocs events to it.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
for path in (_HERE, _ROOT):
    if path not in sys.path:
        sys.path.insert(0, path)

from mkdocs.plugins import event_priority  # noqa: E402

from labsite import offline, site  # noqa: E402


def on_startup(command, dirty):
    # `mkdocs serve` gets a self-unregistering service worker (see labsite.offline).
    offline.set_command(command)


def on_config(config):
    site.configure(config)


def on_page_markdown(markdown, page, config, files):
    return site.render_markdown(markdown, page, config)


def on_page_content(html, page, config, files):
    return site.fill_slots(html, page)


# After mkdocs-static-i18n (-100) has built the other languages inside its own
# on_post_build, so this sees the final tree; idempotent because i18n fires it
# once per language build as well.
@event_priority(-200)
def on_post_build(config):
    site.write_assets(config)
