"""Exercises: "predict, then check in the lab".

An exercise's ``lab`` block is the state the lab opens in (its workload
inputs, names as in lab_core.inputs) and, optionally, ``pins``: fields of the
layout the lab's plan must have, so that the answer and the lab agree (the
lab shows the planner's plan; a pin the plan does not have stops the build).
A chapter's values function reads the same state with
``tutorial_values.common.exercise(chapter_id, exercise_id)`` and computes the
numbers the answer states from it.
"""
from dataclasses import dataclass
from functools import cache

import lab_core
from lab_core import LabInputError
from lab_core.inputs import SPEC_BY_NAME
from lab_core.parallelism import Parallelism
from lab_view import QuantityError, parse_quantity

from .bilingual import load_yaml
from .errors import BuildError

_LAYOUT_FIELDS = tuple(Parallelism.__dataclass_fields__)


def _number(path, where, name, raw):
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise BuildError(path, f"{where} lab.workload.{name}: {raw!r} is not a number")
    try:
        return parse_quantity(raw) if isinstance(raw, str) else raw
    except QuantityError:
        raise BuildError(path, f"{where} lab.workload.{name}: {raw!r} is not a number "
                               "(write 70e+9, 70B or 70_000_000_000)") from None


def parse_lab(path, where, lab):
    """``(inputs, pins)`` of an exercise's ``lab`` block, each input judged by lab_core."""
    if not isinstance(lab, dict) or not isinstance(lab.get("workload"), dict) or not lab["workload"]:
        raise BuildError(path, f"{where} lab: expected {{workload: {{input: value, …}}, pins: {{…}}}}")
    unknown = sorted(set(lab) - {"workload", "pins"})
    if unknown:
        raise BuildError(path, f"{where} lab.{unknown[0]}: unknown key (allowed: workload, pins)")
    inputs = {}
    for name, raw in lab["workload"].items():
        spec = SPEC_BY_NAME.get(name)
        if spec is None:
            raise BuildError(path, f"{where} lab.workload.{name}: not an input of the lab "
                                   f"(allowed: {', '.join(SPEC_BY_NAME)})")
        inputs[name] = raw if spec.kind != "number" else _number(path, where, name, raw)
    try:
        lab_core.Workload(**inputs)
    except LabInputError as err:
        raise BuildError(path, f"{where} lab.workload.{err.field}: {err.value!r} is not allowed "
                               f"({err.reason}{': ' + err.detail if err.detail else ''}; allowed: {err.allowed})") from None
    pins = lab.get("pins") or {}
    if not isinstance(pins, dict):
        raise BuildError(path, f"{where} lab.pins: expected {{layout field: value}}")
    for name in pins:
        if name not in _LAYOUT_FIELDS:
            raise BuildError(path, f"{where} lab.pins.{name}: not a layout field (allowed: {', '.join(_LAYOUT_FIELDS)})")
    return inputs, dict(pins)


@dataclass(frozen=True)
class ExerciseState:
    """What the lab shows when the exercise's link opens it: the workload, the
    planner's plan (the lab's recommendation) and its report."""
    inputs: dict
    workload: object
    plan: object

    @property
    def report(self):
        return self.plan.report

    @property
    def layout(self):
        return self.plan.parallelism


def _chapter_path(chapter_id):
    from .tutorial import chapter_files
    for path in chapter_files():
        data = load_yaml(path)
        if isinstance(data, dict) and data.get("id") == chapter_id:
            return path, data
    raise BuildError(chapter_id, "no chapter file has this id")


@cache
def exercise_state(chapter_id, exercise_id):
    """The lab state of exercise ``exercise_id`` of chapter ``chapter_id``, pins checked."""
    path, data = _chapter_path(chapter_id)
    found = [e for e in data.get("exercises") or [] if isinstance(e, dict) and e.get("id") == exercise_id]
    if not found:
        raise BuildError(path, f"exercise {exercise_id!r} is computed in labsite/tutorial_values/ but not in the file")
    where = f"exercise {exercise_id}"
    inputs, pins = parse_lab(path, where, found[0].get("lab"))
    workload = lab_core.Workload(**inputs)
    plan = lab_core.recommend(workload)
    layout = plan.parallelism.to_dict()
    for name, value in pins.items():
        if layout[name] != value:
            raise BuildError(path, f"{where} lab.pins.{name}: the lab's plan has {name} = {layout[name]!r}, "
                                   f"not {value!r}; the answer would not match what the lab shows")
    return ExerciseState(inputs, workload, plan)
