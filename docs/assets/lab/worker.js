// The lab's Web Worker: boots self-hosted Pyodide, unpacks the project's
// Python packages (lab_core + lab_view) and answers evaluate requests with the
// same Session the build used for the precomputed page.
let session = null;

async function boot({ indexURL, pyzipURL, sessionConfig }) {
  const started = performance.now();
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  const pyodide = await loadPyodide({ indexURL });
  const response = await fetch(pyzipURL);
  if (!response.ok) throw new Error(`python packages: HTTP ${response.status}`);
  pyodide.unpackArchive(new Uint8Array(await response.arrayBuffer()), "zip");
  const Session = pyodide.pyimport("lab_view").Session;
  session = Session(sessionConfig);
  return performance.now() - started;
}

self.onmessage = async ({ data }) => {
  if (data.type === "init") {
    try {
      const bootMs = await boot(data);
      self.postMessage({ type: "ready", bootMs });
    } catch (error) {
      self.postMessage({ type: "fatal", reason: String(error && error.message ? error.message : error) });
    }
  } else if (data.type === "evaluate") {
    const started = performance.now();
    try {
      const response = session.handle(data.request);
      self.postMessage({ type: "result", seq: data.seq, response, ms: performance.now() - started });
    } catch (error) {
      self.postMessage({ type: "fatal", reason: String(error && error.message ? error.message : error) });
    }
  }
};
