"""A drag ends on the right answer (issue 19): after 60 moves of one slider,
one per frame, the page shows what lab_view.Session computes for the drag's
last position; coalescing may skip positions, never the last one. The moves'
first answers carry only the view's core (meters, plan, bars, figures); the
rest (diagram, schedule, decisions) comes with the final answer, and none of
it is left dimmed as stale, nor dimmed at all while a quick full answer is on
its way."""
import pytest

from labsite.catalog import load_catalogs
from labsite.labpage import default_inputs, load_lab_layout
from labsite.pages.lab import runtime_session_config
from labsite.pages.rules import load_rules
from labsite.scenarios import load_scenario
from labsite.sliders import slider_stops
from labtest import requested, settle, wait_live
from lab_view import Session

DRAG_JS = """async ({ name, count, last }) => {
  const slider = document.getElementById(`slider-${name}`);
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const max = Number(slider.max);
  for (let i = 0; i < count; i++) {
    await frame();
    const value = i === count - 1 ? last : Math.round(max * (0.5 + 0.5 * Math.sin(i / 5)));
    slider.value = String(value);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
  }
  slider.dispatchEvent(new Event("change", { bubbles: true }));
}"""

SHOWN_JS = """() => {
  const lab = document.getElementById("lab-app");
  const meters = Object.fromEntries([...lab.querySelectorAll("[data-bind-valuetext^='meters.']")]
    .map((el) => [el.dataset.bindValuetext.split(".")[1], el.getAttribute("aria-valuetext")]));
  const items = Object.fromEntries([...lab.querySelectorAll("[data-bind^='plan.items.']")]
    .map((el) => [el.dataset.bind.split(".")[2], el.textContent]));
  const text = (path) => lab.querySelector(`[data-bind='${path}']`).textContent;
  return { meters, items, diagram: text("diagram.label"), schedule: text("schedule.caption"),
           stale: "stale" in lab.dataset };
}"""


def _expected(start, name, stop):
    layout = load_lab_layout()
    config = runtime_session_config(layout, load_catalogs()["en"], "en", load_rules())
    view = Session(config).evaluate(dict(start, **{name: stop}))["view"]
    return {"meters": {k: v["text"] for k, v in view["meters"].items()}, "items": view["plan"]["items"],
            "diagram": view["diagram"]["label"], "schedule": view["schedule"]["caption"], "stale": False}


@pytest.mark.parametrize("card,name,last_index", [(None, "gpus", 3), ("at-scale", "params", -2), (None, "seq_len", -1)])
def test_a_drag_of_sixty_moves_ends_on_the_answer_for_its_last_position(page, card, name, last_index):
    page.goto("lab/")
    wait_live(page)
    settle(page)
    start = dict(default_inputs())
    if card:
        seq = requested(page)
        page.click(f"button[data-scenario={card}]")
        settle(page, seq)
        start.update(load_scenario(card).workload)
    slider = next(s for s in load_lab_layout()["sliders"] if s["name"] == name)
    stops = slider_stops(name, slider["series"])
    last = last_index % len(stops)
    seq = requested(page)
    page.evaluate(DRAG_JS, {"name": name, "count": 60, "last": last})
    settle(page, seq)
    assert requested(page) > seq + 1  # the drag sent more than one request
    assert page.evaluate(SHOWN_JS) == _expected(start, name, stops[last])


# A move while the previous move's refining search runs: the worker drops that
# search and answers the new move (Session.start runs it in slices), so no
# result of the dropped search ever reaches the page, and the page ends on the
# new move's own answer. The second move is made the moment the page sends the
# refine (its "lab:refine-sent" mark), so the search is surely still running.
MOVE_DURING_REFINE_JS = """async ({ first, second }) => {
  const lab = document.getElementById("lab-app");
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const move = (name, index) => {
    const slider = document.getElementById(`slider-${name}`);
    slider.value = String(index);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    return lab.dataset.requestedSeq;
  };
  const results = [];
  const marks = new PerformanceObserver((list) => list.getEntries().forEach((entry) => {
    if (entry.name === "lab:result") results.push(String(entry.detail.seq));
  }));
  marks.observe({ type: "mark" });
  let firstSeq = null, secondSeq = null;
  const mark = performance.mark.bind(performance);
  performance.mark = (name, options) => {
    const entry = mark(name, options);
    if (name === "lab:refine-sent" && secondSeq === null && String(options.detail.seq) === firstSeq) {
      secondSeq = move(second.name, second.index);
    }
    return entry;
  };
  firstSeq = move(first.name, first.index);
  while (secondSeq === null && lab.dataset.appliedSeq !== firstSeq) await frame();
  const refined = secondSeq !== null;
  while (refined && lab.dataset.appliedSeq !== secondSeq) await frame();
  await frame();
  performance.mark = mark;
  marks.disconnect();
  return { refined, firstSeq, results };
}"""


def test_a_move_during_a_refine_drops_it_and_ends_on_its_own_answer(page):
    page.goto("lab/")
    wait_live(page)
    settle(page)
    seq = requested(page)
    page.click("button[data-scenario=at-scale]")
    settle(page, seq)
    start = dict(default_inputs(), **load_scenario("at-scale").workload)
    layout = {s["name"]: s for s in load_lab_layout()["sliders"]}
    gpus, batch = (slider_stops(name, layout[name]["series"]) for name in ("gpus", "global_batch_tokens"))
    first = next(i for i, v in enumerate(gpus) if v != start["gpus"] and v >= 1024)
    second = next(i for i, v in enumerate(batch) if v != start["global_batch_tokens"])
    out = page.evaluate(MOVE_DURING_REFINE_JS, {"first": {"name": "gpus", "index": first},
                                                "second": {"name": "global_batch_tokens", "index": second}})
    assert out["refined"], "the first move's quick answer was final: no refine to interrupt"
    # The first move's quick answer is its only result: its refine never answered.
    assert out["results"].count(out["firstSeq"]) == 1, out
    end = dict(start, gpus=gpus[first])
    assert page.evaluate(SHOWN_JS) == _expected(end, "global_batch_tokens", batch[second])


# A move's quick answer marks the page stale until its full answer: when that
# happened, and the diagram's opacity in each frame drawn meanwhile.
FRAMES_JS = """async ({ name }) => {
  const lab = document.getElementById("lab-app");
  const board = lab.querySelector(".wb-board");
  const slider = document.getElementById(`slider-${name}`);
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  await frame();
  const t0 = performance.now();
  slider.value = String(Number(slider.value) + 1);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  const seq = lab.dataset.requestedSeq, frames = [];
  let staleAt = null;
  const observer = new MutationObserver(() => { if ("stale" in lab.dataset && staleAt === null) staleAt = performance.now() - t0; });
  observer.observe(lab, { attributes: true, attributeFilter: ["data-stale"] });
  while (lab.dataset.appliedSeq !== seq) {
    await frame();
    if ("stale" in lab.dataset) frames.push({ at: performance.now() - t0, opacity: Number(getComputedStyle(board).opacity) });
  }
  observer.disconnect();
  return { staleAt, frames };
}"""


@pytest.mark.parametrize("name", ["gpus", "params", "seq_len"])
def test_a_quick_full_answer_leaves_the_diagram_undimmed(page, name):
    """The diagram waits for the full answer; it dims only when that answer is
    late (lab.css: a 0.2 s delay), never for a frame or two on each move."""
    page.goto("lab/")
    wait_live(page)
    settle(page)
    seen = page.evaluate(FRAMES_JS, {"name": name})
    assert seen["staleAt"] is not None, seen  # the move's first answer was a quick one
    # Every frame drawn within the delay of the quick answer shows the diagram at full opacity.
    assert all(f["opacity"] == 1 for f in seen["frames"] if f["at"] - seen["staleAt"] < 200), seen


MOVE_JS = """({ name, index }) => {
  const slider = document.getElementById(`slider-${name}`);
  slider.value = String(index);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
}"""


@pytest.mark.parametrize("before_warmed", [False, True], ids=["during", "after"])
def test_the_warm_up_after_load_leaves_the_answers_as_they_are(page, before_warmed):
    """Once the first answer is on screen the worker runs each slider's next
    positions ahead (lab_view/warm.py) and says so (data-warmed: how many).
    A move made while it runs, or after, gets the same answer as without it."""
    page.goto("lab/")
    wait_live(page)
    settle(page)
    if before_warmed:
        page.wait_for_function("Number(document.getElementById('lab-app').dataset.warmed) > 6")
    name = "gpus"
    slider = next(s for s in load_lab_layout()["sliders"] if s["name"] == name)
    stops = slider_stops(name, slider["series"])
    index = stops.index(default_inputs()[name]) + 1
    seq = requested(page)
    page.evaluate(MOVE_JS, {"name": name, "index": index})
    settle(page, seq)
    assert page.evaluate(SHOWN_JS) == _expected(dict(default_inputs()), name, stops[index])
