// Usage (from the repo root): node bench/node_bench.mjs <python-packages.zip> <cases.json> [repeat]
// Loads the pinned Pyodide from node_modules, unpacks the same package zip the
// site ships (build/labsite/assets.py: python_zip_bytes()), and runs
// bench/planner_timing.py's run_all() on the cases; prints its JSON.
// bench/bench_planner.py --pyodide builds the zip and the cases and calls this.
import { readFileSync } from "node:fs";
import { loadPyodide } from "pyodide";

const [zipPath, casesPath, repeat = "5"] = process.argv.slice(2);
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(readFileSync(zipPath)), "zip");
pyodide.FS.writeFile("planner_timing.py", readFileSync(new URL("./planner_timing.py", import.meta.url), "utf8"));
const timing = pyodide.pyimport("planner_timing");
const version = pyodide.runPython("import sys; '%d.%d.%d' % sys.version_info[:3]");
const result = JSON.parse(timing.run_all(readFileSync(casesPath, "utf8"), Number(repeat)));
result.runtime = `Pyodide ${pyodide.version} (Python ${version}) / Node ${process.versions.node}`;
process.stdout.write(JSON.stringify(result));
