// Build-time Pyodide memory snapshot of the lab's Python packages, and the
// trimmed, precompiled standard library the worker boots with.
//
//   node tools/make_snapshot.mjs --zip py.zip --out snapshot.bin.gz --stdlib-out stdlib.zip [--pyodide node_modules/pyodide]
//
// Boots the pinned Pyodide with `_makeSnapshot`, unpacks the package zip,
// imports every module of lab_core and lab_view (lab_core.planner included)
// so they sit in sys.modules, and dumps the interpreter's memory. Then it restores the
// snapshot in a second interpreter, exactly as the browser's worker will, and
// checks the same modules are there: a snapshot that cannot be restored never
// leaves this script.
//
// The standard library: Pyodide's python_stdlib.zip is 2.5 MB of *source*
// that a cold boot compiles module by module (most of its CPU time). This
// script writes a zip of only the modules the worker imports (Pyodide's own
// boot, unpacking the package zip, every module of lab_core and lab_view, and
// every standard-library module their source names in an import statement),
// each compiled to an unchecked hash-based .pyc by this same Pyodide, stored
// uncompressed so the HTTP layer compresses the whole file. Then it boots a
// third interpreter cold from that zip and imports every lab module: a missing
// module fails the build here, not in a reader's browser.
//
// Prints one JSON report on stdout:
//   { heapBytes, heapLimitBytes, usedBytes, snapshotBytes, gzipBytes, modules, pyodideVersion, makeMs, restoreMs,
//     stdlibModules, stdlibBytes, coldMs }
// Exit status 2: the Python heap outgrew what a restore can take; 1: any other failure.
//
// Smaller on the wire (6.7 MB gzipped -> about 4 MB): before the dump, every
// free block of the C heap is zeroed (Python freed them after its start-up;
// their stale bytes would otherwise be shipped), and the shipped file has the
// wasm's own initial memory XOR-ed out (docs/assets/lab/wasmdata.js; the
// worker undoes it with the wasm it downloaded anyway).
//
// Caveats (see ARCHITECTURE.md, "The lab in the browser"): the options are private to Pyodide; no JS object
// may be handed into Python before the snapshot; files are not in the snapshot
// (the worker unpacks the zip again), modules in sys.modules are.
import { readFileSync, writeFileSync, renameSync } from "node:fs";
import { resolve, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { toggleWasmData } from "../docs/assets/lab/wasmdata.js";

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = { pyodide: join(here, "..", "node_modules", "pyodide") };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!["zip", "out", "stdlib-out", "pyodide"].includes(key) || argv[i + 1] === undefined) {
      throw new Error(`usage: node make_snapshot.mjs --zip PY.zip --out SNAPSHOT.bin.gz --stdlib-out STDLIB.zip [--pyodide DIR] (bad argument ${argv[i]})`);
    }
    args[key] = argv[i + 1];
  }
  if (!args.zip || !args.out || !args["stdlib-out"]) throw new Error("--zip, --out and --stdlib-out are required");
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

// Standard-library modules the packages name anywhere (imports inside
// functions included), imported so the trimmed standard library has them too.
// Run after the snapshot is made: parsing leaves garbage in the heap.
const IMPORT_NAMED_STDLIB = `
import ast, importlib, os
for _top in ("lab_core", "lab_view"):
    for _dir, _subdirs, _files in os.walk(_top):
        for _file in _files:
            if not _file.endswith(".py"):
                continue
            with open(os.path.join(_dir, _file), encoding="utf-8") as _handle:
                _tree = ast.parse(_handle.read())
            for _node in ast.walk(_tree):
                if isinstance(_node, ast.Import):
                    _names = [a.name for a in _node.names]
                elif isinstance(_node, ast.ImportFrom) and _node.level == 0:
                    _names = [_node.module]
                else:
                    _names = []
                for _imported in _names:
                    if _imported.split(".")[0] not in ("lab_core", "lab_view"):
                        importlib.import_module(_imported)
`;

const LIST_ONLY = `
import sys
",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("lab_core", "lab_view")))
`;

// Run in the restored interpreter (so none of it lands in the snapshot): every
// module loaded from the standard library zip, compiled, into a stored zip at
// /tmp/stdlib.zip. Returns the number of modules.
const WRITE_STDLIB = `
import sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc
from importlib.util import source_hash
_zip_path = next(p for p in sys.path if p.endswith(".zip"))
_prefix = _zip_path + "/"
_sources = sorted({m.__file__ for m in list(sys.modules.values()) if (getattr(m, "__file__", None) or "").startswith(_prefix)})
with zipfile.ZipFile(_zip_path) as _full, zipfile.ZipFile("/tmp/stdlib.zip", "w", zipfile.ZIP_STORED) as _out:
    for _file in _sources:
        _member = _file[len(_prefix):]
        _source = _full.read(_member)
        _code = compile(_source, _file, "exec", dont_inherit=True)
        _info = zipfile.ZipInfo(_member[:-3] + ".pyc", (2020, 1, 1, 0, 0, 0))
        _info.external_attr = 0o644 << 16
        _out.writestr(_info, bytes(_code_to_hash_pyc(_code, source_hash(_source), checked=False)))
len(_sources)
`;

// The lock file the worker hands Pyodide instead of fetching pyodide-lock.json
// (119 KB of packages the lab never loads): the same release info, no packages.
function emptyLock(pyodideDir) {
  const lock = JSON.parse(readFileSync(join(pyodideDir, "pyodide-lock.json"), "utf8"));
  return { info: lock.info, packages: {} };
}

// Zero the C heap's free blocks without growing the wasm memory: take every
// free block malloc hands out below the current break, clear it, give it back.
// Returns the bytes cleared.
function zeroFreeMemory(module) {
  const top = module._sbrk(0);
  const memory = module.HEAP8.length;
  const blocks = [];
  for (let size = 1 << 20; size >= 32; size >>= 1) {
    if (module._sbrk(0) + size + (1 << 20) > module.HEAP8.length) continue; // could grow the memory
    for (;;) {
      const pointer = module._malloc(size);
      if (!pointer) break;
      if (pointer + size > top) {
        module._free(pointer);
        break;
      }
      blocks.push([pointer, size]);
    }
  }
  let cleared = 0;
  for (const [pointer, size] of blocks) {
    module.HEAPU8.fill(0, pointer, pointer + size);
    cleared += size;
  }
  for (const [pointer] of blocks.reverse()) module._free(pointer);
  if (module.HEAP8.length !== memory) throw new Error("zeroing free memory grew the wasm memory");
  return cleared;
}

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
  maker.runPython("import gc; gc.collect()");
  const zeroedBytes = zeroFreeMemory(maker._module);
  const snapshot = maker.makeMemorySnapshot();
  const makeMs = performance.now() - started;
  const heapBytes = heapBytesOf(snapshot);
  const report = { pyodideVersion: version, heapBytes, heapLimitBytes, usedBytes, zeroedBytes, snapshotBytes: snapshot.byteLength, modules: modules.split(","), makeMs };
  if (heapBytes > heapLimitBytes) {
    process.stdout.write(JSON.stringify({ ...report, error: "heap-too-large" }) + "\n");
    process.exit(2);
  }

  // The shipped form, then restore it the way the worker does (undoing the
  // delta with the wasm) and check the modules came back.
  const wasm = new Uint8Array(readFileSync(join(args.pyodide, "pyodide.asm.wasm")));
  const shipped = toggleWasmData(snapshot.slice(), wasm);
  started = performance.now();
  const restored = await loadPyodide({ indexURL: resolve(args.pyodide) + "/", _loadSnapshot: toggleWasmData(shipped.slice(), wasm) });
  restored.runPython("import random; random.seed()");
  restored.unpackArchive(zip, "zip");
  const back = restored.runPython(LIST_ONLY);
  report.restoreMs = performance.now() - started;
  if (back !== modules) throw new Error(`restored interpreter lost modules: made with [${modules}], restored [${back}]`);

  // The trimmed standard library, then a cold boot from it that imports everything.
  restored.runPython(IMPORT_NAMED_STDLIB);
  report.stdlibModules = restored.runPython(WRITE_STDLIB);
  const stdlib = restored.FS.readFile("/tmp/stdlib.zip");
  const stdlibPartial = `${args["stdlib-out"]}.${process.pid}.tmp`;
  writeFileSync(stdlibPartial, stdlib);
  report.stdlibBytes = stdlib.byteLength;
  started = performance.now();
  const cold = await loadPyodide({
    indexURL: resolve(args.pyodide) + "/",
    stdLibURL: resolve(stdlibPartial),
    lockFileContents: emptyLock(args.pyodide),
  });
  cold.unpackArchive(zip, "zip");
  const coldModules = cold.runPython(IMPORT_AND_LIST);
  cold.runPython(IMPORT_NAMED_STDLIB);
  report.coldMs = performance.now() - started;
  if (coldModules !== modules) throw new Error(`cold boot from the trimmed standard library imported [${coldModules}], expected [${modules}]`);
  report.lockInfo = emptyLock(args.pyodide).info;
  report.builtinModules = cold.runPython("import sys; ','.join(sorted(sys.builtin_module_names))").split(",");

  const gz = gzipSync(shipped, { level: 9 });
  report.gzipBytes = gz.byteLength;
  const partial = `${args.out}.${process.pid}.tmp`;
  writeFileSync(partial, gz);
  renameSync(stdlibPartial, args["stdlib-out"]);
  renameSync(partial, args.out);
  process.stdout.write(JSON.stringify(report) + "\n");
}

main().catch((error) => {
  // A Python error's message is its traceback; the JS stack under it says nothing more.
  const text = error && error.constructor && error.constructor.name === "PythonError" ? error.message : error && error.stack ? error.stack : error;
  process.stderr.write(`make_snapshot: ${text}\n`);
  process.exit(1);
});
