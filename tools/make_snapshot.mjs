// Build-time Pyodide memory snapshot of the lab's Python packages.
//
//   node tools/make_snapshot.mjs --zip py.zip --out snapshot.bin.gz [--pyodide node_modules/pyodide]
//
// Boots the pinned Pyodide with `_makeSnapshot`, unpacks the package zip,
// imports every module of lab_core and lab_view (lab_core.planner included)
// so they sit in sys.modules, and dumps the interpreter's memory. Then it restores the
// snapshot in a second interpreter, exactly as the browser's worker will, and
// checks the same modules are there: a snapshot that cannot be restored never
// leaves this script. Prints one JSON report on stdout:
//   { heapBytes, heapLimitBytes, usedBytes, snapshotBytes, gzipBytes, modules, pyodideVersion, makeMs, restoreMs }
// Exit status 2: the Python heap outgrew what a restore can take; 1: any other failure.
//
// Caveats (see ARCHITECTURE.md, "The lab in the browser"): the options are private to Pyodide; no JS object
// may be handed into Python before the snapshot; files are not in the snapshot
// (the worker unpacks the zip again), modules in sys.modules are.
import { readFileSync, writeFileSync, renameSync } from "node:fs";
import { resolve, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = { pyodide: join(here, "..", "node_modules", "pyodide") };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!["zip", "out", "pyodide"].includes(key) || argv[i + 1] === undefined) {
      throw new Error(`usage: node make_snapshot.mjs --zip PY.zip --out SNAPSHOT.bin.gz [--pyodide DIR] (bad argument ${argv[i]})`);
    }
    args[key] = argv[i + 1];
  }
  if (!args.zip || !args.out) throw new Error("--zip and --out are required");
  return args;
}

// Imports every module of the packages the worker uses (not `__main__` or
// the command line, which the browser never runs) and returns the sorted
// names of the project's modules now in sys.modules; the same list must come
// back after the restore.
const IMPORT_AND_LIST = `
import importlib, pkgutil, sys
for _top in ("lab_core", "lab_view"):
    _package = importlib.import_module(_top)
    for _info in pkgutil.walk_packages(_package.__path__, _top + "."):
        if _info.name.rsplit(".", 1)[-1] not in ("__main__", "cli"):
            importlib.import_module(_info.name)
for _name in ("_top", "_package", "_info"):
    globals().pop(_name, None)
del _name
",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("lab_core", "lab_view")))
`;

const LIST_ONLY = `
import sys
",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("lab_core", "lab_view")))
`;

// The snapshot's layout (Pyodide 314): a header whose second 32-bit word is
// the offset of the wasm heap copy that follows it.
function heapBytesOf(snapshot) {
  const header = new Uint32Array(snapshot.buffer, snapshot.byteOffset, 4);
  return snapshot.byteLength - header[1];
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const indexURL = pathToFileURL(resolve(args.pyodide) + "/").href;
  const { loadPyodide, version } = await import(new URL("pyodide.mjs", indexURL).href);
  const zip = new Uint8Array(readFileSync(args.zip)); // a Node Buffer is refused by unpackArchive

  let started = performance.now();
  const maker = await loadPyodide({ indexURL: resolve(args.pyodide) + "/", _makeSnapshot: true });
  // A fresh interpreter's memory is what a restore gets to write into: the limit.
  const heapLimitBytes = maker._module.HEAP8.length;
  maker.unpackArchive(zip, "zip");
  const modules = maker.runPython(IMPORT_AND_LIST);
  // The allocator's break: how much of the heap Python actually uses (headroom = limit - this).
  const usedBytes = typeof maker._module._sbrk === "function" ? maker._module._sbrk(0) : null;
  const snapshot = maker.makeMemorySnapshot();
  const makeMs = performance.now() - started;
  const heapBytes = heapBytesOf(snapshot);
  const report = { pyodideVersion: version, heapBytes, heapLimitBytes, usedBytes, snapshotBytes: snapshot.byteLength, modules: modules.split(","), makeMs };
  if (heapBytes > heapLimitBytes) {
    process.stdout.write(JSON.stringify({ ...report, error: "heap-too-large" }) + "\n");
    process.exit(2);
  }

  // Restore it the way the worker does and check the modules came back.
  started = performance.now();
  const restored = await loadPyodide({ indexURL: resolve(args.pyodide) + "/", _loadSnapshot: snapshot });
  restored.runPython("import random; random.seed()");
  restored.unpackArchive(zip, "zip");
  const back = restored.runPython(LIST_ONLY);
  report.restoreMs = performance.now() - started;
  if (back !== modules) throw new Error(`restored interpreter lost modules: made with [${modules}], restored [${back}]`);

  const gz = gzipSync(snapshot, { level: 9 });
  report.gzipBytes = gz.byteLength;
  const partial = `${args.out}.${process.pid}.tmp`;
  writeFileSync(partial, gz);
  renameSync(partial, args.out);
  process.stdout.write(JSON.stringify(report) + "\n");
}

main().catch((error) => {
  // A Python error's message is its traceback; the JS stack under it says nothing more.
  const text = error && error.constructor && error.constructor.name === "PythonError" ? error.message : error && error.stack ? error.stack : error;
  process.stderr.write(`make_snapshot: ${text}\n`);
  process.exit(1);
});
