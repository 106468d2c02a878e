// The live lab's runtime: starts the Pyodide worker as the page loads and
// passes requests to it, coalesced so only the newest state waits while the
// worker is busy. Knows nothing about the page's DOM.
//
//   const runtime = createLabRuntime({ root, pyzip, sessionConfig, onStatus, onResult });
//   runtime.request({ inputs, typed })  -> sequence number
//   onStatus("live" | "failed" | "unavailable", { bootMs, reason })
//   onResult(seq, resultObject)
const BOOT_TIMEOUT_MS = 60000;

export function createLabRuntime({ root, pyzip, sessionConfig, onStatus, onResult }) {
  const state = { seq: 0, busy: false, pending: null, ready: false, worker: null };

  function send(message) {
    state.busy = true;
    state.pending = null;
    state.worker.postMessage({ type: "evaluate", ...message });
  }

  function request(payload) {
    state.seq += 1;
    const message = { seq: state.seq, request: JSON.stringify(payload) };
    if (!state.ready || state.busy) state.pending = message;
    else send(message);
    return state.seq;
  }

  function fail(reason) {
    state.ready = false;
    onStatus("failed", { reason });
  }

  function start() {
    if (location.protocol === "file:") {
      onStatus("unavailable", { reason: "file" });
      return;
    }
    const base = new URL(root, location.href);
    let worker;
    try {
      worker = new Worker(new URL("assets/lab/worker.js", base), { type: "module" });
    } catch (error) {
      fail(String(error.message || error));
      return;
    }
    state.worker = worker;
    const timer = setTimeout(() => {
      if (!state.ready) {
        worker.terminate();
        fail("timeout");
      }
    }, BOOT_TIMEOUT_MS);
    worker.onmessage = ({ data }) => {
      if (data.type === "ready") {
        clearTimeout(timer);
        state.ready = true;
        onStatus("live", { bootMs: data.bootMs });
        if (state.pending) send(state.pending);
      } else if (data.type === "result") {
        state.busy = false;
        onResult(data.seq, JSON.parse(data.response), data.ms);
        if (state.pending) send(state.pending);
      } else if (data.type === "fatal") {
        clearTimeout(timer);
        fail(data.reason);
      }
    };
    worker.onerror = (event) => {
      clearTimeout(timer);
      fail(event.message || "worker error");
    };
    worker.postMessage({
      type: "init",
      indexURL: new URL("assets/pyodide/", base).href,
      pyzipURL: new URL(pyzip, location.href).href,
      sessionConfig: JSON.stringify(sessionConfig),
    });
  }

  start();
  return { request, isReady: () => state.ready };
}
