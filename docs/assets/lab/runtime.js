// The live lab's runtime: starts the Pyodide worker as the page loads and
// passes requests to it, coalesced so only the newest state waits while the
// worker is busy. Knows nothing about the page's DOM.
//
//   const runtime = createLabRuntime({ boot, sessionConfig, serviceWorker, onStatus, onResult, onProgress });
//   runtime.request({ inputs, typed })  -> sequence number
//   onStatus("live" | "failed" | "unavailable", { bootMs, bootKind, fallback, reason })
//   onProgress({ stage: "download" | "starting", loaded, total })  (bytes on the wire)
//   onResult(seq, resultObject, workerMs)
//   runtime.warm([payload, ...])  -> whether the idle worker took them (run ahead, answers thrown away)
//   onWarmed(count)  (all of them have run)
//
// boot: the worker's script and the files it boots from, with their sizes (labsite.boot). The
// worker downloads them itself, reports progress, and decides whether the
// memory snapshot pays on this connection. No timeout ever throws a download
// in progress away: the worker aborts only a download that stalls. Once every
// byte is in, the interpreter's start is timed: a snapshot restore that hangs
// restarts the worker cold (its files then come from Cache Storage), a cold
// start that hangs fails the lab.
// serviceWorker: URL of the site's service worker, registered once the lab is
// live and the worker has cached its downloads (so the precache neither
// competes with the boot nor downloads them again), or null.
// Performance marks: "lab:worker-start", "lab:live" (navigation start = 0) and
// "lab:result" for the latest answer (detail: {seq, workerMs} and the epoch times the request was
// sent, reached the worker, left it and arrived back), read by bench/bench_browser.py.
const STALL_MS = 30000; // a download that sends nothing for this long is aborted (and retried)
const RESTORE_TIMEOUT_MS = 20000; // a snapshot restore, all bytes in; then a cold restart
const COLD_TIMEOUT_MS = 60000; // a cold start, all bytes in; then the lab is reported failed

function timeouts() {
  // Tests may shorten them (page.add_init_script) to exercise the fallbacks.
  const override = globalThis.LAB_BOOT_TIMEOUTS || {};
  return {
    stall: override.stall || STALL_MS,
    snapshot: override.snapshot || RESTORE_TIMEOUT_MS,
    cold: override.cold || COLD_TIMEOUT_MS,
  };
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

export function createLabRuntime({ boot, sessionConfig, serviceWorker = null, onStatus, onResult, onProgress = () => {},
                                   onWarmed = () => {} }) {
  // refine: the full request of the newest move, sent when its quick answer was provisional.
  // refining: a refine is what the worker is busy with; it runs in slices and a
  // newer request drops it, so that request is sent at once instead of waiting.
  const state = { seq: 0, busy: false, pending: null, ready: false, failed: false, worker: null, refine: null,
                  refineTimer: null, refining: false };
  const limits = timeouts();

  // refining: the worker runs the request a slice at a time and any newer request drops it
  // (a refine, or the open panels' extras: message.sliced).
  function send(message, refining = Boolean(message.sliced)) {
    state.busy = true;
    state.refining = refining;
    state.pending = null;
    const { sliced, ...rest } = message;
    state.sentAt = performance.timeOrigin + performance.now();
    state.worker.postMessage({ type: "evaluate", ...rest, refine: refining });
  }

  // Each move is asked for quickly first (the planner stops early once a plan
  // fits, and the answer holds only the parts of the view a move changes); a
  // provisional or partial answer is refined by the full request unless the
  // reader moves again within REFINE_DELAY_MS (a drag refines only where it stops).
  function request(payload) {
    state.seq += 1;
    if (payload.kind === "extras") {
      // What open panels show, once the answer is on screen: in slices, dropped by the next move.
      const message = { seq: state.seq, request: JSON.stringify(payload), sliced: true };
      if (!state.ready || (state.busy && !state.refining)) state.pending = message;
      else send(message);
      return state.seq;
    }
    clearTimeout(state.refineTimer);
    state.refine = { seq: state.seq, request: JSON.stringify(payload) };
    const message = { seq: state.seq, request: JSON.stringify({ ...payload, quick: true }) };
    if (!state.ready || (state.busy && !state.refining)) state.pending = message;
    else send(message);
    return state.seq;
  }

  // The reader's likely next moves (payloads as request() takes them), run by an idle
  // worker once and thrown away (lab_view/warm.py); any request drops the rest.
  function warm(payloads) {
    if (!state.ready || state.busy || state.pending) return false;
    state.worker.postMessage({ type: "warm", requests: JSON.stringify(payloads) });
    return true;
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
      worker = new Worker(new URL(boot.worker, location.href), { type: "module" });
    } catch (error) {
      fail(String(error.message || error));
      return;
    }
    state.worker = worker;
    performance.mark("lab:worker-start");
    let stage = "download";
    let timer = null;
    const restartCold = (why) => {
      clearTimeout(timer);
      worker.terminate();
      launch(false, why);
    };
    const arm = () => {
      clearTimeout(timer);
      if (stage === "download") return; // the worker watches its downloads for stalls
      timer = setTimeout(() => {
        if (state.ready) return;
        if (stage === "snapshot") restartCold("snapshot boot timed out");
        else {
          worker.terminate();
          fail("timeout");
        }
      }, stage === "snapshot" ? limits.snapshot : limits.cold);
    };
    worker.onmessage = ({ data }) => {
      if (data.type === "progress") {
        onProgress({ stage: "download", loaded: data.loaded, total: data.total });
      } else if (data.type === "stage") {
        stage = data.stage;
        if (stage !== "download") onProgress({ stage: "starting" });
        arm();
      } else if (data.type === "stored") {
        registerServiceWorker(serviceWorker);
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
        if (state.pending) send(state.pending);
      } else if (data.type === "result") {
        // A refine's answer that crossed a newer request on its way: that request is
        // still out and its answer replaces this one, so this one is not shown.
        if (data.refined && data.seq !== state.seq) return;
        state.busy = false;
        state.refining = false;
        performance.clearMarks("lab:result"); // only the latest: the timeline must not grow per move
        // Epoch milliseconds: the page and the worker have different timeOrigins.
        performance.mark("lab:result", { detail: { seq: data.seq, workerMs: data.ms, sentAt: state.sentAt,
          receivedAt: data.receivedAt, postedAt: data.postedAt, arrivedAt: performance.timeOrigin + performance.now() } });
        const response = JSON.parse(data.response);
        onResult(data.seq, response, data.ms);
        if (state.pending) send(state.pending);
        else if ((response.provisional || response.partial) && state.refine && state.refine.seq === data.seq) {
          const refine = state.refine;
          state.refineTimer = setTimeout(() => {
            if (state.refine === refine && !state.busy) {
              send(refine, true);
              performance.clearMarks("lab:refine-sent");
              performance.mark("lab:refine-sent", { detail: { seq: refine.seq } });
            }
          }, REFINE_DELAY_MS);
        }
      } else if (data.type === "warmed") {
        performance.mark("lab:warmed");
        onWarmed(data.requests);
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
    const absolute = (url) => new URL(url, location.href).href;
    const files = Object.fromEntries(Object.entries(boot).map(([key, value]) => [
      key, value && typeof value === "object" && "url" in value ? { ...value, url: absolute(value.url) } : value,
    ]));
    files.indexURL = absolute(boot.indexURL);
    worker.postMessage({
      type: "init",
      boot: files,
      sessionConfig: JSON.stringify(sessionConfig),
      stallMs: limits.stall,
      // A page the service worker controls gets every file from its precache
      // through fetch; otherwise the worker keeps its downloads in Cache
      // Storage itself, for the precache to take over (none without a
      // service worker, e.g. under `mkdocs serve`).
      useCache: Boolean(serviceWorker) && !(navigator.serviceWorker && navigator.serviceWorker.controller),
      allowSnapshot: withSnapshot,
      // Tests pin the choice (page.add_init_script) to exercise either boot.
      snapshotPolicy: globalThis.LAB_SNAPSHOT_POLICY || "auto",
    });
  }

  const blocked = whyNot();
  if (blocked) onStatus(blocked[0], { reason: blocked[1] });
  else launch(Boolean(boot && boot.snapshot));
  return { request, warm, isReady: () => state.ready };
}
