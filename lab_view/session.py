"""One reader's lab session: inputs in, formatted view out (JSON strings).

The browser worker creates one Session with the page's catalog and calls
``handle`` for every change; the build calls the same code for the first
paint and the scenario cards. JSON strings cross the JS/Python boundary so no
proxy objects leak and CPython and Pyodide see identical data.
"""
import json

from lab_core.planner.api import plan_json

from .quantities import QuantityError, parse_quantity
from .view import render_error, render_result


def _decision_keys(plan):
    return {d["id"]: (d["option"], d["reason"]) for d in plan["decisions"]}


class Session:
    def __init__(self, config):
        """``config``: ``{"catalog": {...}, "kinds": {input name: quantity kind}}``."""
        if isinstance(config, str):
            config = json.loads(config)
        self.catalog = config["catalog"]
        self.kinds = config["kinds"]
        self.previous = None

    def _parse_typed(self, inputs, typed):
        merged = dict(inputs)
        for name, text in (typed or {}).items():
            if isinstance(text, str) and not text.strip() and name in inputs:
                merged[name] = None  # an emptied model-shape field means "derive it"
                continue
            try:
                merged[name] = parse_quantity(text, binary=self.kinds.get(name) == "tokens")
            except QuantityError:
                return None, {"field": name, "value": text, "reason": "not_a_number"}
        return merged, None

    def evaluate(self, inputs, typed=None):
        """Return ``{"ok", "inputs", "view"}`` or ``{"ok": False, "inputs", "error"}``."""
        merged, error = self._parse_typed(inputs, typed)
        if error is None:
            result = plan_json(merged)
            if not result["ok"]:
                error = result["error"]
        if error is not None:
            return {"ok": False, "inputs": inputs, "error": render_error(error, self.catalog, self.kinds)}
        plan = result["plan"]
        report = plan["report"]
        decisions = _decision_keys(plan)
        changed = [] if self.previous is None else [k for k, v in decisions.items() if self.previous.get(k) != v]
        self.previous = decisions
        view = render_result(result, report, self.catalog, self.kinds, changed)
        return {"ok": True, "inputs": merged, "view": view}

    def handle(self, request_json):
        """JSON in, JSON out; a bug in the model or view answers with an error
        result (the page keeps its last good state) instead of killing the worker."""
        request = json.loads(request_json)
        try:
            result = self.evaluate(request.get("inputs", {}), request.get("typed"))
        except Exception as err:  # noqa: BLE001 - reported to the reader, never swallowed silently
            result = {"ok": False, "inputs": request.get("inputs", {}),
                      "error": {"field": None, "text": self.catalog["lab"]["internal_error"].format(detail=type(err).__name__)}}
        return json.dumps(result, sort_keys=True)
