// The lab page's controller: inputs in, views out. It never formats a number:
// slider labels come precomputed from the build and every other text comes
// from the worker's view (lab_view in Pyodide), which the build also used for
// the first paint. The URL carries the workload (shareable, back/forward).
import { createProgress } from "./progress.js";
import { createLabRuntime } from "./runtime.js";

const root = document.getElementById("lab-app");
const config = JSON.parse(document.getElementById("lab-config").textContent);
const catalog = config.session.catalog;
const statusEl = document.getElementById("lab-status");
const noticeEl = document.getElementById("lab-notice");
const sliders = Object.fromEntries(config.sliders.map((s) => [s.name, s]));
const progress = createProgress({ root, catalog, lang: config.lang });

const state = {
  inputs: { ...config.initial.inputs },
  typed: {},
  applied: { ...config.initial.inputs },
  live: false,
  lastView: config.initial.view,
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
function lookup(view, path) {
  return path.split(".").reduce((node, key) => (node == null ? undefined : node[key]), view);
}

// Only touch what changed: the view is rebuilt on every move, the DOM should not be.
const shown = new WeakMap();

function update(el, key, value, apply) {
  let seen = shown.get(el);
  if (!seen) shown.set(el, (seen = {}));
  if (seen[key] === value) return;
  seen[key] = value;
  apply(el, value);
}

const BINDINGS = [
  ["bind", (el, v) => { el.textContent = v; }],
  ["bindHtml", (el, v) => { el.innerHTML = v; }],
  ["bindWidth", (el, v) => { el.style.width = `${(v * 100).toFixed(1)}%`; }],
  ["bindValuenow", (el, v) => { el.setAttribute("aria-valuenow", String(Math.round(v * 100))); }],
  ["bindValuetext", (el, v) => { el.setAttribute("aria-valuetext", v); }],
  ["bindLevel", (el, v) => { el.dataset.level = v; }],
  ["bindState", (el, v) => { el.dataset.state = v; }],
  ["bindHidden", (el, v) => { el.hidden = Boolean(v); }],
  ["bindAttrStage", (el, v) => { el.dataset.stage = v; }],
];

function applyView(view, { controls = true } = {}) {
  state.lastView = view;
  for (const [key, apply] of BINDINGS) {
    const attr = `data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const targets = [...root.querySelectorAll(`[${attr}]`)];
    if (root.hasAttribute(attr)) targets.push(root);
    targets.forEach((el) => {
      const value = lookup(view, el.dataset[key]);
      if (value !== undefined) update(el, key, value, apply);
    });
  }
  root.querySelectorAll(".lab-stage").forEach((el) => {
    if (el.dataset.stageId === view.stage.id) el.setAttribute("aria-current", "step");
    else el.removeAttribute("aria-current");
  });
  if (!controls) return;
  for (const [name, hint] of Object.entries(view.derived || {})) {
    const typed = document.getElementById(`adv-${name}`);
    if (typed && document.activeElement !== typed) {
      typed.value = "";
      typed.placeholder = hint;
    }
  }
  for (const [name, text] of Object.entries(view.values || {})) {
    const typed = document.getElementById(`typed-${name}`) || document.getElementById(`adv-${name}`);
    if (typed && typed.dataset.control !== "select" && typed.dataset.control !== "switch" && document.activeElement !== typed) {
      typed.value = text;
    }
    const slider = document.getElementById(`slider-${name}`);
    if (slider) slider.setAttribute("aria-valuetext", text);
  }
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
function nearestStop(slider, value) {
  let best = 0;
  slider.stops.forEach((stop, i) => {
    if (Math.abs(Math.log(stop) - Math.log(value)) < Math.abs(Math.log(slider.stops[best]) - Math.log(value))) best = i;
  });
  return best;
}

function syncControls(inputs) {
  for (const slider of config.sliders) {
    const index = nearestStop(slider, inputs[slider.name]);
    document.getElementById(`slider-${slider.name}`).value = String(index);
  }
  for (const adv of config.advanced) {
    const el = document.getElementById(`adv-${adv.name}`);
    const value = inputs[adv.name];
    if (adv.control === "select") el.value = String(value);
    else if (adv.control === "switch") el.checked = Boolean(value);
  }
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
    if (value !== config.defaults[name]) params.set(name, value === null ? "" : String(value));
  }
  const query = params.toString();
  return `${location.pathname}${query ? `?${query}` : ""}`;
}

// Updating the URL is a synchronous call into the browser that costs several
// milliseconds, so the moves of one drag (after the first, which pushes the
// interaction's entry at once) update it at most every REPLACE_EVERY_MS, on
// the trailing edge, off the path from input to updated meters.
const REPLACE_EVERY_MS = 250;
let replaceTimer = null;

function writeHistory(mode) {
  const url = urlFor(state.applied);
  if (url === `${location.pathname}${location.search}`) return;
  if (mode === "replace") history.replaceState({ inputs: state.applied }, "", url);
  else history.pushState({ inputs: state.applied }, "", url);
}

function flushHistory() {
  if (replaceTimer === null) return;
  clearTimeout(replaceTimer);
  replaceTimer = null;
  writeHistory("replace");
}

function recordHistory(mode) {
  if (mode !== "replace") {
    flushHistory();
    writeHistory(mode);
  } else if (replaceTimer === null) {
    replaceTimer = setTimeout(flushHistory, REPLACE_EVERY_MS);
  }
}

function parseValue(name, text) {
  const spec = config.specs[name];
  if (!spec) return { error: "unknown_field" };
  if (spec.kind === "bool") {
    if (text === "true" || text === "1") return { value: true };
    if (text === "false" || text === "0") return { value: false };
    return { error: "not_a_bool" };
  }
  if (spec.kind === "choice") {
    const match = spec.choices.find((choice) => String(choice) === text);
    return match === undefined ? { error: "unknown_choice" } : { value: match };
  }
  if (text === "" && spec.derive_if_zero) return { value: null };
  if (!/^[0-9.eE+-]+$/.test(text)) return { error: "not_a_number" };
  const value = Number(text);
  if (!Number.isFinite(value)) return { error: "not_a_number" };
  if (value < spec.limit_min || value > spec.limit_max) {
    if (!(spec.derive_if_zero && value === 0)) return { error: "out_of_range" };
  }
  return { value };
}

function inputsFromUrl() {
  const params = new URLSearchParams(location.search);
  const inputs = { ...config.defaults };
  for (const [name, text] of params) {
    const parsed = parseValue(name, text);
    if (parsed.error) {
      const label = catalog.input_labels[name] || name;
      return { error: fill(catalog.lab.url_invalid, { field: label, value: text }) };
    }
    inputs[name] = parsed.value;
  }
  return { inputs, empty: [...params.keys()].length === 0 };
}

// ---- requests and results ---------------------------------------------------
let runtime = null;
let pendingHistory = null;

let latestSeq = 0;

function request(historyMode) {
  // Coalesced requests share one history record; a new entry ("push") wins.
  if (historyMode === "push" || !pendingHistory) pendingHistory = historyMode;
  latestSeq = runtime.request({ inputs: { ...state.inputs }, typed: { ...state.typed } });
  root.dataset.requestedSeq = String(latestSeq);
  progress.pending(true);
}

function onResult(seq, result) {
  if (seq < latestSeq) {
    // A newer request is on its way: show this answer, but keep what the
    // reader has changed since (inputs, controls, history) untouched.
    if (result.ok) applyView(result.view, { controls: false });
    return;
  }
  state.typed = {};
  if (result.ok) {
    state.inputs = { ...result.inputs };
    state.applied = { ...result.inputs };
    clearErrors();
    applyView(result.view);
    syncControls(result.inputs);
    if (pendingHistory) recordHistory(pendingHistory);
    markCard();
  } else {
    state.inputs = { ...state.applied };
    if (result.error.field) showError(result.error.field, result.error.text);
    else notice(result.error.text);
  }
  pendingHistory = null;
  progress.pending(false);
  root.dataset.appliedSeq = String(seq);
  root.dataset.appliedAt = String(performance.now());
}

function onStatus(kind, detail) {
  progress.settled();
  if (kind === "live") {
    state.live = true;
    root.dataset.bootMs = String(Math.round(detail.bootMs));
    if (detail.bootKind) root.dataset.bootKind = detail.bootKind;
    setStatus("live", catalog.lab.status_live);
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
  return Object.keys(config.defaults).every((k) => a[k] === b[k]);
}

function markCard() {
  root.querySelectorAll(".lab-card").forEach((button) => {
    const card = config.cards.find((c) => c.id === button.dataset.scenario);
    button.setAttribute("aria-pressed", String(Boolean(card && sameInputs(card.inputs, state.applied))));
  });
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
    range.addEventListener("input", () => {
      // One interaction, one history entry: its first move adds the entry,
      // the rest of the drag updates it.
      const mode = dragging ? "replace" : "push";
      dragging = true;
      const index = Number(range.value);
      state.inputs[slider.name] = slider.stops[index];
      delete state.typed[slider.name];
      typed.value = slider.labels[index];
      range.setAttribute("aria-valuetext", slider.labels[index]);
      request(mode);
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
  window.addEventListener("popstate", () => {
    if (replaceTimer !== null) {
      clearTimeout(replaceTimer);
      replaceTimer = null;
    }
    const parsed = inputsFromUrl();
    state.inputs = parsed.error ? { ...config.defaults } : parsed.inputs;
    state.typed = {};
    syncControls(state.inputs);
    request(null);
  });
}

function startFromUrl() {
  const parsed = inputsFromUrl();
  if (parsed.error) {
    notice(parsed.error);
    history.replaceState(null, "", location.pathname);
    return;
  }
  if (parsed.empty) return;
  state.inputs = parsed.inputs;
  syncControls(state.inputs);
  for (const name of Object.keys(sliders)) {
    document.getElementById(`typed-${name}`).value = labelFor(name, state.inputs[name]);
  }
  const card = config.cards.find((c) => sameInputs(c.inputs, state.inputs));
  if (card) showPrecomputed(card);
  else notice(catalog.lab.url_pending);
  request(null);
}

runtime = createLabRuntime({
  boot: config.boot,
  sessionConfig: config.session,
  serviceWorker: config.serviceWorker,
  onProgress: progress.update,
  onStatus,
  onResult: (seq, result) => {
    if (noticeEl.textContent === catalog.lab.url_pending) notice("");
    onResult(seq, result);
  },
});
wireInputs();
wireCards();
startFromUrl();
