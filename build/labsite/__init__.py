"""The site build: renders bilingual pages from templates + data, computes every
number with lab_core/lab_view, and ships the lab's runtime assets.

    build = SiteBuild()                                  # validates the content
    text = build.render_markdown(markdown, PageRef("lab.md", "lab/", "en"))
    html, headings = build.fill_slots(html_from_markdown, page)
    build.write_assets(site_dir)

Errors in the content raise ``BuildError`` naming the file and what is wrong.
"""
from .errors import BuildError
from .site import PageRef, SiteBuild

__all__ = ["BuildError", "PageRef", "SiteBuild"]
