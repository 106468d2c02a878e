// The lab's tools for a real launch, kept apart from lab.js's core loop:
// model presets, pinned plan choices, the memory unit, compare A/B, the copy
// link button, and the panels computed after an answer is on screen (the
// plan's curves and its launch configuration). Like lab.js it formats
// nothing: every text comes from the worker's view or the page's catalog.
//
// lab.js asks it for the request's extra fields (payload), hands it every
// answer (applied / rejected / onExtras) and lets it read and write its URL
// parameters: pins by field name (tp=8), units=gib, and a=<the query of the
// pinned state A>.

const PANELS = ["lab-pins", "lab-curves", "lab-export"];
// The open panels are recomputed once the answers pause for this long, so a
// drag never waits for them (the worker answers one request at a time).
const EXTRAS_AFTER_MS = 200;

export function createLabTools({ root, config, catalog, state, send, change, currentUrl }) {
  const el = (id) => document.getElementById(id);
  const { setValue } = window.LabPage; // writes only a changed value (lab-static.js says why)
  // The options each pin's select shows: rewritten only when they change, for the same reason.
  const pinOptions = new WeakMap();
  const pinFields = new Set(config.pinFields);
  const toast = el("lab-toast");
  let extrasSeq = 0;
  let extrasTimer = null;
  let live = false;

  Object.assign(state, { pins: {}, appliedPins: {}, units: config.byteUnits[0], compareA: null });

  function say(text) {
    toast.textContent = text;
  }

  // ---- the request's fields and the answers ----------------------------------
  function payload() {
    clearTimeout(extrasTimer); // this move's answer schedules them again
    return { pins: { ...state.pins }, units: state.units, compare: state.compareA };
  }

  function showCompare(compare) {
    const panel = el("lab-compare");
    panel.hidden = !compare;
    el("lab-clear-a").hidden = !compare;
    const pin = el("lab-pin-a");
    pin.textContent = compare ? pin.dataset.labelReplace : pin.dataset.labelPin;
    if (!compare) return;
    el("lab-compare-summary").textContent = compare.summary;
    el("lab-compare-table").innerHTML = compare.html; // built and escaped by lab_view.compare
  }

  function syncTools(view) {
    setValue(el("lab-preset"), view.preset.id);
    for (const field of pinFields) {
      const select = el(`pin-${field}`);
      if (!select) continue;
      if (document.activeElement !== select) setValue(select, state.appliedPins[field] || "");
      select.closest(".lab-pin").toggleAttribute("data-pinned", field in state.appliedPins);
    }
    root.querySelectorAll('input[name="lab-units"]').forEach((radio) => { radio.checked = radio.value === state.units; });
  }

  function applied(result) {
    state.appliedPins = { ...result.pins };
    state.pins = { ...result.pins };
    syncTools(result.view);
    showCompare(result.compare);
    root.dataset.pinned = Object.keys(state.appliedPins).join(" ");
    clearTimeout(extrasTimer);
    if (PANELS.some(isOpen)) {
      root.dataset.extras = "scheduled";
      extrasTimer = setTimeout(requestExtras, EXTRAS_AFTER_MS);
    }
  }

  function rejected() {
    state.pins = { ...state.appliedPins };
  }

  // ---- panels computed after the answer ---------------------------------------
  const isOpen = (id) => el(id).open;

  // The export panel's status line: "writing…", or a warning (styled as one) that the framework will refuse the file.
  function exportStatus(text, warning = false) {
    const status = el("lab-export-status");
    status.textContent = text;
    status.classList.toggle("lab-notice", warning && Boolean(text));
  }

  function requestExtras() {
    clearTimeout(extrasTimer);
    if (!live) return;
    // A provisional answer is refined by the runtime next; the final answer asks for the panels.
    const refining = el("lab-refining");
    if (refining && !refining.hidden) return;
    const pins = isOpen("lab-pins");
    const curves = isOpen("lab-curves");
    const format = isOpen("lab-export") ? el("lab-export-format").value : null;
    if (!pins && !curves && !format) {
      root.dataset.extras = "done";
      return;
    }
    root.dataset.extras = "requested";
    if (curves) el("lab-curves-status").textContent = catalog.curves.loading;
    if (format) exportStatus(catalog.export_panel.loading);
    extrasSeq = send({
      kind: "extras", state: { inputs: { ...state.applied }, pins: { ...state.appliedPins } },
      units: state.units, pins, curves, export: format,
    });
    root.dataset.extrasRequested = String(extrasSeq);
    // Each open panel says which request will fill it (a toggle's request can follow one sent
    // just before the panel opened, whose answer leaves the panel as it was).
    for (const id of PANELS) if (isOpen(id)) el(id).dataset.requested = String(extrasSeq);
  }

  function showPinOptions(options) {
    for (const [field, entry] of Object.entries(options)) {
      const select = el(`pin-${field}`);
      if (!select || document.activeElement === select) continue;
      if (pinOptions.get(select) !== entry.options) {
        select.innerHTML = entry.options; // built and escaped by lab_view.pins
        pinOptions.set(select, entry.options);
      }
      setValue(select, state.appliedPins[field] || "");
    }
  }

  function onExtras(seq, result) {
    if (seq !== extrasSeq) return; // a newer state's panels are on their way
    el("lab-curves-status").textContent = "";
    exportStatus("");
    if (!result.ok) {
      el(result.curves === undefined && isOpen("lab-export") ? "lab-export-status" : "lab-curves-status").textContent = result.error.text;
    } else {
      if (result.pins) showPinOptions(result.pins);
      if (result.curves) {
        for (const [name, curve] of Object.entries(result.curves)) {
          const figure = el(`curve-${name}`);
          figure.querySelector(".lab-curve-svg").innerHTML = curve.svg; // escaped by lab_view.curves
          figure.querySelector(".lab-curve-table").innerHTML = curve.table;
        }
      }
      if (result.export) {
        const code = el("lab-export-text");
        code.textContent = result.export.text;
        code.dataset.format = result.export.format;
        exportStatus(result.export.warning, true);
      }
    }
    for (const id of PANELS) if (el(id).dataset.requested === String(seq)) el(id).dataset.applied = String(seq);
    root.dataset.extrasApplied = String(seq);
    root.dataset.extras = "done";
  }

  // ---- URL ---------------------------------------------------------------------
  // The pinned state A travels as one parameter holding its own query, in the
  // form of the page's (values as lab.js's urlFor writes them).
  function stateQuery(inputs, pins) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(inputs)) {
      if (!LabPage.sameValue(value, config.defaults[name])) params.set(name, value === null ? "" : String(value));
    }
    for (const [field, value] of Object.entries(pins)) params.set(field, value);
    return params.toString();
  }

  function writeUrl(params) {
    for (const [field, value] of Object.entries(state.appliedPins)) params.set(field, value);
    if (state.units !== config.byteUnits[0]) params.set("units", state.units);
    if (state.compareA) params.set("a", stateQuery(state.compareA.inputs, state.compareA.pins));
  }

  const readsParam = (name) => pinFields.has(name) || name === "units" || name === "a";

  // ``parseValue`` is lab.js's reader of one input's text; values it cannot read are left out of A.
  function readUrl(pairs, parseValue) {
    state.pins = {};
    state.units = config.byteUnits[0];
    state.compareA = null;
    for (const [name, text] of pairs) {
      if (pinFields.has(name)) state.pins[name] = text;
      else if (name === "units" && config.byteUnits.includes(text)) state.units = text;
      else if (name === "a") {
        const a = { inputs: { ...config.defaults }, pins: {} };
        for (const [key, value] of new URLSearchParams(text)) {
          if (pinFields.has(key)) a.pins[key] = value;
          else if (key in config.specs) {
            const parsed = parseValue(key, value);
            if (parsed) a.inputs[key] = parsed.value;
          }
        }
        state.compareA = a;
      }
    }
    if (Object.keys(state.pins).length) el("lab-pins").open = true;
  }

  // ---- controls -----------------------------------------------------------------
  function copyText(text, done) {
    if (!navigator.clipboard) return say(catalog.tools.copy_failed);
    navigator.clipboard.writeText(text).then(() => say(done), () => say(catalog.tools.copy_failed));
  }

  // A preset replaces the model shape (and the inputs it defines, such as the
  // sequence length); "custom" puts the shape back to derived from the parameter count.
  function choosePreset(id) {
    const values = id === "custom"
      ? Object.fromEntries(config.shapeInputs.filter((name) => name !== "params").map((name) => [name, config.defaults[name]]))
      : config.presets[id];
    Object.assign(state.inputs, values);
    for (const name of Object.keys(values)) delete state.typed[name];
    change("push");
  }

  function wire() {
    el("lab-preset").addEventListener("change", (event) => choosePreset(event.target.value));
    root.querySelectorAll("select[data-pin-field]").forEach((select) => {
      select.addEventListener("change", () => {
        const field = select.dataset.pinField;
        if (select.value === "") delete state.pins[field];
        else state.pins[field] = select.value;
        change("push");
      });
    });
    el("lab-unpin").addEventListener("click", () => {
      state.pins = {};
      change("push");
    });
    root.querySelectorAll('input[name="lab-units"]').forEach((radio) => {
      radio.addEventListener("change", () => {
        if (!radio.checked) return;
        state.units = radio.value;
        change("push");
      });
    });
    el("lab-pin-a").addEventListener("click", () => {
      state.compareA = { inputs: { ...state.applied }, pins: { ...state.appliedPins } };
      change("push");
    });
    el("lab-clear-a").addEventListener("click", () => {
      state.compareA = null;
      change("push");
    });
    el("lab-copy-link").addEventListener("click", () => copyText(currentUrl(), catalog.tools.link_copied));
    el("lab-export-copy").addEventListener("click", () => copyText(el("lab-export-text").textContent, catalog.export_panel.copied));
    el("lab-export-format").addEventListener("change", requestExtras);
    for (const id of PANELS) el(id).addEventListener("toggle", () => { if (el(id).open) requestExtras(); });
  }

  wire();
  return {
    payload, applied, rejected, onExtras, writeUrl, readUrl, readsParam,
    clearPins() { state.pins = {}; },
    // "Tensor parallel (TP) 8": a link's pins in the reader's words, while the link computes.
    describePins: () => Object.entries(state.pins).map(([field, text]) => `${catalog.field_labels[field] || field} ${text}`),
    setLive() { live = true; },
  };
}
