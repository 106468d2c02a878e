"""One reader's lab session: inputs in, formatted view out (JSON strings).

The browser worker creates one Session with the page's catalog and calls
``handle`` for every change; the build calls the same code for the first
paint and the scenario cards. JSON strings cross the JS/Python boundary so no
proxy objects leak and CPython and Pyodide see identical data.

Requests (``handle``): ``{"kind": "evaluate", "inputs", "typed", "lenient",
"pins", "units", "compare"}`` is a reader's move: the plan of the inputs
within the pins, with, when ``compare`` holds a pinned state A
(``{"inputs", "pins"}``), A and this plan side by side. ``{"kind": "extras",
"state": {"inputs", "pins"}, "units", "curves": bool, "export": format or
null, "pins": bool}`` asks, after the answer is on screen, for what open
panels show: the plan's curves, its launch configuration and the pin
controls' options.
"""
import json
import time

from lab_core.curves import curves_steps
from lab_core.errors import LabInputError
from lab_core.export import FRAMEWORKS, export
from lab_core.inputs import BOOL_WORDS, SPEC_BY_NAME
from lab_core.parallelism import Parallelism
from lab_core.planner.json_plan import plan_json, plan_json_steps
from lab_core.planner.assumptions import QUICK_SEARCH_EVALUATIONS
from lab_core.planner.steps import finish
from lab_core.recompute_modules import canonical as canonical_modules
from lab_core.workload import Workload

from .chinese import tighten
from .compare import compare_html, compare_rows, compare_summary
from .curves import render_curves
from .pins import encode, pins_view, read_pins
from .presets import preset_view
from .quantities import QuantityError, byte_units, format_quantity
from .typed import parse_typed
from .view import render_core, render_error, render_result
from .warm import WarmJob


def _decision_keys(plan):
    return {d["id"]: (d["option"], d["reason"]) for d in plan["decisions"]}


def export_view(exported, words):
    """An export for the page: the file, and a warning when the framework will not start it as written."""
    out = exported.to_dict()
    refused = exported.refused and FRAMEWORKS.get(exported.format)
    out["warning"] = words["export_panel"]["refused"].format(framework=refused.name) if refused else ""
    return out


class Session:
    def __init__(self, config):
        """``config``: ``{"catalog": {...}, "kinds": {input name: quantity kind}}``."""
        if isinstance(config, str):
            config = json.loads(config)
        self.catalog = config["catalog"]
        self.kinds = config["kinds"]
        self._words = {}  # the catalog per memory unit other than "gb" (words)
        self.previous = None
        # plan_json results by state (inputs and pins): the compare baseline A
        # and the latest answer, which the extras request asks about next.
        self.plans = {}
        # The plan on screen (Plan.to_dict()["parallelism"]): a quick answer starts from it.
        self.shown = None

    def _plan_of(self, inputs, pins, budget=None, hint=None):
        """plan_json of a state, remembered for the compare baseline and the extras."""
        key = json.dumps([inputs, pins, budget, hint], sort_keys=True)
        result = self.plans.get(key)
        if result is None:
            result = plan_json(inputs, pins or None, budget, hint)
            if result["ok"] and result["plan"]["provisional"]:
                return result  # the full search replaces it: a later quick request asks the planner again
            if len(self.plans) > 8:
                self.plans.clear()
            self.plans[key] = result
        return result

    def plan_result(self, inputs, pins=None):
        """plan_json of a state the session has answered (remembered), e.g. for the command line's text."""
        return self._plan_of(inputs, read_pins(pins))

    def words(self, units="gb"):
        """The catalog with memory written in the reader's unit (quantities.BYTE_UNITS)."""
        if units == "gb":
            return self.catalog
        found = self._words.get(units)
        if found is None:  # one catalog per unit, so remembered numbers are found again
            found = self._words[units] = dict(self.catalog, units=byte_units(self.catalog["units"], units))
        return found

    def _error(self, name, value, reason):
        return render_error({"field": name, "value": value, "reason": reason}, self.catalog, self.kinds)

    def _read(self, name, text):
        """(value, None) or (None, error) for what the reader wrote for one input."""
        spec = SPEC_BY_NAME.get(name)
        if spec is not None and spec.kind == "bool":
            value = BOOL_WORDS.get(str(text).strip().lower())
            return (value, None) if value is not None else (None, self._error(name, text, "default"))
        if spec is not None and spec.kind == "choice":
            match = [c for c in spec.choices if str(c) == str(text).strip()]
            return (match[0], None) if match else (None, self._error(name, text, "default"))
        if spec is not None and spec.kind == "modules":
            try:
                return list(canonical_modules(text)), None
            except LabInputError as err:
                return None, self._error(name, err.value, err.reason)
        try:
            return parse_typed(text, self.kinds.get(name, "plain"), self.catalog["unit_words"]), None
        except QuantityError as err:
            return None, self._error(name, text, err.reason)

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

    def _plan(self, inputs, merged, typed, notes, lenient, pins=None, budget=None):
        """plan_json of ``merged`` within ``pins`` (``budget``: recommend()'s, for a
        quick answer, which starts from the plan on screen); when ``lenient``, each
        input the model rejects is reported and put back to its value in ``inputs``."""
        pins = pins if pins is not None else {}
        hint = self.shown if budget is not None else None
        for _ in range(len(typed or {}) + len(pins) + 1):
            result = self._plan_of(merged, pins, budget, hint)
            if result["ok"]:
                return result, None
            error = render_error(result["error"], self.catalog, self.kinds)
            name = result["error"]["field"]
            if lenient and name in pins:  # a shared link's pin the workload cannot run: say so, plan without it
                notes.append(error)
                del pins[name]
                continue
            if not lenient or name not in (typed or {}) or merged.get(name) == inputs.get(name):
                return None, error
            notes.append(error)
            merged[name] = inputs.get(name)
        return None, error

    def evaluate(self, inputs, typed=None, lenient=False, pins=None, units="gb", compare=None, quick=False):
        """Return ``{"ok", "inputs", "pins", "view", "notes", "compare", "provisional"}``
        or ``{"ok": False, "inputs", "error"}``.

        ``pins``: {field: text} of pinned plan choices (pins.PIN_FIELDS);
        ``units``: how memory is written ("gb" or "gib"); ``compare``: a
        pinned state A, ``{"inputs", "pins"}``, to show beside this plan.
        ``notes``: ``[{"field", "text"}]`` for values that were kept or dropped.
        ``quick``: a slider move's first answer: the planner stops after
        QUICK_SEARCH_EVALUATIONS plans once one fits (``provisional`` is then True
        when that cut the search short) and the view holds only the parts a move
        changes at once (view.CORE_PARTS, ``partial`` True; no compare); the page
        shows it as refining and asks again without ``quick`` for the rest."""
        pins = read_pins(pins)
        merged, notes, error = self._parse_typed(inputs, typed, lenient)
        if error is None:
            budget = QUICK_SEARCH_EVALUATIONS if quick else None
            result, error = self._plan(inputs, merged, typed, notes, lenient, pins, budget)
        if error is not None:
            return {"ok": False, "inputs": inputs, "error": error}
        words = self.words(units)
        plan = result["plan"]
        report = plan["report"]
        if plan["fits"]:
            self.shown = plan["parallelism"]
        if quick:
            # The first answer to a move: the parts it changes at once (view.CORE_PARTS); the page
            # keeps the rest, shows the answer as refining and asks again without ``quick``.
            view = render_core(result, report, words, self.kinds)
        else:
            decisions = _decision_keys(plan)
            changed = [] if self.previous is None else [k for k, v in decisions.items() if self.previous.get(k) != v]
            if not plan["provisional"]:
                self.previous = decisions  # what changed is judged against the last final answer
            view = render_result(result, report, words, self.kinds, changed)
        view["preset"] = preset_view(merged, result["shape"], words)
        out = {"ok": True, "inputs": merged, "pins": {k: encode(v) for k, v in pins.items()}, "view": tighten(view),
               "notes": notes, "compare": None, "provisional": plan["provisional"], "partial": quick}
        if compare is not None and not quick:
            out["compare"] = tighten(self._compare(compare, result, words))
        return out

    def _compare(self, state, current, words):
        """The compare panel: the pinned state A beside the current plan B."""
        baseline = self._plan_of(state.get("inputs") or {}, read_pins(state.get("pins")))
        texts = words["compare"]
        if not baseline["ok"]:
            return {"ok": False, "summary": texts["a_invalid"].format(
                error=render_error(baseline["error"], words, self.kinds)["text"]), "html": ""}
        a = {"plan": baseline["plan"], "report": baseline["plan"]["report"], "workload": baseline["workload"]}
        b = {"plan": current["plan"], "report": current["plan"]["report"], "workload": current["workload"]}
        rows = compare_rows(a, b, words)
        return {"ok": True, "rows": rows, "summary": compare_summary(rows, words),
                "html": compare_html(rows, words, (texts["columns"]["a"], texts["columns"]["b"]))}

    def extras(self, state, units="gb", want_curves=False, export_format=None, want_pins=False):
        """What open panels show for the plan of ``state`` ({"inputs", "pins"}): its
        curves (rendered), its launch configuration in ``export_format`` and the
        pin controls' options. The page asks once the answer is on screen, only
        for open panels, and the worker computes them a slice at a time
        (extras_steps, Session.start), so a move never waits for them."""
        return finish(self.extras_steps(state, units, want_curves, export_format, want_pins))

    def extras_steps(self, state, units="gb", want_curves=False, export_format=None, want_pins=False):
        """extras() as steps (lab_core.planner.steps): one curve point each."""
        pins = read_pins(state.get("pins"))
        result = self._plan_of(state.get("inputs") or {}, pins)
        if not result["ok"]:
            return {"kind": "extras", "ok": False, "error": render_error(result["error"], self.catalog, self.kinds)}
        plan = result["plan"]
        workload = Workload.from_dict(dict(result["workload"], gpus=plan["gpus"]["used"]))
        par = Parallelism.from_dict(plan["parallelism"])
        words = self.words(units)
        out = {"kind": "extras", "ok": True, "curves": None, "export": None, "pins": None}
        if want_pins:
            out["pins"] = tighten(pins_view(pins, result, words))
        if want_curves:
            points = yield from curves_steps(workload, par)
            out["curves"] = tighten(render_curves(points, plan["gpus"]["used"], words))
        if export_format:
            out["export"] = export_view(export(par, workload, export_format, words["export"]), words)
        return out

    def start(self, request_json):
        """A full request, or an extras request, as a RefineJob the worker runs a slice at a time."""
        return RefineJob(self, request_json)

    def warm(self, requests_json):
        """The reader's likely next moves (a JSON list of requests) as a job the
        worker runs a slice at a time while idle, answers thrown away (warm.py)."""
        return WarmJob(self, requests_json)

    def _internal_error(self, request, err):
        return {"ok": False, "inputs": request.get("inputs", {}),
                "error": {"field": None, "text": self.catalog["lab"]["internal_error"].format(detail=type(err).__name__)}}

    def _request_extras(self, request):
        return self.extras_steps(request.get("state") or {}, request.get("units", "gb"), bool(request.get("curves")),
                                 request.get("export"), bool(request.get("pins")))

    def extras_answer_steps(self, request):
        """handle()'s answer to an extras request (a dict), as steps: its JSON."""
        try:
            result = yield from self._request_extras(request)
        except Exception as err:  # noqa: BLE001 - reported to the reader, as handle() does
            result = self._internal_error(request, err)
        result["kind"] = "extras"
        return json.dumps(result, sort_keys=True)

    def handle(self, request_json):
        """JSON in, JSON out; a bug in the model or view answers with an error
        result (the page keeps its last good state) instead of killing the worker."""
        request = json.loads(request_json)
        kind = request.get("kind", "evaluate")
        try:
            if kind == "extras":
                result = finish(self._request_extras(request))
            else:
                result = self.evaluate(request.get("inputs", {}), request.get("typed"), bool(request.get("lenient")),
                                       request.get("pins"), request.get("units", "gb"), request.get("compare"),
                                       bool(request.get("quick")))
        except Exception as err:  # noqa: BLE001 - reported to the reader, never swallowed silently
            result = self._internal_error(request, err)
        result["kind"] = kind
        return json.dumps(result, sort_keys=True)


class RefineJob:
    """A full request (the search that refines a quick answer) in slices, so the
    worker stays free for the reader's next move: the planner's search runs in
    steps (lab_core.planner.steps) and leaves its plan in the planner's cache,
    then Session.handle answers from it. An extras request (the open panels)
    runs in steps too and answers itself. The worker drops a job the reader
    has moved past (the cache then holds nothing of it)."""

    def __init__(self, session, request_json):
        self.session = session
        self.request_json = request_json
        self.steps = None
        self.answer = None
        try:
            request = json.loads(request_json)
            if request.get("kind") == "extras":
                self.steps = session.extras_answer_steps(request)
                return
            merged, _, error = session._parse_typed(request.get("inputs", {}), request.get("typed"),
                                                    bool(request.get("lenient")))
            pins = read_pins(request.get("pins"))
        except Exception:  # noqa: BLE001 - handle() itself reports what is wrong with the request
            return
        if error is None:
            # The search handle() runs next: within the request's pins (a bad pin ends the
            # steps at once and handle() says why, dropping it when the request is lenient).
            self.steps = plan_json_steps(merged, pins or None)

    def step(self, milliseconds):
        """Work for about `milliseconds`: the answer's JSON (Session.handle), built in
        the slice after the one the search ends in, else None (call again)."""
        deadline = time.perf_counter() + milliseconds / 1000.0
        while self.steps is not None:
            try:
                next(self.steps)
            except StopIteration as done:
                self.steps = None
                if isinstance(done.value, str):  # an extras answer (JSON)
                    self.answer = done.value
                else:
                    # The view (about a millisecond in CPython, a few in Pyodide) gets a slice of
                    # its own, so a move that arrives meanwhile waits for the search's last step
                    # or for the view, never for both.
                    return None
            except Exception:  # noqa: BLE001 - an error handle() reports
                self.steps = None
            else:
                if time.perf_counter() >= deadline:
                    return None
        return self.answer if self.answer is not None else self.session.handle(self.request_json)
