// The lab's Web Worker: boots self-hosted Pyodide, unpacks the project's
// Python packages (lab_core + lab_view) and answers evaluate requests with the
// same Session the build used for the precomputed page.
//
// Boot: from the build-time memory snapshot when the page names one (fetched,
// checked against its sha256, gunzipped, restored: lab_core and lab_view are
// already imported in it), else cold. Any snapshot failure (HTTP error, wrong
// digest, bad gzip, restore error, broken interpreter) falls back to a cold
// boot in this same worker. The page also restarts the worker cold when the
// snapshot stage takes too long (see runtime.js).
//
// Messages out: {type: "stage", stage: "snapshot" | "cold", reason?}
//               {type: "ready", bootMs, bootKind: "snapshot" | "cold", fallback?}
//               {type: "result", seq, response, ms}
//               {type: "fatal", reason}
let session = null;

const errorText = (error) => String(error && error.message ? error.message : error);

async function fetchBytes(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

// The snapshot's bytes, verified: the digest is of the gzipped file as built.
async function snapshotBytes({ url, sha256, bytes }) {
  const packed = await fetchBytes(url, "snapshot");
  if (bytes && packed.byteLength !== bytes) throw new Error(`snapshot: ${packed.byteLength} bytes, expected ${bytes}`);
  if (!self.crypto || !self.crypto.subtle) throw new Error("snapshot: no crypto.subtle to verify it");
  const digest = hex(await self.crypto.subtle.digest("SHA-256", packed));
  if (digest !== sha256) throw new Error("snapshot: sha256 mismatch");
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// Pyodide 314 only logs a failed wasm fetch/instantiation or standard library
// install, and its loadPyodide then never settles. Watch the console for those
// messages so a blocked file fails the boot at once instead of at the timeout.
const LOADER_FAILURES = ["wasm instantiation failed", "Error occurred while installing the standard library"];

async function load(loadPyodide, options) {
  const original = { warn: console.warn, error: console.error };
  let rejectBoot;
  const failed = new Promise((resolve, reject) => {
    rejectBoot = reject;
  });
  let failure = null;
  const watch = (level) => (...args) => {
    original[level].apply(console, args);
    const text = args.map((arg) => (arg && arg.message ? arg.message : String(arg))).join(" ");
    if (failure) {
      rejectBoot(new Error(`${failure}: ${text}`));
    } else if (LOADER_FAILURES.some((needle) => text.includes(needle))) {
      failure = text.replace(/[!:]\s*$/, "");
      setTimeout(() => rejectBoot(new Error(failure)), 0); // when no error object follows
    }
  };
  console.warn = watch("warn");
  console.error = watch("error");
  try {
    return await Promise.race([loadPyodide(options), failed]);
  } finally {
    console.warn = original.warn;
    console.error = original.error;
  }
}

async function startSession(pyodide, pyzip, sessionConfig) {
  pyodide.unpackArchive(await pyzip, "zip");
  const Session = pyodide.pyimport("lab_view").Session;
  return Session(sessionConfig);
}

async function boot({ indexURL, pyzipURL, sessionConfig, snapshot }) {
  const started = performance.now();
  // Everything the boot needs is requested at once; the interpreter waits for it.
  const pyzip = fetchBytes(pyzipURL, "python packages");
  pyzip.catch(() => {});
  let restoreFrom = null;
  if (snapshot && typeof DecompressionStream === "function") {
    restoreFrom = snapshotBytes(snapshot);
    restoreFrom.catch(() => {});
  }
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  let fallback = null;
  if (restoreFrom) {
    self.postMessage({ type: "stage", stage: "snapshot" });
    try {
      const pyodide = await load(loadPyodide, { indexURL, _loadSnapshot: restoreFrom });
      // The snapshot froze the build machine's random state: draw a fresh seed.
      pyodide.runPython("import random; random.seed()");
      session = await startSession(pyodide, pyzip, sessionConfig);
      return { bootMs: performance.now() - started, bootKind: "snapshot" };
    } catch (error) {
      fallback = errorText(error);
      session = null;
    }
  } else if (snapshot) {
    fallback = "no DecompressionStream";
  }
  self.postMessage({ type: "stage", stage: "cold", reason: fallback });
  const pyodide = await load(loadPyodide, { indexURL });
  session = await startSession(pyodide, pyzip, sessionConfig);
  return { bootMs: performance.now() - started, bootKind: "cold", fallback };
}

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    try {
      const detail = await boot(data);
      self.postMessage({ type: "ready", ...detail });
    } catch (error) {
      self.postMessage({ type: "fatal", reason: errorText(error) });
    }
  } else if (data.type === "evaluate") {
    const started = performance.now();
    try {
      const response = session.handle(data.request);
      self.postMessage({ type: "result", seq: data.seq, response, ms: performance.now() - started });
    } catch (error) {
      self.postMessage({ type: "fatal", reason: errorText(error) });
    }
  }
};
