// Usage: node run_pyodide.mjs <python-packages.zip> <driver.py> <cases.json>
// Loads the pinned Pyodide from node_modules, unpacks the same zip the site
// ships, and prints the driver's JSON for the cases.
import { readFileSync } from "node:fs";
import { loadPyodide } from "pyodide";

const [zipPath, driverPath, casesPath] = process.argv.slice(2);
const pyodide = await loadPyodide();
pyodide.unpackArchive(new Uint8Array(readFileSync(zipPath)), "zip");
pyodide.FS.writeFile("parity_driver.py", readFileSync(driverPath, "utf8"));
const driver = pyodide.pyimport("parity_driver");
process.stdout.write(driver.run(readFileSync(casesPath, "utf8")));
