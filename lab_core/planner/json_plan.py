"""plan_json(inputs, pins=None) -> dict: JSON in, JSON out, for the page's worker, the build and the CLI.

Never raises: bad input gives {"ok": False, "error": LabInputError.to_dict()};
otherwise {"ok": True, "workload": ..., "shape": ..., "plan": Plan.to_dict()}.
budget, hint: recommend()'s (a quick, possibly provisional answer; the plan on screen).
Pins (pins.py) come as the `pins` argument or as inputs["pins"]; a bad pin is
an error result naming the field, e.g. {"field": "tp", "value": 3,
"allowed": "1, 2, 4, 8", "reason": "inconsistent", ...}.
"""
from ..errors import LabInputError
from ..workload import Workload
from .recommend import recommend_steps
from .steps import finish


def plan_json(inputs, pins=None, budget=None, hint=None):
    return finish(plan_json_steps(inputs, pins, budget, hint))


def plan_json_steps(inputs, pins=None, budget=None, hint=None):
    """plan_json() as steps (steps.py): yields while the planner searches, returns the dict."""
    try:
        if not isinstance(inputs, dict):
            raise LabInputError("workload", repr(inputs), "an object of named inputs", "not_an_object")
        inputs = dict(inputs)
        if "pins" in inputs:
            given = inputs.pop("pins")
            pins = given if pins is None else dict(given or {}, **pins)
        workload = Workload.from_dict(inputs)
        plan = yield from recommend_steps(workload, pins, budget, hint)
    except LabInputError as err:
        return {"ok": False, "error": err.to_dict()}
    return {"ok": True, "workload": workload.to_dict(), "shape": workload.shape.to_dict(),
            "plan": plan.to_dict()}
