// Usage: node run_pyodide.mjs <python-packages.zip> <driver.py> <cases.json> [<stdlib.zip> <lock-info.json>]
// Loads the pinned Pyodide from node_modules, unpacks the same zip the site
// ships, and prints the driver's JSON for the cases. Given the site's trimmed
// standard library (and the lock info the worker passes), it boots from that,
// as the browser's worker does: a module the lab needs but the trimmed
// library lacks fails here.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadPyodide } from "pyodide";

const [zipPath, driverPath, casesPath, stdlibPath, lockInfoPath] = process.argv.slice(2);
const options = stdlibPath
  ? { stdLibURL: resolve(stdlibPath), lockFileContents: { info: JSON.parse(readFileSync(lockInfoPath, "utf8")), packages: {} } }
  : {};
const pyodide = await loadPyodide(options);
pyodide.unpackArchive(new Uint8Array(readFileSync(zipPath)), "zip");
pyodide.FS.writeFile("parity_driver.py", readFileSync(driverPath, "utf8"));
const driver = pyodide.pyimport("parity_driver");
process.stdout.write(driver.run(readFileSync(casesPath, "utf8")));
