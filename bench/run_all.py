"""`make bench`: every speed figure the project tracks, printed, never asserted.

1. lab_core.evaluate() per call in CPython, next to the peer calculator
   llm-analysis (installed by the Makefile in .venv-peer) on the same configs.
2. recommend() / plan_json() / evaluate() over the 50 planner workloads, in
   CPython and in Pyodide under Node.
3. The page in headless Chromium: first precomputed paint, live lab on a first
   and a repeat visit, slider-move-to-meters latency over 200 moves.
4. The page on a real network (issue 18): served gzipped and throttled
   (150 ms / 1.6 MB/s and 150 ms / 0.5 MB/s), and fast 4G with the build's
   precompressed files: bytes on the wire before live, live-lab time, restarts,
   files downloaded twice, the service worker's precache, the repeat visit.
"""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(title, command):
    print(f"\n=== {title} ===", flush=True)
    done = subprocess.run(command, cwd=ROOT, check=False)
    if done.returncode != 0:
        print(f"({title}: exited with {done.returncode})", flush=True)
    return done.returncode


def main():
    peer = os.environ.get("PEER_PYTHON") or str(ROOT / ".venv-peer" / "bin" / "python")
    failures = 0
    failures += bool(run("Model: evaluate() vs llm-analysis", [sys.executable, "bench/bench_model.py", "--peer-python", peer]))
    failures += bool(run("Planner: CPython and Pyodide under Node", [sys.executable, "bench/bench_planner.py", "--pyodide"]))
    failures += bool(run("Page: headless Chromium", [sys.executable, "bench/bench_browser.py", "--site", "site"]))
    failures += bool(run("Page on a throttled network: host gzips on the fly",
                         [sys.executable, "bench/bench_network.py", "--site", "site", "--compress", "gzip", "--profiles", "fast4g,slow"]))
    failures += bool(run("Page on a throttled network: host sends the precompressed files",
                         [sys.executable, "bench/bench_network.py", "--site", "site", "--compress", "precompressed", "--profiles", "fast4g"]))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
