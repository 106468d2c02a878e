"""Counted labels in the reader's language.

A catalog entry for a counted label is either one string (languages without
grammatical number, such as Chinese) or ``{"one": ..., "other": ...}``
(English: "1 replica", "8 replicas"). The rule that picks a form is the
CLDR one for English (``one`` for exactly 1); a language with more forms
adds its keys and its rule here.
"""


def plural_form(entry, count):
    """The template of ``entry`` for ``count``."""
    if isinstance(entry, str):
        return entry
    return entry["one"] if count == 1 and "one" in entry else entry["other"]


def counted(entry, count, **values):
    """``entry`` for ``count``, filled with ``values`` (``n`` is the formatted count)."""
    return plural_form(entry, count).format(**values)
