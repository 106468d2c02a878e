"""Result dict → the page's strings, bar widths and levels."""
from lab_core.inputs import SPEC_BY_NAME

from .quantities import format_quantity

#: A meter's level from its ratio (teaching assumption: below 70 % of the
#: limit is comfortable, up to 100 % is tight, above it does not fit).
WARN_RATIO = 0.7
CRITICAL_RATIO = 1.0


def level_of(ratio):
    if ratio > CRITICAL_RATIO:
        return "critical"
    if ratio >= WARN_RATIO:
        return "warn"
    return "ok"


def render_result(result, catalog, kinds):
    units = catalog["units"]
    memory = result["memory"]
    ratio = memory["ratio"]
    used = format_quantity(memory["model_state_bytes"], "bytes_gb", units)
    device = format_quantity(memory["device_bytes"], "bytes_gb", units)
    workload = result["workload"]
    return {
        "values": {
            name: format_quantity(workload[name], kind, units) for name, kind in kinds.items() if name in workload
        },
        "meters": {
            "memory": {
                "ratio": ratio,
                "level": level_of(ratio),
                "fill": min(ratio, 1.0),
                "text": catalog["meter_text"]["memory"].format(used=used, device=device),
                "level_text": catalog["levels"][level_of(ratio)],
            }
        },
    }


def allowed_range(name, catalog, kinds):
    """The allowed range of an input in the reader's words, from lab_core's spec."""
    spec = SPEC_BY_NAME.get(name)
    if spec is None:
        return ""
    if spec.kind != "number":
        return ", ".join(str(choice) for choice in spec.choices) if spec.choices else ""
    kind = kinds.get(name, "plain")
    return catalog["range"].format(
        low=format_quantity(spec.lowest, kind, catalog["units"]),
        high=format_quantity(spec.highest, kind, catalog["units"]),
    )


def render_error(error, catalog, kinds):
    """An input error (``LabInputError.to_dict()`` shape) as one sentence."""
    template = catalog["errors"].get(error["reason"], catalog["errors"]["default"])
    label = catalog["input_labels"].get(error["field"], error["field"])
    return {
        "field": error["field"],
        "text": template.format(field=label, value=error["value"], allowed=allowed_range(error["field"], catalog, kinds)),
    }
