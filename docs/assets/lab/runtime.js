// The live lab's runtime: starts the Pyodide worker as the page loads and
// passes requests to it, coalesced so only the newest state waits while the
// worker is busy. Knows nothing about the page's DOM.
//
//   const runtime = createLabRuntime({ root, pyzip, sessionConfig, snapshot, serviceWorker, onStatus, onResult });
//   runtime.request({ inputs, typed })  -> sequence number
//   onStatus("live" | "failed" | "unavailable", { bootMs, bootKind, fallback, reason })
//   onResult(seq, resultObject, workerMs)
//
// snapshot: {url, sha256, bytes} of the build-time Pyodide memory snapshot, or
// null. The worker boots from it and falls back to a cold boot by itself on any
// error; if the snapshot stage hangs, the worker is restarted cold from here.
// serviceWorker: URL of the site's service worker, registered once the lab is
// live (so precaching never competes with the boot), or null.
// Performance marks: "lab:worker-start", "lab:live" (navigation start = 0) and
// "lab:result" for the latest answer (detail: {seq, workerMs}), read by bench/bench_browser.py.
const SNAPSHOT_TIMEOUT_MS = 20000; // snapshot fetch + restore; then a cold restart
const BOOT_TIMEOUT_MS = 60000; // a cold boot; then the lab is reported failed

function timeouts() {
  // Tests may shorten them (page.add_init_script) to exercise the restart.
  const override = globalThis.LAB_BOOT_TIMEOUTS || {};
  return { snapshot: override.snapshot || SNAPSHOT_TIMEOUT_MS, cold: override.cold || BOOT_TIMEOUT_MS };
}

function whyNot() {
  if (location.protocol === "file:") return ["unavailable", "file"];
  if (typeof WebAssembly !== "object") return ["failed", "WebAssembly is not available in this browser"];
  if (typeof Worker !== "function") return ["failed", "Web Workers are not available in this browser"];
  return null;
}

function registerServiceWorker(url) {
  if (!url || !("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register(new URL(url, location.href)).catch((error) => {
    console.warn("lab: service worker not registered:", error);
  });
}

const REFINE_DELAY_MS = 40;

export function createLabRuntime({ root, pyzip, sessionConfig, snapshot = null, serviceWorker = null, onStatus, onResult }) {
  // refine: the full request of the newest move, sent when its quick answer was provisional.
  const state = { seq: 0, busy: false, pending: null, ready: false, failed: false, worker: null, refine: null,
                  refineTimer: null };
  const limits = timeouts();
  const base = new URL(root, location.href);

  function send(message) {
    state.busy = true;
    state.pending = null;
    state.worker.postMessage({ type: "evaluate", ...message });
  }

  // Each move is asked for quickly first (the planner stops early once a plan
  // fits); a provisional answer is refined by the full search unless the reader
  // moves again within REFINE_DELAY_MS (a drag refines only where it stops).
  function request(payload) {
    state.seq += 1;
    clearTimeout(state.refineTimer);
    state.refine = { seq: state.seq, request: JSON.stringify(payload) };
    const message = { seq: state.seq, request: JSON.stringify({ ...payload, quick: true }) };
    if (!state.ready || state.busy) state.pending = message;
    else send(message);
    return state.seq;
  }

  function fail(reason) {
    state.ready = false;
    state.failed = true;
    onStatus("failed", { reason });
  }

  // One worker; `withSnapshot` false after a restart. `restartReason` says why.
  function launch(withSnapshot, restartReason = null) {
    let worker;
    try {
      worker = new Worker(new URL("assets/lab/worker.js", base), { type: "module" });
    } catch (error) {
      fail(String(error.message || error));
      return;
    }
    state.worker = worker;
    performance.mark("lab:worker-start");
    let stage = withSnapshot ? "snapshot" : "cold";
    let timer = null;
    const restartCold = (why) => {
      clearTimeout(timer);
      worker.terminate();
      launch(false, why);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (state.ready) return;
        if (stage === "snapshot") restartCold("snapshot boot timed out");
        else {
          worker.terminate();
          fail("timeout");
        }
      }, stage === "snapshot" ? limits.snapshot : limits.cold);
    };
    arm();
    worker.onmessage = ({ data }) => {
      if (data.type === "stage") {
        stage = data.stage;
        arm();
      } else if (data.type === "ready") {
        clearTimeout(timer);
        state.ready = true;
        performance.mark("lab:live");
        onStatus("live", {
          bootMs: data.bootMs,
          bootKind: data.bootKind,
          fallback: data.fallback || restartReason || null,
          liveAtMs: performance.now(),
        });
        registerServiceWorker(serviceWorker);
        if (state.pending) send(state.pending);
      } else if (data.type === "result") {
        state.busy = false;
        performance.clearMarks("lab:result"); // only the latest: the timeline must not grow per move
        performance.mark("lab:result", { detail: { seq: data.seq, workerMs: data.ms } });
        const response = JSON.parse(data.response);
        onResult(data.seq, response, data.ms);
        if (state.pending) send(state.pending);
        else if (response.provisional && state.refine && state.refine.seq === data.seq) {
          const refine = state.refine;
          state.refineTimer = setTimeout(() => {
            if (state.refine === refine && !state.busy) send(refine);
          }, REFINE_DELAY_MS);
        }
      } else if (data.type === "fatal") {
        clearTimeout(timer);
        fail(data.reason);
      }
    };
    worker.onerror = (event) => {
      if (state.failed) return;
      if (state.ready) return fail(event.message || "worker error");
      // A worker that dies while restoring the snapshot gets one cold restart.
      if (stage === "snapshot") restartCold(`snapshot boot crashed: ${event.message || "worker error"}`);
      else {
        clearTimeout(timer);
        fail(event.message || "worker error");
      }
    };
    worker.postMessage({
      type: "init",
      indexURL: new URL("assets/pyodide/", base).href,
      pyzipURL: new URL(pyzip, location.href).href,
      sessionConfig: JSON.stringify(sessionConfig),
      snapshot: withSnapshot && snapshot ? { ...snapshot, url: new URL(snapshot.url, location.href).href } : null,
    });
  }

  const blocked = whyNot();
  if (blocked) onStatus(blocked[0], { reason: blocked[1] });
  else launch(Boolean(snapshot));
  return { request, isReady: () => state.ready };
}
