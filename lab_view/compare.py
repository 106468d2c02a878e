"""Two plans side by side: the rows the lab's compare panel and the command
line's compare print, in the reader's words, with what differs marked.

A row is ``{"id", "group", "label", "a", "b", "differs", "better", "change"}``:
``a``/``b`` the formatted values; ``differs`` when they read differently;
``better`` "a", "b" or None (rows with a direction: less memory or time, more
MFU or throughput, a lower meter level); ``change`` B against A in words
("12% lower") for numeric rows, else "".
"""
from html import escape

from lab_core.planner.meters import METERS

from .plural import counted
from .quantities import format_quantity
from .view import recompute_text

LOWER, HIGHER = "lower", "higher"
_LEVEL_RANK = {"none": -1, "ok": 0, "warn": 1, "critical": 2}

# (id, group, where in (plan, report), format kind, which way is better)
NUMBER_ROWS = (
    ("memory_total", "memory", ("report", "memory", "total_bytes"), "bytes", LOWER),
    ("memory_weights", "memory", ("report", "memory", "weights_bytes"), "bytes", LOWER),
    ("memory_gradients", "memory", ("report", "memory", "gradients_bytes"), "bytes", LOWER),
    ("memory_optimizer", "memory", ("report", "memory", "optimizer_bytes"), "bytes", LOWER),
    ("memory_activations", "memory", ("report", "memory", "activations_bytes"), "bytes", LOWER),
    ("step", "time", ("report", "time", "step_s"), "duration", LOWER),
    ("mfu", "time", ("report", "throughput", "mfu"), "percent", HIGHER),
    ("tokens_per_s", "time", ("report", "throughput", "tokens_per_s"), "tokens_per_s", HIGHER),
    ("time_to_train", "time", ("plan", "checkpoint", "train_time_with_failures_s"), "duration", LOWER),
    ("gpu_hours", "time", ("report", "training", "gpu_hours_with_failures"), "params", LOWER),
)
LAYOUT_ROWS = ("gpus", "tp", "cp", "pp", "dp", "ep", "zero", "recompute", "sequence_parallel", "micro_batch",
               "interleave")


def _get(side, path):
    node = side
    for key in path:
        node = None if node is None else node.get(key)
    return node


def _layout_value(name, side, catalog):
    plan = side["plan"]
    par = plan["parallelism"]
    terms = catalog["lab"]["terms"]
    if name == "gpus":
        return format_quantity(plan["gpus"]["used"], "count", catalog["units"])
    if name == "recompute":
        # With Megatron-Core's modules named, so two states that differ only in them show it.
        return recompute_text(par, side.get("workload") or {}, catalog)
    if name == "sequence_parallel":
        return terms["yes" if par["sequence_parallel"] else "no"]
    return format_quantity(par.get(name, 1), "count", catalog["units"])


def _change(a, b, direction, texts, units):
    if a is None or b is None or not a or a == b:
        return "", None
    ratio = b / a - 1.0
    words = texts["change_higher"] if ratio > 0 else texts["change_lower"]
    better = "b" if (ratio < 0) == (direction == LOWER) else "a"
    return words.format(n=format_quantity(abs(ratio), "percent", units)), better


def compare_rows(a, b, catalog):
    """``a``/``b``: {"plan": plan_json()["plan"], "report": its report}; the rows in display order."""
    texts, units, labels = catalog["compare"], catalog["units"], catalog["compare"]["rows"]
    rows = []
    for name in LAYOUT_ROWS:
        if name in ("cp", "ep") and a["plan"]["parallelism"].get(name, 1) == b["plan"]["parallelism"].get(name, 1) == 1:
            continue
        va, vb = _layout_value(name, a, catalog), _layout_value(name, b, catalog)
        rows.append({"id": name, "group": "layout", "label": labels[name], "a": va, "b": vb, "differs": va != vb,
                     "better": None, "change": ""})
    for row_id, group, path, kind, direction in NUMBER_ROWS:
        ra, rb = _get(a, path), _get(b, path)
        va = texts["none"] if ra is None else format_quantity(ra, kind, units)
        vb = texts["none"] if rb is None else format_quantity(rb, kind, units)
        change, better = _change(ra, rb, direction, texts, units) if va != vb else ("", None)
        rows.append({"id": row_id, "group": group, "label": labels[row_id], "a": va, "b": vb, "differs": va != vb,
                     "better": better, "change": change})
    for name in METERS:
        ma, mb = a["plan"]["meters"][name], b["plan"]["meters"][name]
        va, vb = catalog["meter_levels"][ma["label"]], catalog["meter_levels"][mb["label"]]
        ranks = _LEVEL_RANK[ma["level"]], _LEVEL_RANK[mb["level"]]
        better = None if ranks[0] == ranks[1] else ("a" if ranks[0] < ranks[1] else "b")
        rows.append({"id": f"meter_{name}", "group": "meters", "label": catalog["meter_labels"][name], "a": va,
                     "b": vb, "differs": va != vb, "better": better, "change": ""})
    return rows


def _cell(value, row, side, texts):
    mark = f' <span class="cmp-better">{escape(texts["better"])}</span>' if row["better"] == side else ""
    cls = ' class="cmp-win"' if row["better"] == side else ""
    return f"<td{cls}>{escape(value)}{mark}</td>"


def compare_html(rows, catalog, titles):
    """The compare table; ``titles``: the A and B column headings."""
    texts = catalog["compare"]
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in (texts["columns"]["what"], titles[0], titles[1],
                                                                texts["columns"]["change"]))
    body = []
    for group in ("layout", "memory", "time", "meters"):
        body.append(f'<tr class="cmp-group"><th scope="rowgroup" colspan="4">{escape(texts["groups"][group])}</th></tr>')
        for row in (r for r in rows if r["group"] == group):
            cls = ' class="cmp-differs"' if row["differs"] else ""
            body.append(f'<tr{cls} data-row="{escape(row["id"])}"><th scope="row">{escape(row["label"])}</th>'
                        f'{_cell(row["a"], row, "a", texts)}{_cell(row["b"], row, "b", texts)}'
                        f'<td>{escape(row["change"])}</td></tr>')
    return f'<table class="cmp-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def compare_summary(rows, catalog):
    """One sentence: how many rows differ (the table carries the detail)."""
    texts = catalog["compare"]
    differing = [r for r in rows if r["differs"]]
    if not differing:
        return texts["same"]
    names = texts["separator"].join(r["label"] for r in differing)
    return counted(texts["differ"], len(differing), n=len(differing), rows=names)
