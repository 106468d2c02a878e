"""The lab's view layer: turns lab_core results into the strings a page shows.

Standard library only, no I/O, like lab_core, so the very same formatting runs
at build time (CPython, precomputed pages) and in the browser (Pyodide worker):
a number on a precomputed page and the number the live lab prints for the same
input are produced by one function. Words come from a per-language catalog
passed in by the caller; nothing here contains user-facing prose.
"""
from .heap import collect_idle, collect_only_when_idle, freeze_startup_objects
from .quantities import QuantityError, format_quantity, parse_quantity
from .session import Session

__all__ = ["QuantityError", "collect_idle", "collect_only_when_idle", "format_quantity", "freeze_startup_objects",
           "parse_quantity", "Session"]
