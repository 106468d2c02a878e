"""The five meters: a ratio each, a level ok | warn | critical (or none) and
the label that level has on that meter.

Thresholds and labels live in assumptions.METER_THRESHOLDS (teaching
assumptions); THRESHOLDS is the same table as plain data for the page.
"""
from .assumptions import METER_THRESHOLDS, NO_PLAN_LABEL

METERS = ("memory", "comms", "data", "activation", "fault")
# "none": the meter measures a running plan and no plan fits.
LEVELS = ("ok", "warn", "critical", "none")
# Meters that judge memory (the only ones that may read "does not fit").
MEMORY_METERS = ("memory", "activation")


def thresholds():
    """JSON-ready copy: {meter: {measure, warn, critical, labels, source}}."""
    return {name: dict(METER_THRESHOLDS[name], labels=dict(METER_THRESHOLDS[name]["labels"]),
                       source="teaching_assumption") for name in METERS}


THRESHOLDS = thresholds()


def labels():
    """Every meter label id (for the page's catalogs)."""
    out = {label for t in METER_THRESHOLDS.values() for label in t["labels"].values()}
    return sorted(out | {NO_PLAN_LABEL})


def level(name, ratio):
    t = METER_THRESHOLDS[name]
    if ratio < t["warn"]:
        return "ok"
    return "warn" if ratio < t["critical"] else "critical"


def comms_ratio(report):
    """Exposed communication and pipeline bubble over the step (see METER_THRESHOLDS)."""
    return report.waiting_s() / report.step_s if report.step_s > 0.0 else 0.0


def model_state_bytes(report):
    """Weights, gradients and optimizer state of the GPU the report's memory is
    for (the most loaded one): the same GPU as its activations, so the
    activation meter and the memory total never disagree."""
    return report.weights_bytes + report.gradients_bytes + report.optimizer_bytes


def activation_ratio(activations_kept, state, usable):
    """Activations the plan keeps (after recompute) over the room model state leaves.

    When the state alone fills the usable memory there is no room: the ratio
    is then 1 + activations / usable (critical, and still growing with the load).
    """
    room = usable - state
    if room > 0.0:
        return activations_kept / room
    return 1.0 + activations_kept / usable


def _meter(name, ratio, fits):
    lvl = level(name, ratio)
    if not fits and name not in MEMORY_METERS:
        return {"ratio": ratio, "level": "none", "label": NO_PLAN_LABEL}
    return {"ratio": ratio, "level": lvl, "label": METER_THRESHOLDS[name]["labels"][lvl]}


def meters(report, usable, fits=True):
    """{meter: {"ratio", "level", "label"}} for one evaluated plan; ``fits``
    False marks the meters of a running plan as "none" (no plan fits)."""
    state = model_state_bytes(report)
    ratios = {
        "memory": report.memory_ratio,
        "comms": comms_ratio(report),
        "data": max(report.loader_ratio, report.storage_ratio),
        "activation": activation_ratio(report.activations_bytes, state, usable),
        "fault": 1.0 - report.goodput,
    }
    return {name: _meter(name, ratios[name], fits) for name in METERS}
