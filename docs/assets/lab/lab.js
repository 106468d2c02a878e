// The lab page's controller: inputs in, views out. It never formats a number:
// slider labels come precomputed from the build and every other text comes
// from the worker's view (lab_view in Pyodide), which the build also used for
// the first paint. The URL carries the workload (shareable, back/forward).
import { createProgress } from "./progress.js";
import { createLabRuntime } from "./runtime.js";
import { createLabTools } from "./lab-tools.js";

const root = document.getElementById("lab-app");
root.dataset.script = "running"; // lab-static.js reports a blocked module by its absence
const config = JSON.parse(document.getElementById("lab-config").textContent);
const catalog = config.session.catalog;
const statusEl = document.getElementById("lab-status");
const refiningEl = document.getElementById("lab-refining");
const noticeEl = document.getElementById("lab-notice");
const sliders = Object.fromEntries(config.sliders.map((s) => [s.name, s]));
const progress = createProgress({ root, catalog, lang: config.lang });

const state = {
  inputs: { ...config.initial.inputs },
  typed: {},
  applied: { ...config.initial.inputs },
  live: false,
  lastView: config.initial.view,
  // Query parameters that are not lab inputs (utm_source, fbclid …): ignored, kept in the URL.
  extras: [],
  // The next request reads a shared link: bad values are reported, the rest kept.
  lenient: false,
};

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (match, key) => (key in values ? values[key] : match));
}

function setStatus(kind, text) {
  root.dataset.labState = kind;
  statusEl.textContent = text;
}

function notice(text) {
  noticeEl.hidden = !text;
  noticeEl.textContent = text || "";
}

// ---- applying a view -------------------------------------------------------
// The binding itself lives in lab-static.js (a classic script, so the
// precomputed cards work from file:// with the very same code).
const { LabPage } = window;

function applyView(view, { controls = true } = {}) {
  state.lastView = view;
  LabPage.applyView(root, view, controls);
}

// ---- errors ------------------------------------------------------------------
function showError(field, text) {
  root.querySelectorAll(".lab-error").forEach((el) => {
    const mine = el.id === `error-${field}`;
    el.hidden = !mine;
    el.textContent = mine ? text : "";
  });
  root.querySelectorAll("[data-input-name]").forEach((el) => {
    if (el.type !== "range") el.setAttribute("aria-invalid", el.dataset.inputName === field ? "true" : "false");
  });
  const target = root.querySelector(`[data-input="${field}"]`);
  if (target && target.closest("details")) target.closest("details").open = true;
}

function clearErrors() {
  showError(null, "");
}

// ---- controls <-> state ----------------------------------------------------
function syncControls(inputs) {
  LabPage.syncControls(config, inputs);
}

function labelFor(name, value) {
  const slider = sliders[name];
  if (slider) {
    const i = slider.stops.indexOf(value);
    if (i >= 0) return slider.labels[i];
  }
  return value == null ? "" : String(value);
}

// ---- URL -------------------------------------------------------------------
// The query form the build's links use too (build/labsite/labquery.py):
// true/false, numbers as String() prints them, and an absent value (null,
// "derive it from params") as an empty string, which parseValue reads back.
function urlFor(inputs) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(inputs)) {
    if (!LabPage.sameValue(value, config.defaults[name])) params.set(name, value === null ? "" : String(value));
  }
  tools.writeUrl(params);
  for (const [name, value] of state.extras) params.append(name, value);
  const query = params.toString();
  return `${location.pathname}${query ? `?${query}` : ""}`;
}

// The language switch goes to the same workload in the other language.
function carryStateToLanguageLinks() {
  document.querySelectorAll("a[hreflang]").forEach((link) => {
    const url = new URL(link.getAttribute("href"), location.href);
    url.search = location.search;
    link.setAttribute("href", url.pathname + url.search);
  });
}

// Updating the URL costs the browser far more than the page sees: each
// replaceState/pushState is a same-document navigation that the browser
// process commits and records (traced in headless Chromium on 2 cores: some
// 20 ms of its main thread and more in its background threads per write), and
// written as answers arrived it ran beside the worker answering the next move.
// So the moves of one drag (after the first, which pushes the interaction's
// entry at once) write the URL only once the reader pauses: REPLACE_AFTER_MS
// after the last answer, and never while a request is on its way.
// Tests may lengthen it (page.add_init_script) to hold a replace past the next interaction.
const REPLACE_AFTER_MS = globalThis.LAB_HISTORY_REPLACE_MS || 250;
let replaceTimer = null;

function writeHistory(mode) {
  const url = urlFor(state.applied);
  if (url === `${location.pathname}${location.search}`) return;
  if (mode === "replace") history.replaceState({ inputs: state.applied }, "", url);
  else history.pushState({ inputs: state.applied }, "", url);
  carryStateToLanguageLinks();
}

function flushHistory() {
  if (replaceTimer === null) return;
  clearTimeout(replaceTimer);
  replaceTimer = null;
  writeHistory("replace");
}

function replaceWhenPaused() {
  replaceTimer = null;
  if (root.dataset.appliedSeq === root.dataset.requestedSeq) writeHistory("replace");
  else replaceTimer = setTimeout(replaceWhenPaused, REPLACE_AFTER_MS); // the reader moved on: the next pause
}

function recordHistory(mode) {
  if (mode !== "replace") {
    flushHistory();
    writeHistory(mode);
  } else {
    clearTimeout(replaceTimer);
    replaceTimer = setTimeout(replaceWhenPaused, REPLACE_AFTER_MS);
  }
}

// A plain number, true/false or a choice, checked against the spec; anything
// else (175B, 30 min …) is left for the worker, which reads it like a typed box.
function parseValue(name, text) {
  const spec = config.specs[name];
  if (spec.kind === "bool") {
    if (text === "true" || text === "1") return { value: true };
    if (text === "false" || text === "0") return { value: false };
    return null;
  }
  if (spec.kind === "choice") {
    const match = spec.choices.find((choice) => String(choice) === text);
    return match === undefined ? null : { value: match };
  }
  if (text === "" && spec.derive_if_zero) return { value: null };
  if (!/^[0-9.eE+]+$/.test(text)) return null;
  const value = Number(text);
  if (!Number.isFinite(value) || value < spec.limit_min || value > spec.limit_max) return null;
  return { value };
}

// The link's workload: lab inputs (as numbers where plain, else as text for
// the worker) and the other parameters, which are ignored but kept.
function stateFromUrl() {
  const inputs = { ...config.defaults };
  const texts = {};
  const extras = [];
  const toolParams = [];
  let plain = true;
  for (const [name, text] of new URLSearchParams(location.search)) {
    if (tools.readsParam(name)) {
      toolParams.push([name, text]);
      continue;
    }
    if (!(name in config.specs)) {
      extras.push([name, text]);
      continue;
    }
    texts[name] = text;
    const parsed = parseValue(name, text);
    if (parsed) inputs[name] = parsed.value;
    else plain = false;
  }
  tools.readUrl(toolParams, parseValue);
  const empty = Object.keys(texts).length === 0 && toolParams.length === 0;
  return { inputs, texts, extras, plain: plain && toolParams.length === 0, empty };
}

// "Model parameters 175B, GPUs 1,024": the link's state in the reader's words,
// from the slider labels (or the link's own text), shown while it computes.
function describeLink(texts) {
  return Object.entries(texts).map(([name, text]) => {
    const parsed = parseValue(name, text);
    const shown = parsed && sliders[name] ? labelFor(name, parsed.value) : text;
    return `${catalog.input_labels[name] || name} ${shown}`;
  }).concat(tools.describePins()).join(", ");
}

// ---- requests and results ---------------------------------------------------
let runtime = null;
let pendingHistory = null;

let latestSeq = 0;

// A live answer that takes longer than this dims the result panels (lab.css);
// most arrive within a frame and leave them alone.
const PENDING_AFTER_MS = 200;

function request(historyMode) {
  // Coalesced requests share one history record; a new entry ("push") wins.
  if (historyMode === "push" || !pendingHistory) pendingHistory = historyMode;
  const lenient = state.lenient;
  state.lenient = false;
  latestSeq = runtime.request({ inputs: { ...state.inputs }, typed: { ...state.typed }, lenient, ...tools.payload() });
  root.dataset.requestedSeq = String(latestSeq);
  progress.pending(true, state.live ? PENDING_AFTER_MS : 0);
}

// Once the first full answer is on screen: each slider's next position, run
// ahead by the idle worker and thrown away (lab_view/warm.py: the first moves
// after a load were several times slower than later ones).
let warmed = false;
const WARM_STEPS = [4, -4, 2, -2, 1, -1]; // stops from each slider's position; the nearest last, so the
// planner's caches end holding the moves a reader most likely makes next
function warmAhead() {
  if (warmed || !state.live) return;
  const payloads = [];
  for (const step of WARM_STEPS) {
    for (const slider of config.sliders) {
      const i = slider.stops.indexOf(state.applied[slider.name]);
      const j = i + step;
      if (i < 0 || j < 0 || j >= slider.stops.length) continue;
      payloads.push({ inputs: { ...state.applied, [slider.name]: slider.stops[j] }, typed: {}, lenient: false,
                      pins: { ...state.appliedPins }, units: state.units, compare: null });
    }
  }
  warmed = runtime.warm(payloads);
}

function onResult(seq, result) {
  if (result.kind === "extras") {
    tools.onExtras(seq, result);
    return;
  }
  if (result.ok && (result.provisional || result.partial)) {
    // The quick answer (the parts of the view a move changes: meters, plan, bars,
    // key figures): on screen at once, marked as refining until the full answer's.
    if (seq === latestSeq) {
      applyView(result.view, { controls: false });
      refiningEl.hidden = false;
      // The parts a partial answer leaves (diagram, schedule, decisions …) are the
      // previous answer's until the full one: lab.css dims them meanwhile.
      if (result.partial) root.dataset.stale = "";
      root.dataset.provisionalSeq = String(seq);
    }
    return;
  }
  if (seq === latestSeq) {
    refiningEl.hidden = true;
    delete root.dataset.stale;
  }
  if (seq < latestSeq) {
    // A newer request is on its way: show this answer, but keep what the
    // reader has changed since (inputs, controls, history) untouched.
    if (result.ok) applyView(result.view, { controls: false });
    return;
  }
  state.typed = {};
  if (result.ok) {
    // A replace still waiting for the previous interaction is written now,
    // with that interaction's state, before this answer's push moves past it.
    if (pendingHistory === "push") flushHistory();
    state.inputs = { ...result.inputs };
    state.applied = { ...result.inputs };
    clearErrors();
    applyView(result.view);
    syncControls(result.inputs);
    tools.applied(result);
    warmAhead();
    if (pendingHistory) recordHistory(pendingHistory);
    markCard();
    showNotes(result.notes || []);
  } else {
    state.inputs = { ...state.applied };
    tools.rejected();
    if (result.error.field) showError(result.error.field, result.error.text);
    else notice(result.error.text);
  }
  pendingHistory = null;
  progress.pending(false);
  root.dataset.appliedSeq = String(seq);
  root.dataset.appliedAt = String(performance.now());
}

// Values that were kept or dropped: a link's under the page notice, a typed
// box's under that box (a note, not an error: the lab went on).
function showNotes(notes) {
  if (!notes.length) return;
  if (linkPending) {
    notice(notes.map((n) => n.text).join(" "));
    linkPending = false;
    return;
  }
  for (const n of notes) {
    const el = document.getElementById(`error-${n.field}`);
    if (el) {
      el.hidden = false;
      el.textContent = n.text;
    }
    // The box keeps its value: show it even while the box has focus.
    const box = document.getElementById(`typed-${n.field}`) || document.getElementById(`adv-${n.field}`);
    if (box && state.lastView.values[n.field]) box.value = state.lastView.values[n.field];
  }
}

function onStatus(kind, detail) {
  progress.settled();
  if (kind === "live") {
    state.live = true;
    root.dataset.bootMs = String(Math.round(detail.bootMs));
    if (detail.bootKind) root.dataset.bootKind = detail.bootKind;
    setStatus("live", catalog.lab.status_live);
    tools.setLive();
    // Give the worker's session the current state as its baseline, so the
    // next move can say which decisions changed.
    if (!latestSeq) request(null);
  } else if (kind === "unavailable") {
    setStatus("unavailable", catalog.lab.status_file);
  } else {
    setStatus("failed", fill(catalog.lab.status_failed, { reason: detail.reason }));
  }
}

// ---- scenario cards ----------------------------------------------------------
function sameInputs(a, b) {
  return LabPage.sameInputs(config, a, b);
}

function markCard() {
  LabPage.markCard(root, config, state.applied);
}

async function showPrecomputed(card) {
  try {
    const response = await fetch(new URL(card.view, location.href));
    if (!response.ok) return;
    const result = await response.json();
    if (state.live) return; // the live lab answers this card itself
    onResult(latestSeq, result);
  } catch (error) {
    // Offline without the cached file: the live lab (if any) still answers.
  }
}

function wireCards() {
  root.querySelectorAll(".lab-card").forEach((button) => {
    button.addEventListener("click", () => {
      const card = config.cards.find((c) => c.id === button.dataset.scenario);
      state.inputs = { ...card.inputs };
      state.typed = {};
      tools.clearPins(); // a card is the planner's own answer for its workload
      syncControls(state.inputs);
      if (state.live) request("push");
      else {
        pendingHistory = "push";
        showPrecomputed(card);
        request("push");
      }
    });
  });
}

// ---- wiring ------------------------------------------------------------------
function wireInputs() {
  for (const slider of config.sliders) {
    const range = document.getElementById(`slider-${slider.name}`);
    const typed = document.getElementById(`typed-${slider.name}`);
    let dragging = false;
    let movedAt = -Infinity;
    range.addEventListener("input", () => {
      // One interaction, one history entry: its first move adds the entry,
      // the rest of the drag updates it. Key presses (each one a whole move,
      // `change` included) that follow each other within REPLACE_AFTER_MS are
      // one interaction too: a held arrow key is one entry, not one per step.
      const now = performance.now();
      const mode = dragging || now - movedAt < REPLACE_AFTER_MS ? "replace" : "push";
      dragging = true;
      movedAt = now;
      const index = Number(range.value);
      state.inputs[slider.name] = slider.stops[index];
      delete state.typed[slider.name];
      // The worker starts on the answer first; the slider's own words follow.
      request(mode);
      typed.value = slider.labels[index];
      range.setAttribute("aria-valuetext", slider.labels[index]);
    });
    range.addEventListener("change", () => { dragging = false; });
  }
  root.querySelectorAll("input.lab-typed").forEach((typed) => {
    const name = typed.dataset.inputName;
    let committed = null;
    const commit = () => {
      if (typed.value === committed) return; // Enter and the change event that follows it
      committed = typed.value;
      state.typed[name] = typed.value;
      request("push");
    };
    typed.addEventListener("input", () => { committed = null; });
    typed.addEventListener("blur", () => {
      // Show the value in the lab's own words once the reader leaves the box,
      // unless it is waiting for an answer or holds a rejected value.
      const shown = state.lastView && state.lastView.values[name];
      if (shown && !(name in state.typed) && typed.getAttribute("aria-invalid") !== "true") typed.value = shown;
    });
    typed.addEventListener("change", commit);
    typed.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        commit();
      }
    });
  });
  for (const adv of config.advanced) {
    const el = document.getElementById(`adv-${adv.name}`);
    if (adv.control === "select") {
      el.addEventListener("change", () => {
        const spec = config.specs[adv.name];
        state.inputs[adv.name] = spec.choices.find((choice) => String(choice) === el.value);
        request("push");
      });
    } else if (adv.control === "switch") {
      el.addEventListener("change", () => {
        state.inputs[adv.name] = el.checked;
        request("push");
      });
    }
  }
  // Leaving the page keeps the last drag in the URL; going back drops a pending
  // replace, which would otherwise rewrite the entry the reader returned to.
  window.addEventListener("pagehide", flushHistory);
  // A language link carries the URL's state: a replace still waiting is written first.
  document.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("a[hreflang]")) flushHistory();
  }, true);
  window.addEventListener("popstate", () => {
    clearTimeout(replaceTimer);
    replaceTimer = null;
    const link = stateFromUrl();
    state.inputs = link.inputs;
    state.typed = { ...link.texts };
    state.lenient = true;
    syncControls(state.inputs);
    request(null);
  });
}

// Set once a shared link's state is being computed; cleared by its answer.
let linkPending = false;

function startFromUrl() {
  const link = stateFromUrl();
  state.extras = link.extras;
  carryStateToLanguageLinks();
  if (link.empty) return;
  state.inputs = link.inputs;
  syncControls(state.inputs);
  for (const name of Object.keys(sliders)) {
    document.getElementById(`typed-${name}`).value = name in link.texts ? link.texts[name] : labelFor(name, state.inputs[name]);
  }
  const card = link.plain && config.cards.find((c) => sameInputs(c.inputs, state.inputs));
  if (card) showPrecomputed(card);
  else {
    // Until the answer comes, the panels still show the defaults: say so, and what is being computed.
    linkPending = true;
    root.dataset.linkPending = "true";
    notice(fill(catalog.lab.url_pending, { state: describeLink(link.texts) }));
  }
  state.typed = { ...link.texts };
  state.lenient = true;
  // The answer rewrites the link to what was applied (bad values dropped, other parameters kept).
  request("replace");
}

const tools = createLabTools({
  root, config, catalog, state,
  send: (payload) => runtime.request(payload),
  change: (mode) => request(mode),
  currentUrl: () => {
    flushHistory();
    return location.href;
  },
});

runtime = createLabRuntime({
  boot: config.boot,
  sessionConfig: config.session,
  serviceWorker: config.serviceWorker,
  onProgress: progress.update,
  onStatus,
  onWarmed: (count) => { root.dataset.warmed = String(count); },
  onResult: (seq, result) => {
    // A shared link's notes come with its final answer, not a provisional one.
    if (linkPending && seq >= latestSeq && !(result.ok && (result.provisional || result.partial))) {
      delete root.dataset.linkPending;
      notice("");
      onResult(seq, result);
      linkPending = false;
      return;
    }
    onResult(seq, result);
  },
});
wireInputs();
wireCards();
startFromUrl();
