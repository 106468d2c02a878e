"""Time lab_core.planner.recommend() over the fixed 50 workloads, in CPython and
(with --pyodide) in Pyodide under Node.

Standalone, from the repo root:
    python3 bench/bench_planner.py [--repeat N] [--pyodide] [--json]
Prints one row per runtime: median and p95 ms per recommend() call (all
repeats x 50 cases pooled; a fresh Workload per call, as on a slider move),
plan_json() the same way, and plans evaluated per call. With --pyodide it also
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


def cases_json():
    return json.dumps({"planner_cases": PLANNER_CASES, "evaluate_cases": _evaluate_cases()})


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


def table(results):
    rows = ["%-26s %-44s %9s %8s %s" % ("case set", "runtime", "median ms", "p95 ms", "plans evaluated per call")]
    for res in results:
        ev = res["plans_evaluated"]
        per_call = "median %g, p95 %g, max %d, mean %.1f" % (ev["median"], ev["p95"], ev["max"], ev["mean"])
        rows.append("%-26s %-44s %9.2f %8.2f %s" % ("recommend() x 50 cases", res["runtime"],
                                                     res["recommend"]["median_ms"], res["recommend"]["p95_ms"],
                                                     per_call))
        rows.append("%-26s %-44s %9.2f %8.2f" % ("plan_json() x 50 cases", res["runtime"],
                                                  res["plan_json"]["median_ms"], res["plan_json"]["p95_ms"]))
        if res.get("evaluate"):
            rows.append("%-26s %-44s %9.3f %8.3f %s" % ("evaluate() bench_cases()", res["runtime"],
                                                         res["evaluate"]["median_ms"], res["evaluate"]["p95_ms"],
                                                         "1 (one layout)"))
        else:
            rows.append("%-26s %-44s %9s %8s" % ("evaluate() bench_cases()", res["runtime"], "skipped",
                                                  "(no bench/cases.py)"))
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
