"""A planner result → everything the lab page shows, in the reader's words.

``render_result`` returns a dict whose leaves the page copies into its
data-bind targets: plain strings (escaped by the DOM) and a few HTML/SVG
fragments built here with every text escaped. The build renders the first
paint from the same dict.
"""
from html import escape

from lab_core.inputs import SPEC_BY_NAME
from lab_core.pipeline import SCHEDULE_NAMES, bubble_fraction
from lab_core.planner.assumptions import METER_THRESHOLDS
from lab_core.planner.meters import METERS
from lab_core.recompute_modules import named_modules

from .accuracy import accuracy_text
from .bars import memory_bar, time_bar
from .chinese import tighten
from .diagram import render_mesh
from .narrative import layout_label, plan_sentences
from .numbers import format_numbers
from .plural import counted
from .quantities import format_quantity
from .schedule import render_schedule

PLAN_KEYS = ("tp", "cp", "pp", "stage_layers", "dp", "ep", "zero", "recompute", "sequence_parallel", "micro_batch",
             "micro_batches", "interleave")
FIGURE_KEYS = ("tokens_per_s", "mfu", "step", "time_to_train", "gpu_hours", "interruptions", "checkpoint",
               "optimal_checkpoint", "goodput")
DIAGRAM_PARTS = {  # page part -> planner diagram entry
    "dataset": "data_loaders", "loaders": "data_loaders", "mesh": "dp_replicas", "fabric": "collective_fabric",
    "checkpoint": "checkpoint_store", "metrics": "metrics", "recovery": "fault_recovery",
}


def _range_ends(name, catalog, kinds):
    """(low, high) of a number input in the reader's words, from lab_core's spec."""
    spec = SPEC_BY_NAME[name]
    kind = kinds.get(name, "plain")
    return (format_quantity(spec.lowest, kind, catalog["units"]), format_quantity(spec.highest, kind, catalog["units"]))


def allowed_range(name, catalog, kinds):
    """The allowed range of an input in the reader's words, from lab_core's spec."""
    spec = SPEC_BY_NAME.get(name)
    if spec is None:
        return ""
    if spec.kind == "bool":
        return "true, false"  # what a link or the command line writes for a switch (Session._read)
    if spec.kind != "number":
        return ", ".join(str(choice) for choice in spec.choices) if spec.choices else ""
    low, high = _range_ends(name, catalog, kinds)
    return catalog["range"].format(low=low, high=high)


def render_error(error, catalog, kinds):
    """An input error (``LabInputError.to_dict()`` shape) as one sentence, spaced as
    its language is (lab_view.chinese: the sentence carries the page's own words)."""
    return tighten(_error_sentence(error, catalog, kinds))


def _error_sentence(error, catalog, kinds):
    template = catalog["errors"].get(error["reason"], catalog["errors"]["default"])
    name = error["field"]
    pin_errors = catalog.get("pin_errors")
    if pin_errors and error["reason"] == "inconsistent" and name in pin_errors["why"]:
        # A pinned plan choice the workload cannot run: the rule, and the planner's nearest valid values.
        return {"field": name, "text": pin_errors["template"].format(
            field=catalog["field_labels"].get(name, name), value=error["value"], why=pin_errors["why"][name],
            allowed=error.get("allowed", ""))}
    label = catalog["input_labels"].get(name) or catalog.get("field_labels", {}).get(name, name)
    mismatch = catalog["errors"].get("inconsistent", {}).get(name) if error["reason"] == "inconsistent" else None
    if isinstance(mismatch, dict):
        # An input with several rules (the recompute modules): the one it broke (LabInputError.numbers["rule"]).
        mismatch = mismatch.get((error.get("numbers") or {}).get("rule"))
    if mismatch is not None:
        # An input that does not fit the others: its own range would read as if the value were allowed.
        return {"field": name, "text": mismatch.format(field=label, **_mismatch_numbers(error, catalog))}
    spec = SPEC_BY_NAME.get(name)
    low, high = _range_ends(name, catalog, kinds) if spec is not None and spec.kind == "number" else ("", "")
    examples = catalog["examples"].get(kinds.get(name, "plain"), catalog["examples"]["plain"])
    # Inputs have a range in the reader's words; other fields (pins) carry their allowed values.
    allowed = allowed_range(name, catalog, kinds) if spec is not None else error.get("allowed", "")
    value = error["value"]
    if spec is not None and spec.kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = _value_text(value, kinds.get(name, "plain"), catalog, (low, high))
    return {
        "field": name,
        "text": template.format(field=label, value=value, allowed=allowed, low=low, high=high, examples=examples),
    }


def _mismatch_numbers(error, catalog):
    """The value and the other inputs an inconsistent input's error names (LabInputError.numbers),
    in the reader's words: counts as counts, GPU presets by their names."""
    gpus = catalog["choices"]["gpu"]
    out = {}
    for key, value in dict(error.get("numbers") or {}, value=error["value"]).items():
        if key == "gpu":
            out[key] = gpus.get(value, value)
        elif key == "stack":
            out[key] = catalog["choices"]["stack"].get(value, value)
        elif key == "fp8_gpus":
            out[key] = catalog["errors"]["list_separator"].join(gpus.get(gpu, gpu) for gpu in value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = format_quantity(value, "count", catalog["units"])
        else:
            out[key] = value
    return out


def _value_text(value, kind, catalog, ends):
    """A refused number in the reader's words, as the range is written ("100M", not
    "100000000.0"); in full where that rounds to an end of the range ("124,900,000", not "125M")."""
    text = format_quantity(value, kind, catalog["units"])
    return text if text not in ends else f"{value:,.10g}"


def _values(workload, derivable, catalog, kinds):
    """Formatted inputs: ``values`` the reader set, ``derived`` the inputs left
    empty that the model derived (``derivable``: the model shape from the
    parameter count, the restart time from its parts), shown as hints."""
    values, derived = {}, {}
    for name, kind in kinds.items():
        value = workload.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[name] = format_quantity(value, kind, catalog["units"])
        elif kind == "modules" and isinstance(value, (list, tuple)):
            values[name] = ", ".join(value)  # names as Megatron-Core writes them, in every language
        elif value is None and isinstance(derivable.get(name), (int, float)):
            derived[name] = catalog["lab"]["derived_value"].format(value=format_quantity(derivable[name], kind, catalog["units"]))
    return values, derived


def _derivable(result, report):
    """What the model derived for inputs left empty: the shape, and the restart
    time (minutes) as the sum of its modelled parts."""
    out = dict(result["shape"])
    if not report["failures"]["recovery_fixed"]:
        out["restart_min"] = report["failures"]["recovery_s"] / 60.0
    return out


def _activation_text(plan, report, catalog, fmt):
    """The activation meter's sentence: what the plan keeps after its recompute choice."""
    texts, memory = catalog["meter_text"], report["memory"]
    usable = plan["memory"]["usable_bytes"]
    state = memory["weights_bytes"] + memory["gradients_bytes"] + memory["optimizer_bytes"]
    room = usable - state
    activations = fmt(memory["activations_bytes"], "bytes")
    if room <= 0.0:
        return texts["activation_no_room"].format(short=fmt(-room, "bytes"), activations=activations)
    recompute = plan["parallelism"]["recompute"]
    share = fmt(plan["meters"]["activation"]["ratio"], "percent")
    if recompute == "none":
        return texts["activation"].format(share=share, room=fmt(room, "bytes"), activations=activations)
    without = next(d["numbers"]["activations_without_recompute_bytes"] for d in plan["decisions"]
                   if d["id"] == "activation_memory")
    numbers = dict(share=share, room=fmt(room, "bytes"), activations=activations, without=fmt(without, "bytes"))
    if plan["parallelism"].get("recompute_layers"):
        layers = plan["parallelism"]["recompute_layers"]
        return counted(texts["activation_partial"], layers, layers=layers, **numbers)
    return texts["activation_recompute"].format(recompute=catalog["lab"]["terms"][recompute], **numbers)


def _fault_text(plan, failures, catalog, fmt):
    """The fault meter's sentence: wall time lost, broken down into recomputed
    work, checkpoint pauses and the recovery parts (or the fixed restart time)."""
    texts = catalog["meter_text"]
    share = lambda key: fmt(failures[key], "percent")  # noqa: E731
    lost = fmt(plan["meters"]["fault"]["ratio"], "percent")
    if failures["mean_time_to_interrupt_s"] is None:
        return texts["fault_no_failures"].format(lost=lost, stalls=share("checkpoint_stall_share"))
    common = dict(lost=lost, per_day=fmt(failures["interruptions_per_day"], "plain"),
                  lost_work=share("lost_work_share"), stalls=share("checkpoint_stall_share"),
                  recovery=share("recovery_share"))
    if failures["recovery_fixed"]:
        return texts["fault_fixed"].format(restart=fmt(failures["recovery_s"], "duration"), **common)
    return texts["fault"].format(detection=share("detection_share"), restart=share("job_restart_share"),
                                 init=share("comm_init_share"), load=share("checkpoint_load_share"), **common)


def _meters(plan, report, catalog):
    units = catalog["units"]
    memory, time, data, failures = report["memory"], report["time"], report["data"], report["failures"]
    fmt = lambda value, kind: format_quantity(value, kind, units)  # noqa: E731
    delivered = min(data["loader_tokens_per_s"], data["storage_read_bytes_per_s"] / max(data["required_read_bytes_per_s"], 1e-30) * data["required_tokens_per_s"])
    texts = catalog["meter_text"]
    sentences = {
        "memory": lambda: texts["memory"].format(used=fmt(memory["total_bytes"], "bytes"), device=fmt(memory["device_bytes"], "bytes")),
        "comms": lambda: texts["comms"].format(share=fmt(plan["meters"]["comms"]["ratio"], "percent"), step=fmt(time["step_s"], "duration")),
        "data": lambda: texts["data"].format(required=fmt(data["required_tokens_per_s"], "tokens_per_s"), delivered=fmt(delivered, "tokens_per_s")),
        "activation": lambda: _activation_text(plan, report, catalog, fmt),
        "fault": lambda: _fault_text(plan, failures, catalog, fmt),
    }
    meters = {}
    for name in METERS:
        meter = plan["meters"][name]
        running = meter["level"] != "none"
        meters[name] = {
            "ratio": meter["ratio"],
            "level": meter["level"],
            "fill": max(0.0, min(meter["ratio"] / METER_THRESHOLDS[name]["critical"], 1.0)) if running else 0.0,
            "text": sentences[name]() if running else texts["no_plan"],
            "level_text": catalog["meter_levels"][meter["label"]],
        }
    return meters


def grid_extras(par, catalog):
    """What a "TP × PP × DP" text adds for context and expert parallelism (" × CP 2", ", EP 64")."""
    texts = catalog["lab"]["grid_extras"]
    out = ""
    if par.get("cp", 1) > 1:
        out += texts["cp"].format(cp=f"{par['cp']:,}")
    if par.get("ep", 1) > 1:
        out += texts["ep"].format(ep=f"{par['ep']:,}")
    return out


def stage_layers_text(par, report, catalog):
    """Layers per pipeline stage: one number, or first / middle / last for an uneven split;
    and the multi-token-prediction modules the last stage runs besides them."""
    text = _split_text(par, report, catalog)
    mtp = report["shape"].get("mtp_layers", 0)
    return text + catalog["lab"]["stage_layers"]["mtp"].format(mtp=mtp) if mtp else text


def _split_text(par, report, catalog):
    layers = report["shape"]["layers"]
    first, last, pp = par.get("first_stage_layers", 0), par.get("last_stage_layers", 0), par["pp"]
    if pp == 1 or not (first or last):
        return f"{layers // pp:,}"
    first, last = first or None, last or None
    if pp == 2:
        first, last = first or layers - last, last or layers - first
        middle = None
    else:
        others = (pp - 2) + (first is None) + (last is None)
        middle = (layers - (first or 0) - (last or 0)) // others
        first, last = first or middle, last or middle
    text = catalog["lab"]["stage_layers"]["pp2" if middle is None else "uneven"]
    return text.format(first=f"{first:,}", middle="" if middle is None else f"{middle:,}", last=f"{last:,}")


def recompute_text(par, workload, catalog):
    """The plan's recompute in words; full recompute of only some layers says how many
    (lab_core.partial_recompute); Megatron-Core's selective recompute names its modules
    when they are not the default (the attention core alone; lab_core.recompute_modules)."""
    if par.get("recompute_layers"):
        return counted(catalog["lab"]["partial_recompute"], par["recompute_layers"], layers=par["recompute_layers"])
    modules = named_modules(par["recompute"], workload.get("recompute_modules") or ())
    if modules:
        return catalog["lab"]["selective_modules"].format(modules=", ".join(modules))
    return catalog["lab"]["terms"][par["recompute"]]


def _plan_items(par, report, catalog, workload):
    terms = catalog["lab"]["terms"]
    return {
        "tp": str(par["tp"]), "cp": str(par.get("cp", 1)), "pp": str(par["pp"]),
        "stage_layers": stage_layers_text(par, report, catalog), "dp": f"{par['dp']:,}", "ep": str(par.get("ep", 1)),
        "zero": str(par["zero"]), "recompute": recompute_text(par, workload, catalog),
        "sequence_parallel": terms["yes" if par["sequence_parallel"] else "no"],
        "micro_batch": str(par["micro_batch"]), "micro_batches": f"{int(report['time']['micro_batches']):,}",
        "interleave": str(par["interleave"]),
    }


# MFU counts the attention core's whole score matrix (Korthikanti's Eq 7); where counting the
# half a causal mask keeps once (throughput.mfu_causal) changes it by this share or more, the
# figure's note gives the other: at long sequences Eq 7's count passes what the kernels compute,
# even 100%.
MFU_COUNTS_DIFFER = 0.10


def _figure_notes(report, catalog):
    """A line under a key figure, "" for none: under MFU (Eq 7's), the causal count where the
    two differ (MFU_COUNTS_DIFFER)."""
    rates = report["throughput"]
    if rates["mfu_causal"] > (1.0 - MFU_COUNTS_DIFFER) * rates["mfu"]:
        return {"mfu": ""}
    causal = format_quantity(rates["mfu_causal"], "percent", catalog["units"])
    return {"mfu": catalog["lab"]["mfu_counted_once"].format(causal=causal)}


# Key figures of a running step: a plan that does not fit has none (the meters and decisions
# say "no running step"); the interruptions and the checkpoint interval are the workload's own.
RUN_FIGURES = ("tokens_per_s", "mfu", "step", "time_to_train", "gpu_hours", "optimal_checkpoint", "goodput")


def _figures(plan, report, catalog):
    units = catalog["units"]
    fmt = lambda value, kind: format_quantity(value, kind, units) if value is not None else catalog["lab"]["not_applicable"]  # noqa: E731
    checkpoint = plan["checkpoint"]
    figures = {
        "tokens_per_s": fmt(report["throughput"]["tokens_per_s"], "tokens_per_s"),
        "mfu": fmt(report["throughput"]["mfu"], "percent"),
        "step": fmt(report["time"]["step_s"], "duration"),
        "time_to_train": fmt(checkpoint["train_time_with_failures_s"], "duration"),
        "gpu_hours": fmt(report["training"]["gpu_hours_with_failures"], "params"),
        "interruptions": fmt(checkpoint["interruptions_per_day"], "per_day"),
        "checkpoint": fmt(checkpoint["interval_s"], "duration"),
        "optimal_checkpoint": fmt(checkpoint["optimal_interval_s"], "duration"),
        "goodput": fmt(checkpoint["goodput"], "percent"),
    }
    if not plan["fits"]:
        figures.update(dict.fromkeys(RUN_FIGURES, catalog["lab"]["not_applicable"]))
    return figures


def _time_bar(plan, report, catalog):
    """The step's parts as a bar, or, when nothing fits, why there is no step to break down
    (the closest plan's memory bar above says what runs out)."""
    texts = catalog["lab"]["bars"]
    if not plan["fits"]:
        return f'<p class="bar-summary">{escape(texts["no_step"])}</p>'
    return time_bar(report["time"], texts, catalog["units"], plan["parallelism"]["recompute"])


def _schedule(par, report, catalog, schedule="1f1b"):
    """The pipeline picture and its caption. The bidirectional schedules (DualPipe, DualPipeV) are
    not drawn: the picture is plain 1F1B's with the same stages and micro-batches, and the caption
    says so with both bubbles."""
    texts = catalog["lab"]["schedule"]
    units = catalog["units"]
    micro = int(report["time"]["micro_batches"])
    interleave = par.get("interleave", 1)
    svg, drawn = render_schedule(par["pp"], micro, texts, interleave)
    interleaved = drawn["chunks_drawn"] > 1
    numbers = dict(p=par["pp"], m=f"{micro:,}", bubble=format_quantity(report["time"]["bubble_fraction"], "percent", units),
                   p_drawn=drawn["stages_drawn"], m_drawn=drawn["micro_drawn"], v=interleave,
                   v_drawn=drawn["chunks_drawn"])
    if schedule != "1f1b":
        caption = texts["caption_bidirectional"].format(
            name=SCHEDULE_NAMES[schedule], plain=format_quantity(bubble_fraction(par["pp"], micro), "percent", units),
            **numbers)
    else:
        caption = texts["caption_interleaved" if interleaved else "caption"].format(**numbers)
    if par["pp"] == 1:
        caption = texts["no_pipeline"]
    return {"svg": svg, "caption": caption, "single_chunk": not interleaved}


def _part_text(part, entry, texts, units, fits):
    counts = texts["counts"]
    if not fits and part not in ("dataset", "mesh"):
        return counts["no_plan"]
    if not entry["active"] and part in ("fabric", "recovery"):
        return counts["idle"]
    n = format_quantity(entry["count"], "count", units)
    if part == "fabric" and entry["nodes"] > 1:
        return counted(counts["fabric_nodes"], entry["count"], n=n, nodes=format_quantity(entry["nodes"], "count", units))
    return counted(counts[part], entry["count"], n=n)


def _diagram(plan, catalog):
    par, texts, diagram = plan["parallelism"], catalog["diagram"], plan["diagram"]
    units = catalog["units"]
    parts = {}
    for part, key in DIAGRAM_PARTS.items():
        entry = diagram[key]
        state = "off" if not entry["active"] else ("hot" if entry["level"] == "critical" else "on")
        parts[part] = {"state": state, "text": _part_text(part, entry, texts, units, plan["fits"])}
    # What the fabric carries for this plan (the plan's gradient sync, and the experts' all-to-all).
    fabric = diagram["collective_fabric"]
    parts["fabric"]["sub"] = texts["collectives"][fabric["collective"]] + (
        texts["collectives"]["all_to_all"] if fabric["all_to_all"] else "")
    if plan["fits"]:
        label = texts["mesh_label"].format(tp=par["tp"], pp=par["pp"], dp=f"{par['dp']:,}") + grid_extras(par, catalog)
    else:
        label = texts["mesh_nofit"].format(gpus=_gpus_text(plan["gpus"]["requested"], catalog))
    cp, ep = par.get("cp", 1), par.get("ep", 1)
    axes = {dim: texts["axes"][dim].format(n=f"{par[dim]:,}") for dim in ("dp", "pp", "tp")}
    # CP and EP are labelled only where the plan uses them (an empty label is not shown).
    axes.update({dim: texts["axes"][dim].format(n=f"{size:,}") if size > 1 else "" for dim, size in (("cp", cp), ("ep", ep))})
    return {"label": label, "mesh": render_mesh(par["tp"], par["pp"], par["dp"], texts, cp, ep), "parts": parts,
            "axes": axes}


def _gpus_text(n, catalog):
    return counted(catalog["lab"]["gpus_count"], n, n=format_quantity(n, "count", catalog["units"]))


def decision_items(plan, catalog):
    """Each decision in words: ``{"id", "title", "choice", "why"}`` (the page's cards, the command line's list)."""
    items = []
    for decision in plan["decisions"]:
        texts = catalog["decisions"][decision["id"]]
        numbers = _with_min_extras(decision["numbers"], plan.get("no_fit") or {}, catalog)
        # The parallelism option names tp / pp / dp; {extras} adds CP and EP.
        numbers["extras"] = grid_extras(plan["parallelism"], catalog) if decision["option"] != "cp" else ""
        if decision["id"] == "interconnect" and "fabric_traffic" in decision["numbers"]:
            for link in ("fabric_traffic", "nvlink_traffic"):
                parts = [texts["fabric_traffic"][part] for part in decision["numbers"][link]]
                numbers[link] = _listed(parts, texts["fabric_traffic_separator"], texts["fabric_traffic_last"])
        why = texts["reasons"][decision["reason"]].format_map(numbers)
        if decision["id"] == "parallelism" and decision["option"] != "nothing_fits":
            # What sharing each sequence saves against what its K/V exchange costs.
            if plan["parallelism"].get("cp", 1) > 1:
                exchange = texts["cp_exchange"][decision["numbers"]["cp_exchange"]]
                numbers["cp_exchange_text"] = exchange.format_map(numbers)
                why += texts["context_note"].format_map(numbers)
            # How many experts a GPU holds against how many nodes each token reaches.
            if plan["parallelism"].get("ep", 1) > 1:
                numbers["ep_nodes_counted"] = counted(texts["expert_nodes"], decision["numbers"]["ep_nodes"],
                                                      n=numbers["ep_nodes"])
                numbers["ep_fabric_text"] = (texts["expert_fabric"].format_map(numbers)
                                             if decision["numbers"]["ep_nodes"] > 1 else "")
                why += texts["expert_note"].format_map(numbers)
            # Where the multi-token-prediction modules run, against the stages' layers.
            if decision["numbers"].get("mtp"):
                numbers["mtp_counted"] = counted(texts["mtp_modules"], decision["numbers"]["mtp"], n=numbers["mtp"])
                why += texts["mtp_note"].format_map(numbers)
        items.append({"id": decision["id"], "title": texts["title"],
                      "choice": texts["options"][decision["option"]].format_map(numbers), "why": why})
    return items


def _listed(items, separator, last):
    """"A, B and C" in the catalog's words (separator ", ", last " and ")."""
    return separator.join(items[:-1]) + last + items[-1] if len(items) > 1 else "".join(items)


def _decisions(plan, catalog, changed):
    cards = []
    for item in decision_items(plan, catalog):
        is_changed = item["id"] in changed
        mark = f'<span class="decision-changed">{escape(catalog["lab"]["changed"])}</span>' if is_changed else ""
        cards.append(
            f'<article class="decision{" changed" if is_changed else ""}" data-decision="{escape(item["id"])}">'
            f'<h4>{escape(item["title"])} {mark}</h4><p class="decision-choice">{escape(item["choice"])}</p>'
            f'<p class="decision-why">{escape(item["why"])}</p></article>'
        )
    return "".join(cards)


def alternative_items(plan, catalog):
    """Each other shape's best plan in words: ``{"label", "layout", "why"}``."""
    texts = catalog["lab"]["alternatives"]
    items = []
    for alt in plan["alternatives"]:
        par = alt["parallelism"]
        layout = texts["layout"].format(tp=par["tp"], pp=par["pp"], dp=f"{par['dp']:,}", zero=par["zero"],
                                        recompute=catalog["lab"]["terms"][par["recompute"]], extras=grid_extras(par, catalog))
        numbers = format_numbers(alt, catalog)
        items.append({"label": layout_label(alt["layout"], catalog["lab"]["layouts"]), "layout": layout,
                      "why": texts["reasons"][alt["reason"]].format_map(numbers)})
    return items


def _alternatives(plan, catalog):
    texts = catalog["lab"]["alternatives"]
    rows = [f'<tr><th scope="row">{escape(item["label"])}</th><td>{escape(item["layout"])}</td>'
            f'<td>{escape(item["why"])}</td></tr>' for item in alternative_items(plan, catalog)]
    if not rows:
        return f'<p class="lab-note">{escape(texts["none"])}</p>'
    head = "".join(f"<th scope=\"col\">{escape(h)}</th>" for h in texts["columns"])
    return f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


# What content/rules.yaml's ``applies`` may name (the build refuses any other id).
PLAN_FEATURES = ("tp", "pp", "dp", "cp", "ep", "zero", "recompute", "activation", "checkpoint", "at_scale")


def plan_features(plan):
    """Which rules apply: the plan's features as ids (PLAN_FEATURES; content/rules.yaml ``applies``)."""
    par = plan["parallelism"]
    features = set()
    if par["tp"] > 1:
        features.add("tp")
    if par["pp"] > 1:
        features.add("pp")
    if par["dp"] > 1:
        features.add("dp")
    if par.get("cp", 1) > 1:
        features.add("cp")
    if par.get("ep", 1) > 1:
        features.add("ep")
    if par["zero"] > 0:
        features.add("zero")
    if par["recompute"] != "none":
        features.add("recompute")
    if plan["meters"]["activation"]["level"] != "ok":
        features.add("activation")
    if plan["checkpoint"]["interruptions_per_day"] and plan["gpus"]["used"] > 1:
        features.add("checkpoint")
    if plan["stage"] == "at_scale":
        features.add("at_scale")
    return features


def _rules(plan, catalog):
    features = plan_features(plan)
    items = [
        f'<li><a href="{escape(catalog["rules_href"])}#rule-{escape(rule["id"])}">{escape(rule["title"])}</a> '
        f'<span class="lab-note">{escape(rule["source"])}</span></li>'
        for rule in catalog["rules_short"] if features.intersection(rule["applies"])
    ]
    if not items:
        return f'<p class="lab-note">{escape(catalog["lab"]["rules_none"])}</p>'
    return f'<ul>{"".join(items)}</ul>'


def _min_layout(no_fit):
    layout = no_fit.get("min_gpus_layout") or {}
    return {"min_tp": layout.get("tp"), "min_pp": layout.get("pp"), "min_dp": layout.get("dp")}


def _with_min_extras(numbers, no_fit, catalog):
    """``numbers`` formatted on demand, plus min_extras: the smallest fitting layout's CP / EP, if any."""
    return format_numbers(numbers, catalog, min_extras=grid_extras(no_fit.get("min_gpus_layout") or {}, catalog))


def _no_fit(plan, catalog):
    no_fit = plan.get("no_fit")
    if not no_fit:
        return ""
    numbers = _with_min_extras(dict(no_fit, **_min_layout(no_fit)), no_fit, catalog)
    if no_fit.get("fewest_recompute_layers") is not None:
        # A pinned count of recompute layers: how many would fit on this layout (0: all of them).
        key = "nofit_layers" if no_fit["fewest_recompute_layers"] else "nofit_all_layers"
        return catalog["lab"][key].format_map(numbers)
    key = ("nofit" if no_fit.get("min_gpus") else
           "nofit_searching" if no_fit.get("min_gpus_searching") else "nofit_anywhere")
    return catalog["lab"][key].format_map(numbers)


def _stage(plan, catalog):
    """The shape panel: the stage the workload forces, described by the plan
    itself; when nothing fits, it says so and names the smallest system that would."""
    if not plan["fits"]:
        texts = catalog["lab"]
        no_fit = plan["no_fit"]
        if no_fit.get("min_gpus_stage"):
            numbers = _with_min_extras(dict(no_fit, **_min_layout(no_fit)), no_fit, catalog)
            numbers["stage"] = catalog["stages"][no_fit["min_gpus_stage"]]["title"]
            text = texts["nofit_stage"].format_map(numbers)
        else:
            text = _no_fit(plan, catalog)
        return {"id": "no_fit", "title": texts["nofit_title"].format(gpus=_gpus_text(plan["gpus"]["requested"], catalog)),
                "qualifier": "", "text": text, "target": no_fit.get("min_gpus_stage") or ""}
    stage_texts = catalog["stages"][plan["stage"]]
    # The full-3D stage is named for the recompute it usually needs; a plan whose
    # activations fit without it is not called "with activation checkpointing".
    plain = plan["parallelism"]["recompute"] == "none" and "title_no_recompute" in stage_texts
    return {"id": plan["stage"], "title": stage_texts["title_no_recompute" if plain else "title"],
            "qualifier": _shape_qualifier(plan["parallelism"], catalog["lab"]["shape_qualifiers"]),
            "text": plan_sentences(plan["parallelism"], catalog["lab"]["plan_text"]), "target": ""}


def _shape_qualifier(par, texts):
    """What the path's stage names leave out: a long-context plan (context parallelism) and a
    mixture of experts split by expert parallelism, each with its degree ("" for neither)."""
    parts = [texts[dim].format(**{dim: par[dim]}) for dim in ("cp", "ep") if par.get(dim, 1) > 1]
    return texts["separator"].join(parts)


def _thresholds(catalog):
    """The threshold table (lab_core.planner.assumptions.METER_THRESHOLDS) in words:
    each meter's levels, their labels and where they start."""
    parts = []
    for name in METERS:
        meter = METER_THRESHOLDS[name]
        labels = {level: catalog["meter_levels"][label] for level, label in meter["labels"].items()}
        parts.append(catalog["lab"]["threshold_item"].format(
            meter=catalog["meter_labels"][name], ok_label=labels["ok"], warn_label=labels["warn"],
            critical_label=labels["critical"],
            warn=format_quantity(meter["warn"], "percent", catalog["units"]),
            critical=format_quantity(meter["critical"], "percent", catalog["units"])))
    return catalog["lab"]["thresholds"].format(items=catalog["lab"]["threshold_separator"].join(parts))


# The parts of the view a slider move changes at once (render_core): the first
# answer to a move carries only these; the page keeps the rest until the full answer.
CORE_PARTS = ("values", "derived", "stage", "meters", "plan", "memory_bar", "time_bar", "figures", "figure_notes",
              "accuracy")


def render_core(result, report, catalog, kinds):
    """The view's CORE_PARTS: the inputs in words, the shape, the meters, the
    plan line, the memory and time bars and the key figures."""
    plan = result["plan"]
    par = plan["parallelism"]
    values, derived = _values(result["workload"], _derivable(result, report), catalog, kinds)
    return {
        "values": values,
        "derived": derived,
        "stage": _stage(plan, catalog),
        "meters": _meters(plan, report, catalog),
        "plan": {"fits": plan["fits"], "nofit": _no_fit(plan, catalog), "items": _plan_items(par, report, catalog, result["workload"])},
        "memory_bar": memory_bar(report["memory"], catalog["lab"]["bars"], catalog["units"]),
        "time_bar": _time_bar(plan, report, catalog),
        "figures": _figures(plan, report, catalog),
        "figure_notes": _figure_notes(report, catalog) if plan["fits"] else {"mfu": ""},
        "accuracy": accuracy_text(result["workload"], catalog),
    }


def render_result(result, report, catalog, kinds, changed=()):
    """``result``: lab_core.planner.json_plan.plan_json(...) output; ``report``: the
    chosen plan's Report.to_dict(); ``changed``: decision ids that changed."""
    plan = result["plan"]
    view = render_core(result, report, catalog, kinds)
    view.update({
        "thresholds": _thresholds(catalog),
        "schedule": _schedule(plan["parallelism"], report, catalog, result["workload"]["pipeline_schedule"]),
        "diagram": _diagram(plan, catalog),
        "decisions": _decisions(plan, catalog, set(changed)),
        "alternatives": _alternatives(plan, catalog),
        "rules": _rules(plan, catalog),
    })
    return view
