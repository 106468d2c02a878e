"""One reader's lab session: inputs in, formatted view out (JSON strings).

The browser worker creates one Session with the page's catalog and calls
``handle`` for every change; the build calls the same code for the first
paint and the scenario cards. JSON strings cross the JS/Python boundary so no
proxy objects leak and CPython and Pyodide see identical data.
"""
import json
import time

from lab_core.inputs import SPEC_BY_NAME
from lab_core.planner.json_plan import plan_json, plan_json_steps
from lab_core.planner.assumptions import QUICK_SEARCH_EVALUATIONS

from .quantities import QuantityError, format_quantity
from .typed import parse_typed
from .view import render_error, render_result


def _decision_keys(plan):
    return {d["id"]: (d["option"], d["reason"]) for d in plan["decisions"]}


_BOOLS = {"true": True, "1": True, "false": False, "0": False}


class Session:
    def __init__(self, config):
        """``config``: ``{"catalog": {...}, "kinds": {input name: quantity kind}}``."""
        if isinstance(config, str):
            config = json.loads(config)
        self.catalog = config["catalog"]
        self.kinds = config["kinds"]
        self.previous = None
        # The plan on screen (Plan.to_dict()["parallelism"]): a quick answer starts from it.
        self.shown = None

    def _error(self, name, value, reason):
        return render_error({"field": name, "value": value, "reason": reason}, self.catalog, self.kinds)

    def _read(self, name, text):
        """(value, None) or (None, error) for what the reader wrote for one input."""
        spec = SPEC_BY_NAME.get(name)
        if spec is not None and spec.kind == "bool":
            value = _BOOLS.get(str(text).strip().lower())
            return (value, None) if value is not None else (None, self._error(name, text, "default"))
        if spec is not None and spec.kind == "choice":
            match = [c for c in spec.choices if str(c) == str(text).strip()]
            return (match[0], None) if match else (None, self._error(name, text, "default"))
        try:
            return parse_typed(text, self.kinds.get(name, "plain"), self.catalog["unit_words"]), None
        except QuantityError:
            return None, self._error(name, text, "not_a_number")

    def _kept(self, name, value):
        kind = self.kinds.get(name, "plain")
        shown = format_quantity(value, kind, self.catalog["units"]) if isinstance(value, (int, float)) else str(value)
        label = self.catalog["input_labels"].get(name, name)
        return {"field": name, "text": self.catalog["errors"]["empty"].format(field=label, value=shown)}

    def _parse_typed(self, inputs, typed, lenient):
        """Merge what was typed into ``inputs``. An emptied box keeps its value
        with a note (a model-shape field emptied means "derive it"); a bad value
        is the error — or, when ``lenient`` (a shared link), a note, the rest kept."""
        merged, notes = dict(inputs), []
        for name, text in (typed or {}).items():
            if isinstance(text, str) and not text.strip():
                spec = SPEC_BY_NAME.get(name)
                if spec is not None and spec.derive_if_zero:
                    merged[name] = None
                elif name in inputs:
                    notes.append(self._kept(name, inputs[name]))
                continue
            value, error = self._read(name, text)
            if error is None:
                merged[name] = value
            elif lenient:
                notes.append(error)
            else:
                return None, notes, error
        return merged, notes, None

    def _plan(self, inputs, merged, typed, notes, lenient, budget=None):
        """plan_json of ``merged``; when ``lenient``, each input the model
        rejects is reported and put back to its value in ``inputs``."""
        hint = self.shown if budget is not None else None
        for _ in range(len(typed or {}) + 1):
            result = plan_json(merged, budget=budget, hint=hint)
            if result["ok"]:
                return result, None
            error = render_error(result["error"], self.catalog, self.kinds)
            name = result["error"]["field"]
            if not lenient or name not in (typed or {}) or merged.get(name) == inputs.get(name):
                return None, error
            notes.append(error)
            merged[name] = inputs.get(name)
        return None, error

    def evaluate(self, inputs, typed=None, lenient=False, quick=False):
        """Return ``{"ok", "inputs", "view", "notes", "provisional"}`` or ``{"ok": False, "inputs", "error"}``.

        ``notes``: ``[{"field", "text"}]`` for values that were kept or dropped.
        ``quick``: the planner stops after QUICK_SEARCH_EVALUATIONS plans once one
        fits; ``provisional`` is then True when that cut the search short (the
        page shows the answer as refining and asks again without ``quick``)."""
        merged, notes, error = self._parse_typed(inputs, typed, lenient)
        if error is None:
            budget = QUICK_SEARCH_EVALUATIONS if quick else None
            result, error = self._plan(inputs, merged, typed, notes, lenient, budget)
        if error is not None:
            return {"ok": False, "inputs": inputs, "error": error}
        plan = result["plan"]
        report = plan["report"]
        decisions = _decision_keys(plan)
        changed = [] if self.previous is None else [k for k, v in decisions.items() if self.previous.get(k) != v]
        if not plan["provisional"]:
            self.previous = decisions  # what changed is judged against the last final answer
        if plan["fits"]:
            self.shown = plan["parallelism"]
        view = render_result(result, report, self.catalog, self.kinds, changed)
        return {"ok": True, "inputs": merged, "view": view, "notes": notes, "provisional": plan["provisional"]}

    def start(self, request_json):
        """A full request as a RefineJob the worker runs a slice at a time."""
        return RefineJob(self, request_json)

    def handle(self, request_json):
        """JSON in, JSON out; a bug in the model or view answers with an error
        result (the page keeps its last good state) instead of killing the worker."""
        request = json.loads(request_json)
        try:
            result = self.evaluate(request.get("inputs", {}), request.get("typed"), bool(request.get("lenient")),
                                   bool(request.get("quick")))
        except Exception as err:  # noqa: BLE001 - reported to the reader, never swallowed silently
            result = {"ok": False, "inputs": request.get("inputs", {}),
                      "error": {"field": None, "text": self.catalog["lab"]["internal_error"].format(detail=type(err).__name__)}}
        return json.dumps(result, sort_keys=True)


class RefineJob:
    """A full request (the search that refines a quick answer) in slices, so the
    worker stays free for the reader's next move: the planner's search runs in
    steps (lab_core.planner.steps) and leaves its plan in the planner's cache,
    then Session.handle answers from it. The worker drops a job the reader has
    moved past (the cache then holds nothing of it)."""

    def __init__(self, session, request_json):
        self.session = session
        self.request_json = request_json
        self.steps = None
        try:
            request = json.loads(request_json)
            merged, _, error = session._parse_typed(request.get("inputs", {}), request.get("typed"),
                                                    bool(request.get("lenient")))
        except Exception:  # noqa: BLE001 - handle() itself reports what is wrong with the request
            return
        if error is None:
            self.steps = plan_json_steps(merged)

    def step(self, milliseconds):
        """Work for about `milliseconds`: the answer's JSON (Session.handle) once
        the search is done, else None (call again)."""
        deadline = time.perf_counter() + milliseconds / 1000.0
        while self.steps is not None:
            try:
                next(self.steps)
            except StopIteration:
                self.steps = None
            except Exception:  # noqa: BLE001 - handle() runs the same search and reports the error
                self.steps = None
            else:
                if time.perf_counter() >= deadline:
                    return None
        return self.session.handle(self.request_json)
