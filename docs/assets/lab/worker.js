// The lab's Web Worker: boots self-hosted Pyodide, unpacks the project's
// Python packages (lab_core + lab_view) and answers evaluate requests with the
// same Session the build used for the precomputed page.
//
// Boot: every file is requested at once through one download layer
// (downloads.js: progress for the page, one buffer per file, Cache Storage so
// a later boot starts from what already arrived); Pyodide's own fetches of the
// wasm and the standard library are answered from it. The interpreter starts
// cold from the build's trimmed, precompiled standard library, or from the
// build-time memory snapshot when that pays: when it is already cached, or
// when the connection measured during the first downloads brings it faster
// than the CPU time it saves. Any snapshot failure (HTTP error, stall, wrong
// digest, bad gzip, restore error) falls back to a cold boot in this worker,
// with no file downloaded again.
//
// Messages out: {type: "progress", loaded, total}  (bytes on the wire)
//               {type: "stage", stage: "download" | "snapshot" | "cold", reason?}
//               {type: "ready", bootMs, bootKind: "snapshot" | "cold", fallback?}
//               {type: "stored"}  (the downloaded files are in Cache Storage)
//               {type: "result", seq, response, ms, refined?}  (refined: a request run in slices)
//               {type: "warmed", requests}  (the page's warm-up requests have all run)
//               {type: "fatal", reason}
//
// Evaluate requests: a quick one (a slider move's first answer) is answered at
// once. A full one (the search that refines a quick answer, and the rest of
// the view) and an extras one (the open panels' curves and launch
// configuration) run a slice at a time (Session.start: REFINE_SLICE_MS of
// work, then the event loop), so the reader's next move is answered within a
// slice; a newer request drops them.
import { createDownloads } from "./downloads.js";
import { toggleWasmData } from "./wasmdata.js";

let session = null;
let labView = null;
let refining = null; // the refine job in progress (Session.start), dropped by any newer request

// The cycle collector runs only once the worker has had nothing to do for this long
// (lab_view/heap.py: its automatic passes fell inside answers). A drag sends a move
// every frame, so it never waits for a pass; a move right after a pause may (1-3 ms).
const IDLE_COLLECT_MS = 100;
let activity = 0; // bumped by every message in and every answer out

function collectWhenIdle() {
  const at = ++activity;
  setTimeout(() => {
    if (activity === at && !refining && labView) labView.collect_idle();
  }, IDLE_COLLECT_MS);
}

// Work per slice of a refining search before the worker looks at its messages
// again: a move that arrives during a refine waits at most about this long.
const REFINE_SLICE_MS = 2;

// Wall-clock time shared with the page (timeOrigin differs between page and
// worker): when a request arrived and its answer left, for the bench's breakdown.
const now = () => performance.timeOrigin + performance.now();

// A task boundary without setTimeout's clamping: the next message event runs first.
const nextTask = () => new Promise((resolve) => {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => resolve();
  channel.port2.postMessage(null);
});

// A job of the session (RefineJob, WarmJob) run REFINE_SLICE_MS at a time until its
// step() returns something (then finished(job, it, ms of work)) or a newer request drops it.
async function inSlices(job, finished) {
  refining = job;
  let ms = 0;
  try {
    while (refining === job) {
      const started = performance.now();
      const done = job.step(REFINE_SLICE_MS);
      ms += performance.now() - started;
      if (done !== undefined && done !== null) {
        refining = null;
        finished(job, done, ms);
        return;
      }
      await nextTask();
    }
  } finally {
    if (refining === job) refining = null;
    job.destroy();
  }
}

async function refine(data) {
  await inSlices(session.start(data.request), (job, response, ms) => {
    self.postMessage({ type: "result", seq: data.seq, response, ms, refined: true, receivedAt: data.receivedAt, postedAt: now() });
    collectWhenIdle();
  });
}

// The reader's likely next moves, run ahead once the first answer is on screen
// (lab_view/warm.py says why): a slice at a time, like a refine, and dropped by
// any request of the reader's. Tells the page when all of them have run.
async function warm(data) {
  await inSlices(session.warm(data.requests), (job) => {
    self.postMessage({ type: "warmed", requests: job.ran });
    collectWhenIdle();
  });
}

// CPU time a snapshot restore saves over a cold boot from the precompiled
// standard library, measured with `make bench` (headless Chromium, 2 cores:
// cold about 2.3 s, snapshot about 1.6 s to live). The snapshot is fetched on
// a first visit only when its download takes less than this.
const SNAPSHOT_SAVES_MS = 700;

const errorText = (error) => String(error && error.message ? error.message : error);

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

// The snapshot's bytes, verified (the digest is of the gzipped file as built),
// unpacked and with the wasm's initial memory put back (wasmdata.js).
async function snapshotBytes(downloads, { url, sha256, bytes }, wasmURL) {
  const packed = await downloads.bytes(url);
  if (bytes && packed.byteLength !== bytes) throw new Error(`snapshot: ${packed.byteLength} bytes, expected ${bytes}`);
  if (!self.crypto || !self.crypto.subtle) throw new Error("snapshot: no crypto.subtle to verify it");
  const digest = hex(await self.crypto.subtle.digest("SHA-256", packed));
  if (digest !== sha256) throw new Error("snapshot: sha256 mismatch");
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  const delta = new Uint8Array(await new Response(stream).arrayBuffer());
  return toggleWasmData(delta, await downloads.bytes(wasmURL));
}

// Pyodide 314 only logs a failed wasm fetch/instantiation or standard library
// install, and its loadPyodide then never settles. Watch the console for those
// messages so a blocked file fails the boot at once.
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

// Pyodide fetches the wasm and the standard library itself: answer those from the downloads.
function routeFetches(downloads) {
  const network = self.fetch.bind(self);
  self.fetch = (input, init) => {
    const url = typeof input === "string" || input instanceof URL ? String(input) : input.url;
    if (downloads.has(url)) return Promise.resolve(downloads.response(url));
    return network(input, init);
  };
  return network;
}

// pyodide.asm.mjs as a module, from the downloaded bytes (so it is counted,
// cached and never fetched twice); from its URL if blob: modules are refused
// (a host sending the site's Content-Security-Policy as a header also governs
// this worker; then the HTTP cache, if fresh, spares the second download).
async function importAsm(downloads, url) {
  try {
    const bytes = await downloads.bytes(url);
    const blobURL = URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
    try {
      return (await import(blobURL)).default;
    } finally {
      URL.revokeObjectURL(blobURL);
    }
  } catch (error) {
    if (error && /HTTP|no data/.test(errorText(error))) throw error;
    return (await import(url)).default;
  }
}

// Whether to restore the snapshot: yes when cached; otherwise only when the
// connection, measured on the downloads under way, brings it in less time than it saves.
async function snapshotPays(downloads, snapshot, policy) {
  if (!snapshot || typeof DecompressionStream !== "function") return [false, snapshot ? "no DecompressionStream" : null];
  if (policy !== "auto") return [policy === "always", policy === "always" ? null : "snapshot not wanted"];
  if (await downloads.cached(snapshot.url)) return [true, null];
  const connection = self.navigator && self.navigator.connection;
  if (connection && connection.saveData) return [false, "data saver"];
  const rate = await downloads.rate();
  if (rate === null) return [false, "connection not measured"];
  const ms = snapshot.bytes / rate;
  return ms < SNAPSHOT_SAVES_MS ? [true, null] : [false, `snapshot would take ${Math.round(ms)} ms to download`];
}

async function startSession(pyodide, downloads, pyzipURL, sessionConfig) {
  pyodide.unpackArchive(await downloads.bytes(pyzipURL), "zip");
  labView = pyodide.pyimport("lab_view");
  const made = labView.Session(sessionConfig);
  // What exists now lives as long as the worker: out of the cycle collector's
  // passes, which otherwise paused answers for tens of ms (lab_view/heap.py);
  // the passes themselves wait for the worker to be idle (collectWhenIdle).
  labView.freeze_startup_objects();
  labView.collect_only_when_idle();
  return made;
}

async function boot({ boot: files, sessionConfig, stallMs, useCache, allowSnapshot, snapshotPolicy }) {
  const started = performance.now();
  const downloads = createDownloads({
    stallMs,
    useCache,
    onProgress: ({ loaded, total }) => self.postMessage({ type: "progress", loaded, total }),
  });
  self.postMessage({ type: "stage", stage: "download" });
  const abs = (url) => new URL(url, self.location.href).href;
  const wasmURL = abs(files.wasm.url);
  downloads.start(wasmURL, { bytes: files.wasm.bytes, type: "application/wasm", handOff: true });
  downloads.start(abs(files.stdlib.url), { bytes: files.stdlib.bytes, type: "application/zip" });
  downloads.start(abs(files.asm.url), { bytes: files.asm.bytes, type: "text/javascript" });
  downloads.start(abs(files.pyzip.url), { bytes: files.pyzip.bytes, type: "application/zip" });
  routeFetches(downloads);
  const loader = import(abs(files.loader.url));
  const asm = importAsm(downloads, abs(files.asm.url));
  asm.catch(() => {});
  const snapshot = allowSnapshot && files.snapshot ? { ...files.snapshot, url: abs(files.snapshot.url) } : null;
  const [useSnapshot, why] = await snapshotPays(downloads, snapshot, snapshotPolicy);
  const { loadPyodide } = await loader;
  const options = {
    indexURL: abs(files.indexURL),
    stdLibURL: abs(files.stdlib.url),
    lockFileContents: { info: files.lockInfo, packages: {} },
    createPyodideModule: await asm,
  };
  let fallback = why;
  if (useSnapshot) {
    downloads.start(snapshot.url, { bytes: snapshot.bytes, type: "application/gzip", optional: true });
    const restoreFrom = snapshotBytes(downloads, snapshot, wasmURL);
    restoreFrom.catch(() => {});
    try {
      await restoreFrom; // downloaded and verified: from here on the page times the restore
      self.postMessage({ type: "stage", stage: "snapshot" });
      const pyodide = await load(loadPyodide, { ...options, _loadSnapshot: restoreFrom });
      // The snapshot froze the build machine's random state: draw a fresh seed.
      pyodide.pyimport("random").seed();
      session = await startSession(pyodide, downloads, files.pyzip.url, sessionConfig);
      return { downloads, detail: { bootMs: performance.now() - started, bootKind: "snapshot" } };
    } catch (error) {
      fallback = errorText(error);
      session = null;
    }
  }
  // Start now: the wasm compiles while it streams in. The page times the
  // start only once every byte is here.
  const booting = load(loadPyodide, options);
  booting.catch(() => {});
  await Promise.all([downloads.bytes(wasmURL), downloads.bytes(options.stdLibURL)]);
  self.postMessage({ type: "stage", stage: "cold", reason: fallback });
  const pyodide = await booting;
  session = await startSession(pyodide, downloads, files.pyzip.url, sessionConfig);
  return { downloads, detail: { bootMs: performance.now() - started, bootKind: "cold", fallback } };
}

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    try {
      const { downloads, detail } = await boot(data);
      self.postMessage({ type: "ready", ...detail });
      await downloads.stored();
      self.postMessage({ type: "stored" });
    } catch (error) {
      self.postMessage({ type: "fatal", reason: errorText(error) });
    }
  } else if (data.type === "warm") {
    if (session && !refining) await warm(data);
  } else if (data.type === "evaluate") {
    data.receivedAt = now();
    activity++;
    refining = null; // a newer request: the reader moved past any refine in progress
    try {
      if (data.refine) {
        await refine(data);
        return;
      }
      const started = performance.now();
      const response = session.handle(data.request);
      self.postMessage({ type: "result", seq: data.seq, response, ms: performance.now() - started,
                         receivedAt: data.receivedAt, postedAt: now() });
      collectWhenIdle();
    } catch (error) {
      self.postMessage({ type: "fatal", reason: errorText(error) });
    }
  }
};
