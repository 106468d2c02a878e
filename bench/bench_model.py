"""Time lab_core.evaluate() per call (median, p95) and compare with llm-analysis.

Standalone: python3 bench/bench_model.py [--peer-python PATH]
The peer (PyPI `llm-analysis`) runs in a subprocess with the interpreter given
by --peer-python (or this one, if it can import llm_analysis). When the peer
cannot run a configuration, the output says so instead of inventing a number.
The Pyodide half is wired separately and reuses bench/cases.py.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from cases import bench_cases  # bench/ is the script's own folder
from lab_core import Parallelism, Workload, evaluate

GPU_NAMES = {"a100_80gb": "a100-sxm-80gb", "h100_80gb": "h100-sxm-80gb"}

PEER_SCRIPT = r'''
import json, logging, statistics, sys, time
logging.disable(logging.CRITICAL)
from llm_analysis.analysis import train
from llm_analysis.config import ModelConfig, model_configs
cases = json.loads(sys.stdin.read())
out = []
for case in cases:
    name = "bench_%d" % len(out)
    model_configs[name] = ModelConfig(name=name, num_layers=case["layers"], n_head=case["heads"],
                                      hidden_dim=case["hidden"], vocab_size=51200, max_seq_len=case["seq_len"])
    kwargs = dict(model_name=name, gpu_name=case["gpu"], total_num_gpus=case["gpus"], tp_size=case["tp"],
                  pp_size=case["pp"], seq_len=case["seq_len"], global_batch_size=case["global_batch"],
                  batch_size_per_gpu=case["micro_batch"], activation_recomputation=case["recompute"],
                  ds_zero=case["zero"], flash_attn=case["flash"], log_level="CRITICAL")
    try:
        train(**kwargs)
        samples = []
        for _ in range(case["repeat"]):
            t0 = time.perf_counter()
            result = train(**kwargs)
            samples.append(time.perf_counter() - t0)
        samples.sort()
        out.append({"ok": True, "median_s": statistics.median(samples),
                    "p95_s": samples[int(0.95 * (len(samples) - 1))],
                    "latency_per_iter_s": result.get("latency_per_iter")})
    except Exception as exc:
        out.append({"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)})
print(json.dumps(out))
'''


def time_lab(cases, repeat):
    results = []
    for w, p in cases:
        workload = Workload(**w)
        par = Parallelism(**p)
        evaluate(workload, par)  # warm the per-workload cache
        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            report = evaluate(workload, par)
            samples.append(time.perf_counter() - t0)
        samples.sort()
        results.append((statistics.median(samples), samples[int(0.95 * (len(samples) - 1))], report))
    return results


def peer_cases(cases, repeat):
    rows = []
    for w, p in cases:
        rows.append({
            "layers": w["layers"], "heads": w["heads"], "hidden": w["hidden"], "seq_len": w["seq_len"],
            "gpu": GPU_NAMES.get(w.get("gpu", "a100_80gb"), "unsupported"), "gpus": w["gpus"],
            "tp": p["tp"], "pp": p["pp"], "global_batch": w["global_batch_tokens"] // w["seq_len"],
            "micro_batch": p["micro_batch"], "zero": p["zero"],
            "recompute": {"none": 0, "selective": 1, "full": 2}[p["recompute"]],
            "flash": w.get("flash_attention", True), "repeat": repeat,
        })
    return rows


def run_peer(python, cases, repeat):
    try:
        done = subprocess.run([python, "-c", PEER_SCRIPT], input=json.dumps(peer_cases(cases, repeat)),
                              capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"peer could not start: {exc}"
    if done.returncode != 0:
        return None, "peer failed: " + done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "peer failed"
    return json.loads(done.stdout.strip().splitlines()[-1]), None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--peer-repeat", type=int, default=50)
    parser.add_argument("--peer-python", default=os.environ.get("PEER_PYTHON", sys.executable))
    args = parser.parse_args()
    cases = bench_cases()
    lab = time_lab(cases, args.repeat)
    peer, why = run_peer(args.peer_python, cases, args.peer_repeat)
    print(f"lab_core.evaluate() in CPython {sys.version.split()[0]}, {args.repeat} calls per config; "
          f"peer llm-analysis train() ({args.peer_python}), {args.peer_repeat} calls per config")
    print(f"{'config':44s} {'lab med µs':>10s} {'lab p95 µs':>10s} {'peer med µs':>11s} {'peer p95 µs':>11s} {'speed-up':>8s}")
    meds = []
    for i, ((w, p), (med, p95, report)) in enumerate(zip(cases, lab)):
        label = f"{w['params']:.3g} on {w['gpus']} {w.get('gpu', 'a100_80gb')} tp{p['tp']}pp{p['pp']}dp{p['dp']}z{p['zero']}"
        meds.append(med)
        if peer is None:
            peer_text = f"{'n/a':>11s} {'n/a':>11s} {'':>8s}"
        elif not peer[i]["ok"]:
            peer_text = f"{'failed':>11s} {'':>11s} {'':>8s}  ({peer[i]['error'][:60]})"
        else:
            pm, pp95 = peer[i]["median_s"], peer[i]["p95_s"]
            peer_text = f"{pm * 1e6:11.0f} {pp95 * 1e6:11.0f} {pm / med:7.0f}x"
        print(f"{label:44s} {med * 1e6:10.1f} {p95 * 1e6:10.1f} {peer_text}")
    print(f"lab_core median over configs: {statistics.median(meds) * 1e6:.1f} µs (target < 50 µs)")
    if why:
        print(f"peer: {why}")


if __name__ == "__main__":
    main()
