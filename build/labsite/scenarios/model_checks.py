"""The checks a schema cannot make: the workload and the pinned layout must be
ones lab_core accepts (its own ranges, choices and cross-field rules, and a
layout evaluate() can run), and published figures must be in their metric's
range. They run on parts of a file the schema accepted, so numbers written as
text have a known form; they are parsed here with lab_view's parser and never
reach lab_core as strings.

Each check reports through ``add(line, field, message, allowed)`` and returns
the parsed values, or None after reporting.
"""
from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core.inputs import SPEC_BY_NAME
from lab_view import parse_quantity

from .metrics import METRICS
from .schema import shown

_REASONS = {
    "out_of_range": "{value} is out of range",
    "not_a_number": "{value} is not a number",
    "not_an_integer": "{value} is not a whole number",
    "unknown_choice": "{value} is not one of the choices",
    "not_a_bool": "{value} is not true or false",
    "inconsistent": "{value} does not fit the workload",
    "unknown_field": "{value} is not a known field",
}


def lab_error_text(err, value_text=None):
    """Words for a LabInputError (without the field and the allowed part)."""
    value = value_text if value_text is not None else shown(err.value)
    text = _REASONS.get(err.reason, "{value} is not allowed ({reason})").format(value=value, reason=err.reason)
    if err.detail:
        text += f": {err.detail}"
    return text


def _number(raw):
    """A schema-checked number: YAML numbers and null as they are, text parsed."""
    return parse_quantity(raw) if isinstance(raw, str) else raw


def workload(data, add, skip=()):
    """The workload's inputs as numbers (never strings), judged by lab_core;
    inputs in ``skip`` (the schema rejected them) are left out, and then the
    cross-field rules are not judged."""
    parsed, ok = {}, not skip
    for key, raw in data.items():
        if key in skip:
            continue
        spec = SPEC_BY_NAME[key]
        value = raw if spec.kind != "number" else _number(raw)
        try:
            Workload(**{key: value})
        except LabInputError as err:
            if err.field == key and err.reason != "inconsistent":
                add(data.key_lines[key], f"workload.{key}", lab_error_text(err, shown(raw)), err.allowed)
                ok = False
                continue
            # A cross-field rule: judged below, with every input.
        parsed[key] = value
    if not ok:
        return None
    try:
        Workload(**parsed)
    except LabInputError as err:
        add(data.key_lines.get(err.field, data.line), f"workload.{err.field}", lab_error_text(err), err.allowed)
        return None
    return parsed


def parallelism(data, workload_inputs, add):
    """The full pinned layout as a dict, one lab_core can evaluate for the workload."""
    parsed = {key: _number(raw) if key not in ("recompute", "sequence_parallel") else raw
              for key, raw in data.items()}
    try:
        layout = Parallelism(**parsed)
    except LabInputError as err:
        add(data.key_lines.get(err.field, data.line), f"parallelism.{err.field}",
            lab_error_text(err, shown(data.get(err.field, err.value))), err.allowed)
        return None
    if workload_inputs is None:
        return None
    try:
        evaluate(Workload(**workload_inputs), layout)
    except LabInputError as err:
        message = f"{shown(err.value)} is impossible for this workload" + (f": {err.detail}" if err.detail else "")
        add(data.key_lines.get(err.field, data.line), f"parallelism.{err.field}", message, err.allowed)
        return None
    return layout.to_dict()


def published(items, add, skip=()):
    """Published figures with numeric values, each metric once and in its range
    (figures whose index is in ``skip`` lack a valid metric or value)."""
    figures, seen, ok = [], {}, not skip
    for index, item in enumerate(items):
        if index in skip:
            continue
        where = f"published[{index}]"
        metric, value = METRICS[item["metric"]], _number(item["value"])
        if metric.name in seen:
            add(item.key_lines["metric"], f"{where}.metric", f"{metric.name!r} is already given at line "
                f"{seen[metric.name]}", "each figure once")
            ok = False
        seen.setdefault(metric.name, item.key_lines["metric"])
        if not 0 < value <= metric.maximum:
            add(item.key_lines["value"], f"{where}.value", f"{shown(value)} is out of range for {metric.name}",
                f"more than 0 and at most {metric.maximum:g}")
            ok = False
        figures.append(dict(item, value=value))
    return tuple(figures) if ok else None
