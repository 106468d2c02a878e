"""The five meters: a ratio each and a level ok | warn | critical.

Thresholds live in assumptions.METER_THRESHOLDS (teaching assumptions);
THRESHOLDS is the same table as plain data for the page.
"""
from .assumptions import METER_THRESHOLDS

METERS = ("memory", "comms", "data", "activation", "fault")
LEVELS = ("ok", "warn", "critical")


def thresholds():
    """JSON-ready copy: {meter: {measure, warn, critical, source}}."""
    return {name: dict(METER_THRESHOLDS[name], source="teaching_assumption") for name in METERS}


THRESHOLDS = thresholds()


def level(name, ratio):
    t = METER_THRESHOLDS[name]
    if ratio < t["warn"]:
        return "ok"
    return "warn" if ratio < t["critical"] else "critical"


def comms_ratio(report):
    """Exposed communication and pipeline bubble over the step (see METER_THRESHOLDS)."""
    exposed = (report.tp_comm_s + report.pp_p2p_s + report.dp_comm_s + report.zero_comm_s
               + report.pipeline_bubble_s)
    return exposed / report.step_s if report.step_s > 0.0 else 0.0


def activation_ratio(activations_without_recompute, state, usable):
    """Activations without recompute over the room model state leaves.

    When the state alone fills the usable memory there is no room: the ratio
    is then 1 + activations / usable (critical, and still growing with the load).
    """
    room = usable - state
    if room > 0.0:
        return activations_without_recompute / room
    return 1.0 + activations_without_recompute / usable


def meters(report, activations_without_recompute, state, usable):
    """{meter: {"ratio", "level"}} for one evaluated plan."""
    ratios = {
        "memory": report.memory_ratio,
        "comms": comms_ratio(report),
        "data": max(report.loader_ratio, report.storage_ratio),
        "activation": activation_ratio(activations_without_recompute, state, usable),
        "fault": 1.0 - report.goodput,
    }
    return {name: {"ratio": ratios[name], "level": level(name, ratios[name])} for name in METERS}
