"""The lab page's speed in headless Chromium: prints figures, asserts nothing.

    python bench/bench_browser.py [--site DIR] [--runs 5] [--positions 6] [--rounds 3] [--json FILE]

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
- slider move -> answer, measured in the page: every slider dragged over
  positions across its range (extremes included) from the default state,
  from the heaviest card states (BENCH_CARDS) and from the heaviest scenarios
  (bench_planner.HEAVY_SCENARIOS, their links read in the same page), one move at a time, from the
  ``input`` event to its first answer on screen (the quick answer: the
  view's core parts, its plan maybe provisional; or a final one), to a
  meter's aria-valuetext changing, to the final answer and the
  next frame; the worker's time for the first answer and for the refining
  search; per slider;
- a reader's first moves after a load (three positions of each slider, in a
  fresh page): made as soon as the first answer is on screen, and made once
  the worker's warm-up (lab_view/warm.py) has run; for reference;
- a drag of 60 positions (one input per frame): last move -> its first and
  its final answer;
- the same moves with the charts on: a pinned A beside the plan (compare) and
  the curves and launch configuration panels open, which the page recomputes
  once answers pause (docs/assets/lab/lab-tools.js).

The moves run in ``--rounds`` fresh pages and are pooled: on a 2-core machine
one round's p95 moves by about +-3 ms between identical runs (the worker
shares the cores with the page's rendering and the browser's own threads),
more than a change under test usually does. Each round's p95 is printed too.

Targets (issues 5/6/19): first paint < 1 s; live < 1.5 s first visit, < 1.2 s
repeat; slider -> answer p95 < 16 ms, max < 33 ms; worker p95 < 10 ms; a
drag's last answer within one frame (16.7 ms) of its last move.
"""
import argparse
import contextlib
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

# One move at a time (the next starts after the previous one's final answer
# is on screen), so coalescing never hides a slow answer. Each slider is
# dragged over positions spread across its range (both extremes included) from
# the state a card put the lab in (null: the default state). A move is timed
# from its `input` event to its first answer on screen (the quick answer,
# #lab-app[data-provisional-seq], or a final one, [data-applied-seq]: the page
# applies every panel of it at once), to the first change of a meter's
# aria-valuetext (moves that change one), to the final answer (after the full
# search when the first was provisional) and to the next frame; the worker's
# own time for the first answer and for the refining search.
ANSWER_JS = """
  const answered = (lab, attributes) => new Promise((resolve) => {
    const done = () => attributes.some((a) => lab.getAttribute(a) === lab.dataset.requestedSeq);
    const observer = new MutationObserver(() => {
      if (!done()) return;
      observer.disconnect();
      const mark = performance.getEntriesByName("lab:result").slice(-1)[0];
      const d = mark ? mark.detail : {}, origin = performance.timeOrigin;
      // Where a move's time goes (runtime.js / worker.js epoch times): page -> worker, and
      // the answer waiting for the page's main thread (a frame being rendered).
      resolve({ at: performance.now(), worker: mark ? d.workerMs : null,
                sent: d.sentAt - origin, toWorker: d.receivedAt - d.sentAt, toPage: d.arrivedAt - d.postedAt });
    });
    observer.observe(lab, { attributes: true, attributeFilter: attributes });
  });
  const FIRST = ["data-provisional-seq", "data-applied-seq"], FINAL = ["data-applied-seq"];
"""

MOVES_JS = """async ({ card, positions }) => {
  const lab = document.getElementById("lab-app");
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
""" + ANSWER_JS + """
  if (card) {
    const done = answered(lab, FINAL);
    lab.querySelector(`.lab-card[data-scenario="${card}"]`).click();
    await done;
    await frame();  // the card's answer rendered (every panel changes) before the first move is timed
  }
  const meters = [...lab.querySelectorAll("[data-bind-valuetext]")];
  const sliders = [...lab.querySelectorAll("input.lab-slider")];
  const out = [];
  for (const slider of sliders) {
    const max = Number(slider.max);
    const picks = [...new Set(Array.from({ length: positions }, (_, i) => Math.round((i * max) / (positions - 1))))];
    for (const value of picks) {
      if (String(value) === slider.value) continue;
      await frame();  // start each move at a frame boundary, as input is delivered
      let seen = null;
      const meterChange = new MutationObserver(() => { if (seen === null) seen = performance.now(); });
      meters.forEach((m) => meterChange.observe(m, { attributes: true, attributeFilter: ["aria-valuetext"] }));
      const first = answered(lab, FIRST);
      const final = answered(lab, FINAL);
      const t0 = performance.now();
      slider.value = String(value);
      slider.dispatchEvent(new Event("input", { bubbles: true }));
      const a = await first;
      const f = await final;
      meterChange.disconnect();
      const t2 = await frame();
      out.push({ slider: slider.dataset.inputName, card, value, answer: a.at - t0, final: f.at - t0, frame: t2 - t0,
                 toSend: a.sent - t0, toWorker: a.toWorker, toPage: a.toPage,
                 meter: seen === null ? null : seen - t0, provisional: f.at > a.at, worker: a.worker,
                 refineWorker: f.at > a.at ? f.worker : null });
    }
  }
  return out;
}"""

# A drag: `count` input events on one slider, one per frame, back and forth
# over its range; timed from the last event to the first answer for the last
# position on screen (the page coalesces: one request in flight, the newest
# waiting) and to its final answer.
DRAG_JS = """async ({ name, count }) => {
  const lab = document.getElementById("lab-app");
  const slider = document.getElementById(`slider-${name}`);
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
""" + ANSWER_JS + """
  const max = Number(slider.max);
  let last = 0;
  for (let i = 0; i < count; i++) {
    await frame();
    const value = Math.round(max * (0.5 + 0.5 * Math.sin(i / 7)));
    slider.value = String(value);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    last = performance.now();
  }
  const first = answered(lab, FIRST), final = answered(lab, FINAL);
  const a = await first, f = await final;
  return { lastToAnswer: a.at - last, lastToFinal: f.at - last, requests: Number(lab.dataset.requestedSeq) };
}"""

# A move made the moment the page sends a refine (the reader paused, then moved
# on): from its `input` event to its first answer on screen. The worker drops
# the refine within a slice (worker.js REFINE_SLICE_MS), so the move does not
# wait for the whole search. Pairs of one-step moves from the heaviest card states.
DURING_REFINE_JS = """async ({ first, second }) => {
  const lab = document.getElementById("lab-app");
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
""" + ANSWER_JS + """
  // A step of `delta` positions from where the slider is (the heavy card state stays heavy).
  const move = (name, delta) => {
    const slider = document.getElementById(`slider-${name}`);
    const index = Math.min(Number(slider.max), Math.max(0, Number(slider.value) + delta));
    slider.value = String(index);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    return lab.dataset.requestedSeq;
  };
  let firstSeq = null, timed = null;
  const mark = performance.mark.bind(performance);
  performance.mark = (name, options) => {
    const entry = mark(name, options);
    if (name === "lab:refine-sent" && timed === null && String(options.detail.seq) === firstSeq) {
      const t0 = performance.now();
      const answer = answered(lab, FIRST);
      move(second.name, second.delta);
      timed = answer.then((a) => a.at - t0);
    }
    return entry;
  };
  firstSeq = move(first.name, first.delta);
  while (timed === null && lab.dataset.appliedSeq !== firstSeq) await frame();
  const ms = timed === null ? null : await timed;
  while (lab.dataset.appliedSeq !== lab.dataset.requestedSeq) await frame();
  performance.mark = mark;
  return ms;
}"""

# The cards whose states the bench drags from (the heaviest answers), besides the default state,
# and the scenarios it opens by their lab links for the same drags (bench_planner's heaviest).
BENCH_CARDS = (None, "full-3d", "at-scale")
OPEN_LINK_JS = """(query) => { history.pushState(null, "", query); dispatchEvent(new PopStateEvent("popstate")); }"""
SETTLED_JS = """() => { const d = document.getElementById("lab-app").dataset;
  return !d.linkPending && d.requestedSeq !== undefined && d.appliedSeq === d.requestedSeq; }"""
BENCH_POSITIONS = 6
BENCH_ROUNDS = 3


def heavy_links():
    """{scenario: the lab's link with its inputs} for bench_planner.HEAVY_SCENARIOS."""
    from bench_planner import HEAVY_SCENARIOS  # bench/ is on the path when this runs as a script
    from labsite.labquery import lab_url
    from labsite.scenarios import load_scenario

    return {name: lab_url("lab/", load_scenario(name).workload) for name in HEAVY_SCENARIOS}


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


# Pin A and open the panels the page recomputes after answers (lab-tools.js); wait until they are in.
CHARTS_ON_JS = """async () => {
  const lab = document.getElementById("lab-app");
  const until = (test) => new Promise((resolve) => { const t = setInterval(() => {
    if (test()) { clearInterval(t); resolve(); } }, 10); });
  const applied = lab.dataset.appliedSeq;
  document.getElementById("lab-pin-a").click();
  await until(() => lab.dataset.appliedSeq !== applied);
  for (const id of ["lab-curves", "lab-export"]) document.getElementById(id).open = true;
  await until(() => lab.dataset.extras === "done");
}"""


@contextlib.contextmanager
def live_lab(browser, base):
    """The lab page in a fresh browser context (empty cache), once it is live."""
    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 900}, bypass_csp=True)
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto("lab/")
        wait_live(page)
        yield page
    finally:
        context.close()


def measure_first_moves(browser, base, after_warm_up):
    """A reader's first moves after a load (three positions of each slider), made as soon as
    the first answer is on screen, or once the worker's warm-up has run (lab_view/warm.py)."""
    with live_lab(browser, base) as page:
        page.wait_for_function(SETTLED_JS)
        if after_warm_up:
            page.wait_for_function("document.getElementById('lab-app').dataset.warmed !== undefined")
        return page.evaluate(MOVES_JS, {"card": None, "positions": 3})


def measure_moves(browser, base, positions, charts=False):
    with live_lab(browser, base) as page:
        if charts:
            page.evaluate(CHARTS_ON_JS)
        page.evaluate(MOVES_JS, {"card": None, "positions": 3})  # warm-up, not counted
        moves = []
        for card in BENCH_CARDS:
            moves += page.evaluate(MOVES_JS, {"card": card, "positions": positions})
        drags = [page.evaluate(DRAG_JS, {"name": name, "count": 60}) for name in ("gpus", "params", "seq_len")]
        during = []
        for card in BENCH_CARDS[1:]:
            page.evaluate(MOVES_JS, {"card": card, "positions": 0})  # the card's state
            for first, second in (("gpus", "params"), ("params", "global_batch_tokens"), ("seq_len", "gpus")):
                for deltas in ((-1, 1), (1, -1)):
                    during.append(page.evaluate(DURING_REFINE_JS, {"first": {"name": first, "delta": deltas[0]},
                                                                   "second": {"name": second, "delta": deltas[1]}}))
        for name, link in heavy_links().items():
            # The heaviest states are scenarios, not demo cards: the page reads each one's link as on
            # the browser's back button (same page, so the same warm worker as the cards' moves).
            page.evaluate(OPEN_LINK_JS, "?" + link.split("?", 1)[1])
            page.wait_for_function(SETTLED_JS)
            moves += [dict(move, card=name) for move in page.evaluate(MOVES_JS, {"card": None, "positions": positions})]
        return moves, drags, during


def summary(values):
    values = [v for v in values if v is not None and v == v]  # NaN: a figure the page did not report
    if not values:
        return None
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
    parser.add_argument("--positions", type=int, default=BENCH_POSITIONS,
                        help="positions per slider drag (both ends included)")
    parser.add_argument("--rounds", type=int, default=BENCH_ROUNDS,
                        help="fresh pages the moves run in, pooled (each round's p95 printed too)")
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
                    moves, drags, during, charted, charted_drags, charted_during = [], [], [], [], [], []
                    first_now, first_warm = [], []
                    for round_ in range(args.rounds):
                        first_now += measure_first_moves(browser, base, after_warm_up=False)
                        first_warm += measure_first_moves(browser, base, after_warm_up=True)
                        measured = (measure_moves(browser, base, args.positions)
                                    + measure_moves(browser, base, args.positions, charts=True))
                        for part, got in zip((moves, drags, during, charted, charted_drags, charted_during), measured):
                            part.extend((round_, item) for item in got)
                    version = browser.version
                finally:
                    browser.close()
        finally:
            server.shutdown()

    def per_round(tagged, key):
        """Each round's p95 of `key` (the spread between rounds is the bench's own noise)."""
        return [percentile([m[key] for r, m in tagged if r == round_ and m[key] is not None], 95)
                for round_ in range(args.rounds)]

    rounds = {"slider_to_answer_p95_ms": per_round(moves, "answer"),
              "worker_first_answer_p95_ms": per_round(moves, "worker"),
              "charts_on_slider_to_answer_p95_ms": per_round(charted, "answer")}
    moves, drags, during, charted, charted_drags, charted_during = (
        [item for _, item in tagged] for tagged in (moves, drags, during, charted, charted_drags, charted_during))
    figures = {
        "environment": {"cpus": os.cpu_count(), "chromium": version, "python": platform.python_version(),
                        "load_average": os.getloadavg()},
        "first_paint_fcp_ms": summary([v["fcp"] for v in first]),
        "first_paint_lab_present_ms": summary([v["labPresent"] for v in first]),
        "live_first_visit_ms": {**summary([v["live"] for v in first]), "boot": kinds(first)},
        "live_repeat_visit_ms": {**summary([v["live"] for v in repeat]), "boot": kinds(repeat)},
        "live_cold_first_visit_ms": {**summary([v["live"] for v in cold]), "boot": kinds(cold)} if cold else None,
        "worker_boot_first_visit_ms": summary([v["bootMs"] for v in first]),
        "slider_to_answer_ms": summary([m["answer"] for m in moves]),
        "slider_to_meter_text_ms": summary([m["meter"] for m in moves]),
        "slider_to_final_ms": summary([m["final"] for m in moves]),
        "slider_to_next_frame_ms": summary([m["frame"] for m in moves]),
        "worker_first_answer_ms": summary([m["worker"] for m in moves]),
        "worker_refine_ms": summary([m["refineWorker"] for m in moves]),
        "input_to_request_sent_ms": summary([m["toSend"] for m in moves]),
        "request_to_worker_ms": summary([m["toWorker"] for m in moves]),
        "answer_to_page_ms": summary([m["toPage"] for m in moves]),
        "provisional_moves": sum(1 for m in moves if m["provisional"]),
        "by_slider_answer_ms": {name: summary([m["answer"] for m in moves if m["slider"] == name])
                                for name in dict.fromkeys(m["slider"] for m in moves)},
        "drag_last_move_to_answer_ms": summary([d["lastToAnswer"] for d in drags]),
        "drag_last_move_to_final_ms": summary([d["lastToFinal"] for d in drags]),
        "move_during_refine_ms": summary(during),
        "charts_on_slider_to_answer_ms": summary([m["answer"] for m in charted]),
        "charts_on_slider_to_final_ms": summary([m["final"] for m in charted]),
        "charts_on_slider_to_next_frame_ms": summary([m["frame"] for m in charted]),
        "charts_on_drag_last_move_to_answer_ms": summary([d["lastToAnswer"] for d in charted_drags]),
        "charts_on_move_during_refine_ms": summary(charted_during),
        "first_moves_at_once_ms": summary([m["answer"] for m in first_now]),
        "first_moves_at_once_worker_ms": summary([m["worker"] for m in first_now]),
        "first_moves_after_warm_up_ms": summary([m["answer"] for m in first_warm]),
        "first_moves_after_warm_up_worker_ms": summary([m["worker"] for m in first_warm]),
        "rounds": args.rounds,
        "per_round": rounds,
        # Every timed move as measured (slider, card, each part's ms), for a look at the slow ones.
        "moves": moves,
        "charts_on_moves": charted,
    }

    def row(label, key, target=""):
        value = figures[key]
        if value is None:
            return
        extra = f"  [{value['boot']}]" if "boot" in value else ""
        print(f"  {label:<44} median {value['median']:8.1f}   p95 {value['p95']:8.1f}   (n={value['n']}){extra}{target}")

    def spread(label, key):
        print(f"    {label:<42} " + " / ".join(f"{v:.1f}" for v in figures["per_round"][key]))

    env = figures["environment"]
    print(f"Lab page in headless Chromium {env['chromium']} on {env['cpus']} CPUs, load average "
          f"{env['load_average'][0]:.1f} at the end (ms from navigation start unless noted)")
    row("first precomputed paint (FCP)", "first_paint_fcp_ms", "   target < 1000")
    row("  #lab-app with precomputed numbers in DOM", "first_paint_lab_present_ms")
    row("live lab, first visit", "live_first_visit_ms", "   target < 1500")
    row("live lab, repeat visit (HTTP cache + SW)", "live_repeat_visit_ms", "   target < 1200")
    row("live lab, cold boot (snapshot refused)", "live_cold_first_visit_ms", "   reference")
    row("  worker boot alone, first visit", "worker_boot_first_visit_ms")
    answer = figures["slider_to_answer_ms"]
    row(f"slider move -> answer on screen ({len(moves)} moves)", "slider_to_answer_ms",
        f"   max {answer['max']:.1f}   target p95 < 16, max < 33")
    spread(f"p95 of each round ({figures['rounds']} pages)", "slider_to_answer_p95_ms")
    row("  slider move -> a meter's text changed", "slider_to_meter_text_ms")
    row(f"  slider move -> final answer ({figures['provisional_moves']} refined)", "slider_to_final_ms")
    row("  slider move -> next frame after the final", "slider_to_next_frame_ms")
    row("  worker, first answer (inside Pyodide)", "worker_first_answer_ms", "   target p95 < 10")
    spread("  p95 of each round", "worker_first_answer_p95_ms")
    row("  worker, refining search", "worker_refine_ms")
    row("  input event -> request posted (page)", "input_to_request_sent_ms")
    row("  request posted -> worker has it", "request_to_worker_ms")
    row("  answer posted -> page has it (main thread)", "answer_to_page_ms")
    for name, value in figures["by_slider_answer_ms"].items():
        print(f"    {name:<42} median {value['median']:8.1f}   p95 {value['p95']:8.1f}   max {value['max']:8.1f}"
              f"   (n={value['n']})")
    for key, label in (("first_moves_at_once", "first moves after a load, made at once"),
                       ("first_moves_after_warm_up", "first moves after a load, after the warm-up")):
        value = figures[f"{key}_ms"]
        row(f"{label} ({value['n']})", f"{key}_ms", f"   max {value['max']:.1f}   reference")
        row("  worker, first answer", f"{key}_worker_ms")
    row("drag of 60 positions: last move -> its answer", "drag_last_move_to_answer_ms", "   target < 16.7")
    row("  drag: last move -> its final answer", "drag_last_move_to_final_ms")
    row("move made while a refine runs -> its answer", "move_during_refine_ms", "   target p95 < 16")
    row(f"charts on (A + curves + export): slider move -> answer ({len(charted)})", "charts_on_slider_to_answer_ms",
        "   target p95 < 16")
    spread("  p95 of each round", "charts_on_slider_to_answer_p95_ms")
    row("  charts on: slider move -> final answer", "charts_on_slider_to_final_ms")
    row("  charts on: slider move -> next frame after the final", "charts_on_slider_to_next_frame_ms")
    row("  charts on: drag's last move -> its answer", "charts_on_drag_last_move_to_answer_ms", "   target < 16.7")
    row("  charts on: move made while a refine runs -> its answer", "charts_on_move_during_refine_ms", "   target p95 < 16")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1, sort_keys=True), encoding="utf-8")
    return figures


if __name__ == "__main__":
    main()
