"""The lab's answer as plain text, for the command line (python -m lab_core plan / compare).

The same words as the page: the view Session.evaluate made, the decisions
and alternatives of lab_view.view and the compare rows of lab_view.compare;
only the layout is text (headings, indented lines, aligned columns).
"""
import unicodedata

from .bars import memory_parts, time_parts
from .chinese import tighten
from .view import FIGURE_KEYS, PLAN_KEYS, alternative_items, decision_items

INDENT = "  "


def _width(text):
    """Display columns of ``text`` in a terminal: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _pad(text, width):
    return text + " " * max(0, width - _width(text))


def _pairs(pairs):
    width = max((_width(label) for label, _ in pairs), default=0)
    return [f"{INDENT}{_pad(label, width)}  {value}" for label, value in pairs]


def plan_text(result, plan, catalog):
    """``result``: Session.evaluate() output; ``plan``: the plan_json() result it came from."""
    view, texts, lab = result["view"], catalog["cli"], catalog["lab"]
    # Sentences put together here are spaced as the page spaces them (lab_view.chinese); the
    # padded columns of _pairs are not (their padding would read as spaces between words).
    said = lambda label, value: tighten(texts["labelled"].format(label=label, value=value))  # noqa: E731
    head = lambda title: texts["heading"].format(title=title)  # noqa: E731
    report = plan["plan"]["report"]
    lines = [said(texts["shape"], view["stage"]["title"]), view["stage"]["text"]]
    if view["preset"]["source"]:
        lines.append(said(texts["model"], catalog["presets"]["names"][view["preset"]["id"]]))
        lines.append(INDENT + view["preset"]["source"])
    if not view["plan"]["fits"]:
        lines.append(view["plan"]["nofit"])
    lines += ["", head(lab["plan_title"])]
    lines += _pairs([(lab["plan"][key], view["plan"]["items"][key]) for key in PLAN_KEYS])
    summary, parts = memory_parts(report["memory"], lab["bars"], catalog["units"])
    lines += ["", said(lab["memory_title"], summary)] + _pairs([(name, amount) for _, name, amount in parts])
    summary, parts = time_parts(report["time"], lab["bars"], catalog["units"], report["parallelism"]["recompute"])
    lines += ["", said(lab["time_title"], summary)] + _pairs([(name, amount) for _, name, amount in parts])
    lines += ["", head(texts["figures"])] + _pairs([(lab["figures"][key], view["figures"][key]) for key in FIGURE_KEYS])
    lines += ["", head(lab["bottlenecks"])]
    lines += _pairs([(catalog["meter_labels"][name], said(meter["level_text"], meter["text"]))
                     for name, meter in view["meters"].items()])
    lines += ["", head(lab["why_title"])]
    for item in decision_items(plan["plan"], catalog):
        lines += [INDENT + said(item["title"], item["choice"]), INDENT * 2 + tighten(item["why"])]
    alternatives = alternative_items(plan["plan"], catalog)
    lines += ["", head(lab["alternatives_title"])]
    if not alternatives:
        lines.append(INDENT + lab["alternatives"]["none"])
    for item in alternatives:
        lines += [INDENT + said(item["label"], item["layout"]), INDENT * 2 + tighten(item["why"])]
    for note in result.get("notes", ()):
        lines += ["", note["text"]]
    return "\n".join(lines) + "\n"


def compare_text(compare, catalog):
    """The compare rows (Session.evaluate()["compare"]) as a table with a marker on rows that differ."""
    texts = catalog["compare"]
    if not compare["ok"]:
        return compare["summary"] + "\n"
    rows = compare["rows"]
    head = ("", texts["columns"]["a"], texts["columns"]["b"], texts["columns"]["change"])
    cells = [head] + [(("≠ " if r["differs"] else "  ") + r["label"],
                       r["a"] + (" *" if r["better"] == "a" else ""),
                       r["b"] + (" *" if r["better"] == "b" else ""), r["change"]) for r in rows]
    widths = [max(_width(row[i]) for row in cells) for i in range(4)]
    lines, group = [], None
    for row, source in zip(cells, [None] + rows):
        if source is not None and source["group"] != group:
            group = source["group"]
            lines.append(catalog["cli"]["heading"].format(title=texts["groups"][group]))
        lines.append("  ".join(_pad(cell, widths[i]) for i, cell in enumerate(row)).rstrip())
    lines += ["", compare["summary"], catalog["cli"]["better_mark"].format(better=texts["better"])]
    return "\n".join(lines) + "\n"
