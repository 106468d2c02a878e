// The lab page's controller: sliders and typed inputs in, worker results out.
// It never formats a number: labels for slider stops come precomputed from the
// build, everything else comes from the worker's view (lab_view in Pyodide).
import { createLabRuntime } from "./runtime.js";

const root = document.getElementById("lab");
const config = JSON.parse(document.getElementById("lab-config").textContent);
const catalog = config.session.catalog;
const statusEl = document.getElementById("lab-status");

const state = { inputs: { ...config.initial.inputs }, typed: {} };

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (match, key) => (key in values ? values[key] : match));
}

function setStatus(kind, text) {
  root.dataset.labState = kind;
  statusEl.textContent = text;
}

function lookup(view, path) {
  return path.split(".").reduce((node, key) => (node == null ? undefined : node[key]), view);
}

function applyView(view) {
  root.querySelectorAll("[data-bind]").forEach((el) => {
    const value = lookup(view, el.dataset.bind);
    if (value !== undefined) el.textContent = value;
  });
  root.querySelectorAll("[data-bind-width]").forEach((el) => {
    const value = lookup(view, el.dataset.bindWidth);
    if (value !== undefined) el.style.width = `${(value * 100).toFixed(1)}%`;
  });
  root.querySelectorAll("[data-bind-valuenow]").forEach((el) => {
    const value = lookup(view, el.dataset.bindValuenow);
    if (value !== undefined) el.setAttribute("aria-valuenow", String(Math.round(value * 100)));
  });
  root.querySelectorAll("[data-bind-level]").forEach((el) => {
    const value = lookup(view, el.dataset.bindLevel);
    if (value !== undefined) el.dataset.level = value;
  });
  for (const [name, text] of Object.entries(view.values || {})) {
    const typed = document.getElementById(`typed-${name}`);
    if (typed && document.activeElement !== typed) typed.value = text;
    const slider = document.getElementById(`slider-${name}`);
    if (slider) slider.setAttribute("aria-valuetext", text);
  }
}

function showError(field, text) {
  for (const el of root.querySelectorAll(".lab-error")) {
    const mine = el.id === `error-${field}`;
    el.hidden = !mine;
    el.textContent = mine ? text : "";
    const typed = document.getElementById(el.id.replace("error-", "typed-"));
    if (typed) typed.setAttribute("aria-invalid", mine ? "true" : "false");
  }
}

function clearErrors() {
  showError(null, "");
}

function onResult(seq, result) {
  state.typed = {};
  if (result.ok) {
    state.inputs = result.inputs;
    clearErrors();
    applyView(result.view);
    syncSliders();
  } else {
    showError(result.error.field, result.error.text);
  }
  root.dataset.appliedSeq = String(seq);
}

function request() {
  runtime.request({ inputs: state.inputs, typed: state.typed });
}

function syncSliders() {
  for (const slider of config.sliders) {
    const el = document.getElementById(`slider-${slider.name}`);
    const value = state.inputs[slider.name];
    let best = 0;
    slider.stops.forEach((stop, i) => {
      if (Math.abs(Math.log(stop) - Math.log(value)) < Math.abs(Math.log(slider.stops[best]) - Math.log(value))) best = i;
    });
    el.value = String(best);
  }
}

function wireInputs() {
  for (const slider of config.sliders) {
    const range = document.getElementById(`slider-${slider.name}`);
    const typed = document.getElementById(`typed-${slider.name}`);
    range.addEventListener("input", () => {
      const index = Number(range.value);
      state.inputs[slider.name] = slider.stops[index];
      delete state.typed[slider.name];
      typed.value = slider.labels[index];
      range.setAttribute("aria-valuetext", slider.labels[index]);
      request();
    });
    const commit = () => {
      state.typed[slider.name] = typed.value;
      request();
    };
    typed.addEventListener("change", commit);
    typed.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        commit();
      }
    });
  }
}

function onStatus(kind, detail) {
  if (kind === "live") {
    root.dataset.bootMs = String(Math.round(detail.bootMs));
    setStatus("live", catalog.lab.status_live);
  } else if (kind === "unavailable") {
    setStatus("unavailable", catalog.lab.status_file);
  } else {
    setStatus("failed", fill(catalog.lab.status_failed, { reason: detail.reason }));
  }
}

const runtime = createLabRuntime({
  root: config.root,
  pyzip: config.pyzip,
  sessionConfig: config.session,
  onStatus,
  onResult,
});
wireInputs();
