"""The numbers of the tutorial: every one computed by lab_core at build time.

One module per chapter registers, with ``@chapter("<id>")`` (common.py), the
function that computes chapter ``<id>`` of content/tutorial/<slug>.yaml and
returns a ``Chapter``:

- ``values``: ``{placeholder: (value, kind)}``; the chapter's prose uses
  ``{placeholder}`` and the page formats the value per language with
  lab_view.format_quantity (kinds as in lab_view.quantities, plus ``text``
  and ``case``: a conclusion chosen by the number it depends on, its words in
  the chapter file's ``cases``).
- ``workload``: the lab inputs of the chapter's running example.
- ``charts``: chart specs drawn by labsite.charts; their texts live in the
  catalogs (``tutorial.charts.<chart id>``), their data come from lab_core.

Adding a chapter adds a module here; nothing else in this package changes.
Every module of the package is imported below, so its ``@chapter`` runs.
"""
import importlib
import pkgutil

from .common import CHAPTERS, Case, Chapter, case, chapter, chapter_data, exercise

for _module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
    if _module != "common":
        importlib.import_module(f"{__name__}.{_module}")

__all__ = ["CHAPTERS", "Case", "Chapter", "case", "chapter", "chapter_data", "exercise"]
