"""Timing loops shared by bench_planner.py (CPython) and node_bench.mjs (Pyodide).

Pure standard library, so the same file runs in both interpreters. Every call
builds a fresh Workload, as the page does on each slider move; all calls are
pooled (repeats x cases) for the median and p95.
"""
import json
import statistics
import time


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def time_recommend(cases, repeat):
    from lab_core import Workload
    from lab_core.planner import recommend

    times, evaluated = [], []
    for case in cases:
        recommend(Workload(**case))  # warm imports and caches once per case
    for _ in range(repeat):
        for case in cases:
            start = time.perf_counter()
            plan = recommend(Workload(**case))
            times.append((time.perf_counter() - start) * 1e3)
    for case in cases:
        evaluated.append(recommend(Workload(**case)).search["plans_evaluated"])
    return times, evaluated


def time_plan_json(cases, repeat):
    from lab_core.planner import plan_json

    times = []
    for _ in range(repeat):
        for case in cases:
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


def run_all(cases_json, repeat=5, evaluate_repeat=200):
    """Everything the bench prints, as a JSON string (called from Node too)."""
    data = json.loads(cases_json)
    rec_times, evaluated = time_recommend(data["planner_cases"], repeat)
    out = {
        "recommend": summarize(rec_times),
        "plan_json": summarize(time_plan_json(data["planner_cases"], repeat)),
        "plans_evaluated": {"median": statistics.median(evaluated), "p95": percentile(evaluated, 0.95),
                            "max": max(evaluated), "mean": sum(evaluated) / len(evaluated)},
        "evaluate": None,
    }
    if data.get("evaluate_cases"):
        out["evaluate"] = summarize(time_evaluate(data["evaluate_cases"], evaluate_repeat))
    return json.dumps(out)
