"""plan_json(inputs) -> dict: JSON in, JSON out, for the page's worker and the build.

Never raises: bad input gives {"ok": False, "error": LabInputError.to_dict()};
otherwise {"ok": True, "workload": ..., "shape": ..., "plan": Plan.to_dict()}.
"""
from ..errors import LabInputError
from ..workload import Workload
from .recommend import recommend


def plan_json(inputs):
    try:
        if not isinstance(inputs, dict):
            raise LabInputError("workload", repr(inputs), "an object of named inputs", "not_an_object")
        workload = Workload.from_dict(dict(inputs))
        plan = recommend(workload)
    except LabInputError as err:
        return {"ok": False, "error": err.to_dict()}
    return {"ok": True, "workload": workload.to_dict(), "shape": workload.shape.to_dict(),
            "plan": plan.to_dict()}
