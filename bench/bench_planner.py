"""Time lab_core.planner.recommend() over the fixed 50 workloads, in CPython and
(with --pyodide) in Pyodide under Node.

Standalone, from the repo root:
    python3 bench/bench_planner.py [--repeat N] [--pyodide] [--json]
Prints one row per runtime: median and p95 ms per recommend() call (all
repeats x cases pooled; a fresh Workload per call and the planner's caches
dropped: the full search) with the three slowest cases (the p95 falls on the
third), plan_json() the same way, plans evaluated per call,
and the worker's time per slider move by part (planner, plan dict, view, JSON)
and by slider over drags of every slider from the default, demo-card and heaviest scenario states. With --pyodide it also
times evaluate() per call on bench/cases.py's bench_cases() when that file
exists. Needs `npm ci` (node_modules/pyodide) for --pyodide.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import planner_timing  # bench/ is the script's own folder
from planner_cases import PLANNER_CASES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _evaluate_cases():
    try:
        from cases import bench_cases
    except ImportError:
        return None
    return [[w, p] for w, p in bench_cases()]


# Scenario states the walks also start from besides the demo path's: the heaviest answers
# (a mixture of experts on 2,048 GPUs; 405B at 128K tokens with context parallelism).
HEAVY_SCENARIOS = ("deepseek-v3", "llama3-405b-128k")

# Positions each slider walk visits, evenly spread over the slider's stops, both ends included.
WALK_POSITIONS = 8


def slider_walks():
    """Drags of every slider over its range (extremes included) from the lab's
    default state, from each demo card's state and from HEAVY_SCENARIOS', as
    the page sends them: full lab inputs."""
    from labsite.labpage import default_inputs, load_lab_layout
    from labsite.scenarios import load_demo_path, load_scenario
    from labsite.sliders import slider_stops

    layout = load_lab_layout()
    defaults = default_inputs()
    scenarios = list(load_demo_path()) + [load_scenario(name) for name in HEAVY_SCENARIOS]
    starts = [defaults] + [dict(defaults, **scenario.workload) for scenario in scenarios]
    walks = []
    for slider in layout["sliders"]:
        stops = slider_stops(slider["name"], slider["series"])
        picks = sorted({stops[round(i * (len(stops) - 1) / (WALK_POSITIONS - 1))] for i in range(WALK_POSITIONS)})
        walks += [{"slider": slider["name"], "start": start, "stops": picks} for start in starts]
    return walks


def session_config():
    from labsite.catalog import load_catalogs
    from labsite.labpage import load_lab_layout
    from labsite.pages.lab import runtime_session_config
    from labsite.pages.rules import load_rules

    return runtime_session_config(load_lab_layout(), load_catalogs()["en"], "en", load_rules())


def cases_json():
    return json.dumps({"planner_cases": PLANNER_CASES, "evaluate_cases": _evaluate_cases(),
                       "slider_walks": slider_walks(), "session_config": session_config()})


def run_cpython(repeat):
    result = json.loads(planner_timing.run_all(cases_json(), repeat))
    result["runtime"] = "CPython %d.%d.%d" % sys.version_info[:3]
    return result


def run_pyodide(repeat):
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is required for --pyodide")
    from labsite.assets import python_zip_bytes

    with tempfile.TemporaryDirectory() as tmp:
        zip_path = os.path.join(tmp, "py.zip")
        with open(zip_path, "wb") as f:
            f.write(python_zip_bytes())
        cases_path = os.path.join(tmp, "cases.json")
        with open(cases_path, "w", encoding="utf-8") as f:
            f.write(cases_json())
        done = subprocess.run([node, os.path.join("bench", "node_bench.mjs"), zip_path, cases_path, str(repeat)],
                              cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout)


def case_label(case):
    """A planner case in a few words: parameters, GPUs and preset, tokens per sequence, experts."""
    label = "%.3gB on %d %s" % (case["params"] / 1e9, case["gpus"], case.get("gpu", "a100_80gb"))
    if case.get("seq_len"):
        label += ", %dK tokens" % (case["seq_len"] // 1024)
    if case.get("experts"):
        label += ", %d experts" % case["experts"]
    return label


# recommend() p95 targets by runtime (the planner's issues: the full search within a frame's budget).
RECOMMEND_P95_TARGET_MS = {"CPython": 5.0, "Pyodide": 16.0}


def table(results):
    rows = ["%-26s %-44s %9s %8s %s" % ("case set", "runtime", "median ms", "p95 ms", "plans evaluated per call")]
    for res in results:
        ev = res["plans_evaluated"]
        per_call = "median %g, p95 %g, max %d, mean %.1f" % (ev["median"], ev["p95"], ev["max"], ev["mean"])
        target = next((ms for name, ms in RECOMMEND_P95_TARGET_MS.items() if res["runtime"].startswith(name)), None)
        if target is not None:
            per_call += "; target p95 < %g ms" % target
        rows.append("%-26s %-44s %9.2f %8.2f %s" % ("recommend() x %d cases" % len(PLANNER_CASES), res["runtime"],
                                                     res["recommend"]["median_ms"], res["recommend"]["p95_ms"],
                                                     per_call))
        rows.append("  slowest (median ms): " + "; ".join(
            "case %d, %s %.2f" % (i, case_label(PLANNER_CASES[i]), ms) for i, ms in res["slowest"]))
        rows.append("%-26s %-44s %9.2f %8.2f" % ("plan_json() x %d cases" % len(PLANNER_CASES), res["runtime"],
                                                  res["plan_json"]["median_ms"], res["plan_json"]["p95_ms"]))
        if res.get("evaluate"):
            rows.append("%-26s %-44s %9.3f %8.3f %s" % ("evaluate() bench_cases()", res["runtime"],
                                                         res["evaluate"]["median_ms"], res["evaluate"]["p95_ms"],
                                                         "1 (one layout)"))
        else:
            rows.append("%-26s %-44s %9s %8s" % ("evaluate() bench_cases()", res["runtime"], "skipped",
                                                  "(no bench/cases.py)"))
    for res in results:
        walks = res.get("slider_walks")
        if not walks:
            continue
        rows.append("")
        rows.append("Worker per slider move in %s (drags of each slider over %d positions, extremes included,"
                    % (res["runtime"], WALK_POSITIONS))
        rows.append("from the default state, each demo card and %s; planner caches warm as in the page):"
                    % ", ".join(HEAVY_SCENARIOS))
        rows.append("  %-22s %9s %8s %8s" % ("part", "median ms", "p95 ms", "max ms"))
        for name, label in (("planner", "planner (quick search)"), ("plan_dict", "plan as dict"),
                            ("view", "view's core (lab_view)"), ("json", "JSON"), ("total", "first answer, total"),
                            ("refine", "refine (full search)"), ("rest", "full answer's view")):
            part = walks["parts"].get(name)
            if part is None:
                continue
            rows.append("  %-22s %9.2f %8.2f %8.2f" % (label, part["median_ms"], part["p95_ms"], part["max_ms"]))
        for name, part in walks["by_slider"].items():
            rows.append("  %-22s %9.2f %8.2f %8.2f  (%d moves)" % ("first answer, " + name, part["median_ms"], part["p95_ms"],
                                                                  part["max_ms"], part["calls"]))
        ev = walks["plans_evaluated"]
        rows.append("  plans evaluated per first answer: median %g, p95 %g, max %d; provisional (refined after): %d of %d"
                    % (ev["median"], ev["p95"], ev["max"], walks["provisional"], walks["moves"]))
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pyodide", action="store_true", help="also run in Pyodide under Node")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = [run_cpython(args.repeat)]
    if args.pyodide:
        results.append(run_pyodide(args.repeat))
    print(json.dumps(results, indent=1) if args.json else table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
