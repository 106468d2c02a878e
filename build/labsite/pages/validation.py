"""The "model vs published runs" page: the rows of the validation table
(labsite.validation) that have a page entry, each predicted figure next to the
published one and the error, computed at build time."""
import re

from ..slots import slot_renderer
from ..folding import cjk_tidy
from ..validation import SUMMARY_LINES, end_to_end_rows, end_to_end_runs, summary
from ..validation.accuracy import MIN_RUNS, quoted_run_kinds
from ..validation.repeats import repeated_runs, spread_summary
from lab_view.accuracy import kind_parts


def number(value):
    """Stable number text for the table: 4 significant digits, grouped thousands."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    text = f"{value:.4g}"
    if "e" in text:
        text = f"{value:.4f}".rstrip("0").rstrip(".")
    return text


def signed(value):
    text = f"{value:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def row_view(row, lang, catalog):
    texts = catalog["validation"]
    entry = row.page
    label = dict(entry.label)
    if "mode" in label:
        label["mode"] = texts["modes"][label["mode"]]
    if "run" in label:
        label["run"] = label["run_zh"] if lang == "zh" else label["run"]
    if "gpus" in label:
        label["gpus"] = f"{label['gpus']:,}"
    if "seq_len" in label:
        label["seq"] = f"{label['seq_len'] // 1024:,}K" if label["seq_len"] % 1024 == 0 else f"{label['seq_len']:,}"
    # A row's layout names CP and EP where the run uses them (a label's GPUs are tp x cp x pp x dp).
    label["extras"] = "".join(texts["layout_extras"][dim].format(**{dim: f"{label[dim]:,}"})
                              for dim in ("cp", "ep") if (label.get(dim) or 1) > 1)
    quantity = texts["quantities"][entry.quantity].format(**label)
    note = texts["notes"][entry.note] if entry.note else (entry.note_text or {}).get(lang, "")
    return {
        "group": entry.group, "quantity": quantity, "source": entry.source, "url": entry.url,
        "predicted": number(row.predicted), "published": number(row.published),
        "unit": texts["units"][entry.unit], "error": signed(row.error), "abs_error": abs(row.error),
        "kind": row.kind, "kind_label": texts["kinds"][row.kind], "note": note,
        "error_value": row.error, "model": label.get("model"), "gpus": entry.label.get("gpus"),
        "variants": entry.variants,
    }


# A note's figures, computed from the rows it is under (fill_note).
_NOTE_FIGURE = re.compile(r"\{(err|range|most):([+\-±])([^}]*)\}")


def fill_note(note, rows, where):
    """The note with its figures taken from `rows` (the rows it is under), so no
    error is typed by hand: {err:+MODEL} or {err:-MODEL@GPUS}, the error of that
    row in whole percent; {range:+} the least to the most of the rows' errors
    ("13–20"), or of a model's rows with {range:+MODEL}; {most:+} the largest of
    the rows that miss that way. A ~VARIANT suffix ({range:+~per_node}) takes the
    rows' errors re-run with that variant of their group's settings (end_to_end.yaml
    `variants`: the what-ifs a note quotes). The sign says which way the prose has
    the lab miss (+: the lab's figure above the published one, -: below, ±:
    either); a row that misses the other way, a MODEL that names no row (or
    several, for err) or a variant the group lacks stops the build with the
    note's place (where) and its placeholder."""
    def figure(match):
        kind, sign, key = match.groups()
        key, _, variant = key.partition("~")
        model, _, gpus = key.partition("@")

        def error(row):
            if not variant:
                return row["error_value"]
            if variant not in (row.get("variants") or {}):
                raise ValueError(f"validation note {where}: {match.group(0)}: the group has no variant "
                                 f"'{variant}' (end_to_end.yaml: variants)")
            return row["variants"][variant]
        chosen = [row for row in rows if (not model or row["model"] == model)
                  and (not gpus or str(row["gpus"]) == gpus)
                  and (kind != "most" or sign == "±" or (error(row) > 0) == (sign == "+"))]
        if not chosen or kind == "err" and len(chosen) > 1:
            raise ValueError(f"validation note {where}: {match.group(0)} names {len(chosen)} rows (one or more: "
                             "MODEL as in end_to_end.yaml, @GPUS to tell its rows apart)")
        for row in chosen:
            if sign != "±" and (error(row) > 0) != (sign == "+"):
                raise ValueError(f"validation note {where}: {match.group(0)} says the lab misses "
                                 f"{'above' if sign == '+' else 'below'} the published figure, but "
                                 f"{row['model']} on {row['gpus']} GPUs is {signed(error(row))}%"
                                 + (f" with {variant}" if variant else ""))
        values = sorted(round(abs(error(row))) for row in chosen)
        if kind == "range" and values[0] != values[-1]:
            return f"{values[0]}–{values[-1]}"
        return str(values[-1])
    return _NOTE_FIGURE.sub(figure, note)


def _repeat_settings(repeat, texts):
    """What a repeated run's label leaves out (two repeated runs may share a label: one
    table's rows with and without an option): its global batch, precision and, with
    tensor parallelism, whether its collectives are overlapped."""
    workload = repeat.runs[0].workload()
    named = [texts["batch"].format(batch=f"{repeat.spec['batch']:,}"), texts[workload.precision]]
    if repeat.spec["tp"] > 1:
        named.append(texts["tp_overlap_on" if workload.tp_comm_overlap else "tp_overlap_off"])
    return texts["separator"].join(named)


def repeats_view(lang, catalog, runs=None):
    """The runs published more than once (validation.repeats) as the page's table shows
    them, and their spread as {"median", "largest", "runs"} texts; ([], None) when no run repeats."""
    repeats = repeated_runs(end_to_end_runs() if runs is None else runs)
    spreads = spread_summary(repeats)
    if spreads is None:
        return [], None
    texts = catalog["validation"]
    out = []
    for repeat in repeats:
        row = row_view(end_to_end_rows(repeat.runs[:1])[0], lang, catalog)
        out.append({"quantity": row["quantity"], "settings": _repeat_settings(repeat, texts["repeats_settings"]),
                    "low": number(repeat.low), "high": number(repeat.high),
                    "spread": f"{repeat.spread_percent:.1f}", "count": len(repeat.runs),
                    "groups": [{"id": gid, "title": texts["groups"][gid]} for gid in repeat.groups]})
    return out, {"median": f"{spreads[0]:.1f}", "largest": f"{spreads[1]:.1f}", "runs": len(repeats)}


def run_kinds_view(catalog, kinds=None):
    """The kinds of run the lab quotes under its figures (validation.accuracy), as the page's
    table shows them; a broader kind with the very runs of one listed before it is left out."""
    texts = catalog["lab"]["accuracy"]
    out, seen = [], set()
    for kind in quoted_run_kinds() if kinds is None else kinds:
        figures = (kind.runs, kind.median, kind.bound, kind.bias)
        if figures in seen:
            continue
        seen.add(figures)
        stack, model, gpus = kind_parts(kind.to_dict(), texts)
        out.append({"stack": stack, "model": model, "gpus": gpus, "runs": kind.runs, "median": f"{100 * kind.median:.1f}",
                    "bound": f"{100 * kind.bound:.1f}", "bias": signed(100 * kind.bias)})
    return out


@slot_renderer("validation")
def render_validation(ctx):
    if ctx.lang == "zh":
        ctx.catalog = dict(ctx.catalog, validation=cjk_tidy(ctx.catalog["validation"]))
    all_rows = ctx.build.validation_rows
    views = [row_view(row, ctx.lang, ctx.catalog) for row in all_rows]
    groups = []
    for row in views:
        if not groups or groups[-1]["id"] != row["group"]:
            groups.append({"id": row["group"], "title": ctx.catalog["validation"]["groups"][row["group"]], "rows": []})
        groups[-1]["rows"].append(row)
    for group in groups:
        # A note every row of a group shares is said once, under its heading.
        notes = {row["note"] for row in group["rows"]}
        group["note"] = fill_note(notes.pop(), group["rows"], group["id"]) if len(notes) == 1 else ""
        for row in group["rows"]:
            row["note"] = "" if group["note"] else fill_note(row["note"], [row], group["id"])
    stats = summary(all_rows)
    averages = [{"kind": kind, "label": ctx.catalog["validation"]["kinds"][kind], "mean": f"{stats[kind][0]:.1f}",
                 "count": stats[kind][1]} for kind in SUMMARY_LINES]
    misses, predictions = stats["misses"]
    texts = ctx.catalog["validation"]
    repeats, spread = repeats_view(ctx.lang, ctx.catalog)
    ctx.add_to_toc([("summary", texts["summary_heading"]), ("run-kinds", texts["run_kinds_heading"])]
                   + [(g["id"], g["title"]) for g in groups]
                   + ([("repeats", texts["repeats_heading"])] if repeats else [])
                   + [("left-out", texts["left_out_heading"])])
    return ctx.env.get_template("validation.html").render(
        t=ctx.catalog, groups=groups, averages=averages, misses=misses, predictions=predictions,
        prediction_mean=f"{stats['prediction'][0]:.1f}", repeats=repeats, spread=spread,
        run_kinds=run_kinds_view(ctx.catalog), min_runs=MIN_RUNS)
