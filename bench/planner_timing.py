"""Timing loops shared by bench_planner.py (CPython) and node_bench.mjs (Pyodide).

Pure standard library, so the same file runs in both interpreters. Every call
builds a fresh Workload, as the page does on each slider move; all calls are
pooled (repeats x cases) for the median and p95. recommend() is timed with the
planner's caches dropped before each call (the full search); the slider walks
keep them, as the page's worker does.
"""
import json
import statistics
import time


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _forget():
    """Drop every cache the planner keeps between calls (a fresh search each time)."""
    from lab_core.planner import memory_table, reuse, space

    reuse.clear()
    space._SPACES.clear()
    memory_table._TABLES.clear()
    memory_table.release_retired()


def time_recommend(cases, repeat):
    """recommend() with nothing reused from earlier calls: the full search."""
    from lab_core import Workload
    from lab_core.planner import recommend

    times, evaluated = [], []
    for case in cases:
        recommend(Workload(**case))  # warm imports once per case
    for _ in range(repeat):
        for case in cases:
            _forget()
            start = time.perf_counter()
            plan = recommend(Workload(**case))
            times.append((time.perf_counter() - start) * 1e3)
    for case in cases:
        _forget()
        evaluated.append(recommend(Workload(**case)).search["plans_evaluated"])
    return times, evaluated


def time_slider_walks(walks, session_config):
    """_slider_walks with the collector as the worker has it once its session is
    ready (lab_view.heap): start-up objects frozen, no automatic passes, one
    pass while idle after each move's full answer (not timed)."""
    import gc

    from lab_view import collect_idle, collect_only_when_idle, freeze_startup_objects

    freeze_startup_objects()
    collect_only_when_idle()
    try:
        return _slider_walks(walks, session_config, collect_idle)
    finally:
        gc.enable()
        gc.unfreeze()


def _slider_walks(walks, session_config, idle=lambda: None):
    """The worker's work per slider move, by part, over drags of each slider
    from each starting state (caches as the page has them: warm from the
    moves before). Parts of the first answer (the quick request the page asks
    for first): the planner (Workload + recommend from the plan on screen),
    the plan as a dict, the view's core (lab_view.view.render_core: what the
    first answer carries), the JSON the worker sends; then the full answer
    the page asks for next: the full search when the first was provisional
    (refine) and the whole view (rest)."""
    from lab_core import Workload
    from lab_core.planner import recommend
    from lab_core.planner.assumptions import QUICK_SEARCH_EVALUATIONS
    from lab_view.view import render_core, render_result

    catalog, kinds = session_config["catalog"], session_config["kinds"]
    _forget()
    parts = {"planner": [], "plan_dict": [], "view": [], "json": [], "total": [], "refine": [], "rest": []}
    by_slider, evaluated, provisional = {}, [], 0
    for walk in walks:
        state = dict(walk["start"])
        shown = recommend(Workload(**state))  # the page had answered the starting state
        hint = None
        for stop in walk["stops"]:
            inputs = dict(state, **{walk["slider"]: stop})
            t0 = time.perf_counter()
            workload = Workload(**inputs)
            # The page's first answer: the quick search from the plan on screen (Session(quick=True)).
            # The plan on screen, as lab_view.Session keeps it: the last one that fit.
            hint = shown.parallelism.to_dict() if shown.fits else hint
            plan = recommend(workload, budget=QUICK_SEARCH_EVALUATIONS, hint=hint)
            shown = plan
            t1 = time.perf_counter()
            result = {"ok": True, "workload": workload.to_dict(), "shape": workload.shape.to_dict(),
                      "plan": plan.to_dict()}
            t2 = time.perf_counter()
            view = render_core(result, result["plan"]["report"], catalog, kinds)
            t3 = time.perf_counter()
            json.dumps({"ok": True, "inputs": inputs, "view": view, "notes": []}, sort_keys=True)
            t4 = time.perf_counter()
            for name, a, b in (("planner", t0, t1), ("plan_dict", t1, t2), ("view", t2, t3), ("json", t3, t4),
                               ("total", t0, t4)):
                parts[name].append((b - a) * 1e3)
            by_slider.setdefault(walk["slider"], []).append((t4 - t0) * 1e3)
            evaluated.append(plan.search["plans_evaluated"])
            if plan.provisional:
                # The full search the page asks for when the reader stops (timed like the planner part).
                provisional += 1
                t5 = time.perf_counter()
                shown = recommend(Workload(**inputs))
                parts["refine"].append((time.perf_counter() - t5) * 1e3)
                result["plan"] = shown.to_dict()
            # The rest of the view, with the full answer.
            t6 = time.perf_counter()
            render_result(result, result["plan"]["report"], catalog, kinds, ())
            parts["rest"].append((time.perf_counter() - t6) * 1e3)
            idle()  # the worker's pass once the reader pauses (worker.js collectWhenIdle)
    return {"parts": {name: summarize(values) for name, values in parts.items() if values},
            "provisional": provisional, "moves": len(evaluated),
            "by_slider": {name: summarize(values) for name, values in by_slider.items()},
            "plans_evaluated": {"median": statistics.median(evaluated), "p95": percentile(evaluated, 0.95),
                                "max": max(evaluated)}}


def time_plan_json(cases, repeat):
    from lab_core.planner import plan_json

    times = []
    for _ in range(repeat):
        for case in cases:
            _forget()
            start = time.perf_counter()
            plan_json(case)
            times.append((time.perf_counter() - start) * 1e3)
    return times


def time_evaluate(pairs, repeat):
    from lab_core import Parallelism, Workload, evaluate

    built = [(Workload(**w), Parallelism(**p)) for w, p in pairs]
    times = []
    for _ in range(repeat):
        for w, p in built:
            start = time.perf_counter()
            evaluate(w, p)
            times.append((time.perf_counter() - start) * 1e3)
    return times


def summarize(times):
    return {"calls": len(times), "median_ms": statistics.median(times), "p95_ms": percentile(times, 0.95),
            "max_ms": max(times)}


# The slowest cases the bench names: the pooled p95 of 5 repeats falls on the third.
SLOWEST_SHOWN = 3


def slowest_cases(times, cases):
    """[(case index, median ms)] of the SLOWEST_SHOWN cases with the highest median;
    times as time_recommend returns them (repeat after repeat of every case)."""
    n = len(cases)
    medians = [statistics.median(times[i::n]) for i in range(n)]
    return sorted(enumerate(medians), key=lambda item: -item[1])[:SLOWEST_SHOWN]


def run_all(cases_json, repeat=5, evaluate_repeat=200):
    """Everything the bench prints, as a JSON string (called from Node too)."""
    data = json.loads(cases_json)
    rec_times, evaluated = time_recommend(data["planner_cases"], repeat)
    out = {
        "recommend": summarize(rec_times),
        "slowest": slowest_cases(rec_times, data["planner_cases"]),
        "plan_json": summarize(time_plan_json(data["planner_cases"], repeat)),
        "plans_evaluated": {"median": statistics.median(evaluated), "p95": percentile(evaluated, 0.95),
                            "max": max(evaluated), "mean": sum(evaluated) / len(evaluated)},
        "evaluate": None,
    }
    if data.get("evaluate_cases"):
        out["evaluate"] = summarize(time_evaluate(data["evaluate_cases"], evaluate_repeat))
    if data.get("slider_walks"):
        out["slider_walks"] = time_slider_walks(data["slider_walks"], data["session_config"])
    return json.dumps(out)
