"""The lab page's speed in headless Chromium: prints figures, asserts nothing.

    python bench/bench_browser.py [--site DIR] [--runs 5] [--moves 200] [--json FILE]

Builds the site into a temporary directory (unless ``--site`` names a built
one), serves it with labtools.serve and drives the Chromium labtools.browser
chooses. Figures (milliseconds from navigation start unless said otherwise):

- first precomputed paint: first-contentful-paint, and when ``#lab-app`` (with the
  precomputed numbers) exists in the DOM;
- live lab, first visit: a fresh browser context (empty HTTP cache, no
  service worker) until the ``lab:live`` mark, with the boot kind;
- live lab, repeat visit: the same context navigated again, once the service
  worker controls it (HTTP cache + service worker);
- cold boot for reference: first visit with the snapshot request refused (the
  worker's cold fallback);
- slider move -> updated meters over N moves, measured in the page: an
  ``input`` event on a slider (a deterministic walk over all sliders), to
  ``#lab-app[data-applied-seq]`` changing (DOM updated), and to the start of the
  next frame after it (``requestAnimationFrame``); plus the worker's own time.

Targets (issues 5/6): first paint < 1 s; live < 1.5 s first visit, < 1.2 s
repeat; slider -> meters p95 < 16 ms.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from labtools.browser import LAUNCH_ARGS, executable_path
from labtools.serve import serve_in_thread

ROOT = Path(__file__).resolve().parents[1]

TIMEOUT_MS = 120_000

# Records when #lab-app first exists (the precomputed result is part of it).
INIT_SCRIPT = """
(() => {
  const seen = () => {
    if (document.getElementById("lab-app") && !window.__labPresentAt) window.__labPresentAt = performance.now();
  };
  new MutationObserver(seen).observe(document, { childList: true, subtree: true });
})();
"""

PAINT_JS = """() => ({
  fcp: (performance.getEntriesByName("first-contentful-paint")[0] || {}).startTime ?? null,
  labPresent: window.__labPresentAt ?? null,
})"""

LIVE_JS = """() => ({
  live: performance.getEntriesByName("lab:live")[0].startTime,
  workerStart: (performance.getEntriesByName("lab:worker-start").slice(-1)[0] || {}).startTime ?? null,
  bootKind: document.getElementById("lab-app").dataset.bootKind,
  bootMs: Number(document.getElementById("lab-app").dataset.bootMs),
})"""

# One move at a time (the next starts after the previous one is on screen), so
# coalescing never hides a slow answer.
MOVES_JS = """async (moves) => {
  const lab = document.getElementById("lab-app");
  const sliders = [...lab.querySelectorAll("input.lab-slider")];
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
  const out = [];
  for (let i = 0; i < moves; i++) {
    const slider = sliders[Math.floor(next() * sliders.length)];
    const max = Number(slider.max);
    let value = Number(slider.value) + (next() < 0.5 ? -1 : 1);
    if (value < 0) value = 1;
    if (value > max) value = max - 1;
    await frame();  // start each move at a frame boundary, as input is delivered
    const before = lab.dataset.appliedSeq;
    const applied = new Promise((resolve) => {
      const observer = new MutationObserver(() => {
        if (lab.dataset.appliedSeq !== before) {
          observer.disconnect();
          resolve(performance.now());
        }
      });
      observer.observe(lab, { attributes: true, attributeFilter: ["data-applied-seq"] });
    });
    const t0 = performance.now();
    slider.value = String(value);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    const t1 = await applied;
    const t2 = await frame();
    const mark = performance.getEntriesByName("lab:result").slice(-1)[0];
    out.push({ applied: t1 - t0, frame: t2 - t0, worker: mark ? mark.detail.workerMs : null });
  }
  return out;
}"""


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def build_site(target):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = Path(sys.executable).with_name("mkdocs")
    command = [str(mkdocs)] if mkdocs.exists() else [sys.executable, "-m", "mkdocs"]
    result = subprocess.run([*command, "build", "--strict", "--quiet", "--site-dir", str(target)],
                            cwd=ROOT, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        sys.exit(f"bench: site build failed:\n{result.stdout}\n{result.stderr}")


def wait_live(page):
    page.wait_for_function("document.getElementById('lab-app').dataset.labState === 'live'", timeout=TIMEOUT_MS)


def visit(page, path):
    page.goto(path)
    wait_live(page)
    return {**page.evaluate(PAINT_JS), **page.evaluate(LIVE_JS)}


def measure_visits(browser, base, runs, cold=False):
    first, repeat = [], []
    for _ in range(runs):
        context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 900}, bypass_csp=True)
        context.add_init_script(INIT_SCRIPT)
        try:
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            if cold:
                page.route("**/assets/lab/snapshot.*.bin.gz", lambda route: route.fulfill(status=404, body=""))
            first.append(visit(page, "lab/"))
            if not cold:
                page.wait_for_function("navigator.serviceWorker.controller !== null", timeout=TIMEOUT_MS)
                repeat.append(visit(page, "lab/"))
        finally:
            context.close()
    return first, repeat


def measure_moves(browser, base, moves):
    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 900}, bypass_csp=True)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto("lab/")
        wait_live(page)
        page.evaluate(MOVES_JS, 10)  # warm-up, not counted
        return page.evaluate(MOVES_JS, moves)
    finally:
        context.close()


def summary(values):
    values = [v for v in values if v is not None]
    return {"median": statistics.median(values), "p95": percentile(values, 95), "max": max(values), "n": len(values)}


def kinds(visits):
    counts = {}
    for v in visits:
        counts[v["bootKind"]] = counts.get(v["bootKind"], 0) + 1
    return ", ".join(f"{k}×{n}" for k, n in sorted(counts.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="an already built site (default: build one now)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="lab-bench-site-") as tmp:
        site = args.site
        if site is None:
            site = Path(tmp)
            build_site(site)
        server = serve_in_thread(site)
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=executable_path(), args=LAUNCH_ARGS, headless=True)
                try:
                    first, repeat = measure_visits(browser, base, args.runs)
                    cold, _ = measure_visits(browser, base, args.cold_runs, cold=True) if args.cold_runs else ([], [])
                    moves = measure_moves(browser, base, args.moves)
                    version = browser.version
                finally:
                    browser.close()
        finally:
            server.shutdown()

    figures = {
        "environment": {"cpus": os.cpu_count(), "chromium": version, "python": platform.python_version()},
        "first_paint_fcp_ms": summary([v["fcp"] for v in first]),
        "first_paint_lab_present_ms": summary([v["labPresent"] for v in first]),
        "live_first_visit_ms": {**summary([v["live"] for v in first]), "boot": kinds(first)},
        "live_repeat_visit_ms": {**summary([v["live"] for v in repeat]), "boot": kinds(repeat)},
        "live_cold_first_visit_ms": {**summary([v["live"] for v in cold]), "boot": kinds(cold)} if cold else None,
        "worker_boot_first_visit_ms": summary([v["bootMs"] for v in first]),
        "slider_to_meters_dom_ms": summary([m["applied"] for m in moves]),
        "slider_to_next_frame_ms": summary([m["frame"] for m in moves]),
        "worker_evaluate_ms": summary([m["worker"] for m in moves]),
    }

    def row(label, key, target=""):
        value = figures[key]
        if value is None:
            return
        extra = f"  [{value['boot']}]" if "boot" in value else ""
        print(f"  {label:<44} median {value['median']:8.1f}   p95 {value['p95']:8.1f}   (n={value['n']}){extra}{target}")

    env = figures["environment"]
    print(f"Lab page in headless Chromium {env['chromium']} on {env['cpus']} CPUs (ms from navigation start unless noted)")
    row("first precomputed paint (FCP)", "first_paint_fcp_ms", "   target < 1000")
    row("  #lab-app with precomputed numbers in DOM", "first_paint_lab_present_ms")
    row("live lab, first visit", "live_first_visit_ms", "   target < 1500")
    row("live lab, repeat visit (HTTP cache + SW)", "live_repeat_visit_ms", "   target < 1200")
    row("live lab, cold boot (snapshot refused)", "live_cold_first_visit_ms", "   reference")
    row("  worker boot alone, first visit", "worker_boot_first_visit_ms")
    row(f"slider move -> meters updated ({args.moves} moves)", "slider_to_meters_dom_ms", "   target p95 < 16")
    row("slider move -> next frame after the update", "slider_to_next_frame_ms")
    row("  worker evaluate (inside Pyodide)", "worker_evaluate_ms")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1, sort_keys=True), encoding="utf-8")
    return figures


if __name__ == "__main__":
    main()
