// The worker's boot downloads: each file fetched once, counted for the page's
// progress bar, handed to every reader (Pyodide's own fetch included) from one
// buffer, and kept in Cache Storage so a restarted, failed or reloaded boot
// starts from what already arrived.
//
//   const downloads = createDownloads({ stallMs, useCache, onProgress });
//   downloads.start(url, { bytes, type, optional, handOff })  -> begins (or finds) one file
//   downloads.response(url)  -> a Response streaming it (for Pyodide's fetch)
//   downloads.bytes(url)     -> Promise<Uint8Array>
//   downloads.rate()         -> Promise<bytes per ms on the wire, or null>
//   downloads.stored()       -> Promise: every finished file is in the cache
//
// Progress counts bytes on the wire: a response with Content-Encoding has a
// Content-Length in compressed bytes while the stream gives decoded ones, so
// each file's share is scaled by its ratio. No timeout ever throws away a
// download that is moving: only one that sends nothing for `stallMs` is
// aborted (and retried, unless optional).
//
// handOff: the first response() for this file is a clone of the real HTTP (or
// Cache Storage) response rather than a rebuilt one, so the browser can reuse
// its compiled code for the wasm on the next visit (V8 caches compiled
// WebAssembly only for responses it can tie to a URL).
export const RUNTIME_CACHE = "lab-runtime";
const RETRIES = 2;

export function createDownloads({ stallMs = 30000, useCache = true, onProgress = () => {} }) {
  const files = new Map();
  const puts = [];
  const network = self.fetch.bind(self); // the worker later routes its own fetch through this module
  let firstByteAt = null;
  let reported = 0;
  const cacheOpen = useCache && self.caches ? self.caches.open(RUNTIME_CACHE).catch(() => null) : Promise.resolve(null);

  function totals() {
    let loaded = 0;
    let total = 0;
    for (const file of files.values()) {
      if (file.fromCache) continue;
      const wire = file.wireBytes || file.bytes;
      total += wire;
      loaded += file.done ? wire : Math.min(wire, (file.received * wire) / Math.max(file.bytes, 1));
    }
    return { loaded: Math.round(loaded), total: Math.round(total) };
  }

  function report(force = false) {
    const now = performance.now();
    if (!force && now - reported < 100) return;
    reported = now;
    onProgress(totals());
  }

  function push(file, chunk) {
    file.chunks.push(chunk);
    file.received += chunk.byteLength;
    for (const listener of file.listeners) listener();
  }

  function finish(file, error = null) {
    file.done = true;
    file.error = error;
    for (const listener of file.listeners) listener();
    file.listeners.clear();
    report(true);
  }

  async function fromCache(file) {
    if (!useCache || !self.caches) return false;
    try {
      const hit = await self.caches.match(file.url);
      if (!hit) return false;
      if (file.handOff) file.handoff = hit.clone();
      push(file, new Uint8Array(await hit.arrayBuffer()));
      file.fromCache = true;
      finish(file);
      return true;
    } catch (error) {
      return false; // a broken cache entry: download it
    }
  }

  async function fromNetwork(file, attempt) {
    const controller = new AbortController();
    let stalled = null;
    const watch = () => {
      clearTimeout(stalled);
      stalled = setTimeout(() => controller.abort(new Error(`${file.name}: no data for ${Math.round(stallMs / 1000)} s`)), stallMs);
    };
    watch();
    try {
      const response = await network(file.url, { signal: controller.signal });
      if (!response.ok) throw Object.assign(new Error(`${file.name}: HTTP ${response.status}`), { final: true });
      if (file.handOff) file.handoff = response.clone();
      const length = Number(response.headers.get("Content-Length")) || 0;
      if (length && response.headers.get("Content-Encoding")) file.wireBytes = length;
      else if (length) file.wireBytes = file.bytes = length;
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (firstByteAt === null) firstByteAt = performance.now();
        watch();
        push(file, value);
        report();
      }
    } catch (error) {
      clearTimeout(stalled);
      file.handoff = null;
      const reason = controller.signal.aborted && controller.signal.reason ? controller.signal.reason : error;
      if (!error.final && !file.optional && attempt < RETRIES) {
        if (file.received === 0) return fromNetwork(file, attempt + 1);
        throw reason; // readers already hold the first part: a restart would hand them the start again
      }
      throw reason;
    }
    clearTimeout(stalled);
  }

  async function store(file) {
    const cache = await cacheOpen;
    if (!cache || file.fromCache) return;
    const body = await bytesOf(file);
    await cache.put(file.url, new Response(body, { headers: { "Content-Type": file.type } }));
  }

  function start(url, { bytes = 0, type = "application/octet-stream", optional = false, handOff = false } = {}) {
    const absolute = new URL(url, self.location.href).href;
    if (files.has(absolute)) return files.get(absolute);
    const file = {
      url: absolute, name: absolute.split("/").pop(), bytes, wireBytes: 0, type, optional, handOff, handoff: null,
      chunks: [], received: 0, done: false, error: null, fromCache: false, listeners: new Set(),
    };
    files.set(absolute, file);
    file.finished = (async () => {
      if (!(await fromCache(file))) {
        try {
          await fromNetwork(file, 0);
        } catch (error) {
          finish(file, error);
          throw error;
        }
        finish(file);
        const put = store(file).catch((error) => console.warn("lab: not cached:", file.name, error));
        puts.push(put);
      }
    })();
    file.finished.catch(() => {});
    report(true);
    return file;
  }

  // The whole file as one array (a copy: streams still reading the chunks keep their places).
  async function bytesOf(file) {
    await file.finished;
    if (!file.joined) {
      if (file.chunks.length === 1) file.joined = file.chunks[0];
      else {
        file.joined = new Uint8Array(file.received);
        let offset = 0;
        for (const chunk of file.chunks) {
          file.joined.set(chunk, offset);
          offset += chunk.byteLength;
        }
      }
    }
    return file.joined;
  }

  function lookup(url) {
    return files.get(new URL(url, self.location.href).href);
  }

  // A stream of the file from its first byte, whatever has arrived so far.
  function stream(file) {
    let index = 0;
    return new ReadableStream({
      pull(controller) {
        return new Promise((resolve) => {
          const step = () => {
            if (index < file.chunks.length && file.chunks.length > 0) {
              controller.enqueue(file.chunks[index++]);
              file.listeners.delete(step);
              resolve();
            } else if (file.done) {
              file.listeners.delete(step);
              if (file.error) controller.error(file.error);
              else controller.close();
              resolve();
            }
          };
          file.listeners.add(step);
          step();
        });
      },
    });
  }

  return {
    start,
    has: (url) => Boolean(lookup(url)),
    response(url) {
      const file = lookup(url);
      if (file.handoff) {
        const real = file.handoff;
        file.handoff = null;
        return real;
      }
      return new Response(stream(file), { headers: { "Content-Type": file.type } });
    },
    bytes: (url) => bytesOf(lookup(url)),
    cached: async (url) => Boolean(self.caches && (await self.caches.match(new URL(url, self.location.href).href).catch(() => null))),
    // Wire throughput, once enough has arrived to tell (null when nothing came from the network).
    rate({ minBytes = 256 * 1024, minMs = 400, maxMs = 1500 } = {}) {
      const began = performance.now();
      return new Promise((resolve) => {
        const check = () => {
          const { loaded, total } = totals();
          const all = [...files.values()].every((f) => f.done);
          const since = firstByteAt === null ? 0 : performance.now() - firstByteAt;
          if (all || (loaded >= minBytes && since >= minMs) || performance.now() - began >= maxMs) {
            resolve(loaded === 0 || total === 0 ? null : loaded / Math.max(since, 1));
          } else setTimeout(check, 50);
        };
        check();
      });
    },
    // Every finished file is in the cache, and entries of earlier builds are gone.
    async stored() {
      await Promise.all(puts);
      const cache = await cacheOpen;
      if (!cache) return;
      for (const request of await cache.keys()) {
        if (!files.has(request.url)) await cache.delete(request);
      }
    },
  };
}
