// The lab page's classic (non-module) script: how a lab_view view is copied
// into the page (used by lab.js for every live answer), and what works where
// the live lab cannot run. A module script (lab.js) cannot run from file://,
// and a blocked one fails silently; this script still runs there, says why
// the live lab is off, and makes the scenario cards show their precomputed
// results (loaded as a classic script, which file:// allows).
(function () {
  "use strict";

  // ---- applying a view ---------------------------------------------------------
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

  // The bound elements are part of the page's fixed markup (none lives inside
  // an HTML fragment a view replaces), so they are looked up once.
  const boundCache = new WeakMap();

  function bound(root) {
    let list = boundCache.get(root);
    if (list) return list;
    list = [];
    for (const [key, apply] of BINDINGS) {
      const attr = `data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      const targets = [...root.querySelectorAll(`[${attr}]`)];
      if (root.hasAttribute(attr)) targets.push(root);
      targets.forEach((el) => list.push([key, apply, el, el.dataset[key]]));
    }
    list.stages = [...root.querySelectorAll(".lab-stage")];
    boundCache.set(root, list);
    return list;
  }

  // A control's value is written only when it differs. Chromium's autofill treats
  // every write to a <select>'s value, even of the value it already has, as the
  // reader changing the form: the page extracts all its fields on the main thread
  // and the browser re-parses them (a trace of 36 slider moves: 38 extractions,
  // 307 ms of the page's main thread and 433 ms of the browser's, beside the
  // worker's answers on 2 cores; none once unchanged values are left alone).
  function setValue(el, value) {
    if (el.value !== value) el.value = value;
  }

  function applyView(root, view, controls) {
    const list = bound(root);
    for (const [key, apply, el, path] of list) {
      const value = lookup(view, path);
      if (value !== undefined) update(el, key, value, apply);
    }
    list.stages.forEach((el) => {
      if (el.dataset.stageId === view.stage.id) el.setAttribute("aria-current", "step");
      else el.removeAttribute("aria-current");
      // When nothing fits, the stage of the smallest system that would fit is the target.
      el.toggleAttribute("data-target", el.dataset.stageId === view.stage.target);
    });
    if (!controls) return;
    for (const [name, hint] of Object.entries(view.derived || {})) {
      const typed = document.getElementById(`adv-${name}`);
      if (typed && document.activeElement !== typed) {
        setValue(typed, "");
        if (typed.placeholder !== hint) typed.placeholder = hint;
      }
    }
    for (const [name, text] of Object.entries(view.values || {})) {
      const typed = document.getElementById(`typed-${name}`) || document.getElementById(`adv-${name}`);
      if (typed && typed.dataset.control !== "select" && typed.dataset.control !== "switch" && document.activeElement !== typed) {
        setValue(typed, text);
      }
      const slider = document.getElementById(`slider-${name}`);
      if (slider) slider.setAttribute("aria-valuetext", text);
    }
  }

  // ---- controls --------------------------------------------------------------------
  function nearestStop(slider, value) {
    let best = 0;
    slider.stops.forEach((stop, i) => {
      if (Math.abs(Math.log(stop) - Math.log(value)) < Math.abs(Math.log(slider.stops[best]) - Math.log(value))) best = i;
    });
    return best;
  }

  function syncControls(config, inputs) {
    for (const slider of config.sliders) {
      setValue(document.getElementById(`slider-${slider.name}`), String(nearestStop(slider, inputs[slider.name])));
    }
    for (const adv of config.advanced) {
      const el = document.getElementById(`adv-${adv.name}`);
      const value = inputs[adv.name];
      if (adv.control === "select") setValue(el, String(value));
      else if (adv.control === "switch") el.checked = Boolean(value);
    }
  }

  // One input's two values alike: a list (the recompute modules) by its items, the rest as they are.
  function sameValue(a, b) {
    if (Array.isArray(a) || Array.isArray(b)) {
      return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => item === b[i]);
    }
    return a === b;
  }

  function sameInputs(config, a, b) {
    return Object.keys(config.defaults).every((k) => sameValue(a[k], b[k]));
  }

  function markCard(root, config, inputs) {
    root.querySelectorAll(".lab-card").forEach((button) => {
      const card = config.cards.find((c) => c.id === button.dataset.scenario);
      button.setAttribute("aria-pressed", String(Boolean(card && sameInputs(config, card.inputs, inputs))));
    });
  }

  const cardViews = {};
  window.LabPage = {
    applyView, syncControls, nearestStop, sameValue, sameInputs, markCard, setValue,
    // Called by the generated cards script (labsite.pages.lab) with every card's result.
    registerCards(results) { Object.assign(cardViews, results); },
  };

  // ---- where the live lab cannot run -------------------------------------------------
  const root = document.getElementById("lab-app");
  if (!root) return;
  const config = JSON.parse(document.getElementById("lab-config").textContent);
  const status = document.getElementById("lab-status");
  const texts = config.session.catalog.lab;

  function off(kind, text) {
    if (root.dataset.labState !== "precomputed") return;
    root.dataset.labState = kind;
    status.textContent = text;
  }

  function showCard(id) {
    const result = cardViews[id];
    if (!result || !result.ok) return;
    applyView(root, result.view, true);
    syncControls(config, result.inputs);
    markCard(root, config, result.inputs);
  }

  if (location.protocol === "file:") {
    off("unavailable", texts.status_file);
    // The inputs cannot compute anything here: make that visible rather than let them do nothing.
    root.querySelectorAll(".lab-workload input, .lab-workload select").forEach((el) => { el.disabled = true; });
    const script = document.createElement("script");
    script.src = config.cardsScript;
    document.head.appendChild(script);
    root.querySelectorAll(".lab-card").forEach((button) => {
      button.addEventListener("click", () => showCard(button.dataset.scenario));
    });
  } else {
    // lab.js marks the page when it runs; after load, a page it never marked had it blocked.
    window.addEventListener("load", () => {
      if (!root.dataset.script) off("failed", texts.status_failed.replace("{reason}", "lab.js"));
    });
  }
})();
