"""The build-time Pyodide memory snapshot the lab's worker may boot from, and
the trimmed, precompiled standard library every boot uses.

``tools/make_snapshot.mjs`` (Node) boots the pinned Pyodide, imports the lab's
packages and dumps the interpreter's memory, gzipped; restoring it in the
browser skips the interpreter's start-up (ARCHITECTURE.md, "The lab in the
browser"). The same run writes the standard library the worker boots with:
only the modules the lab imports, compiled to .pyc (a cold boot from
Pyodide's 2.5 MB source zip spends most of its time compiling), and checks a
cold boot from it imports every lab module.

Snapshots are not byte-identical from one run to the next, so the result is
cached under ``.cache/snapshot/<key>/`` where ``key`` hashes the *inputs*:
the python zip, the Pyodide release and the script. Two builds of the same tree
therefore ship the same file under the same name
(``assets/lab/snapshot.<key12>.bin.gz``); only a cache miss (a fresh clone, or
a change to lab_core / lab_view / Pyodide / the script) makes a new one.

The page config carries the file's URL, sha256 and size; the worker refuses a
snapshot whose digest differs and boots cold instead. The build fails when the
snapshot's heap outgrows what a restore can take (a fresh interpreter's memory,
30 MiB for Pyodide 314), or when Node fails.
"""
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import assets
from .errors import BuildError
from .paths import NODE_MODULES, ROOT

SCRIPT = ROOT / "tools" / "make_snapshot.mjs"
#: The snapshot's wire format (the wasm-data delta), shared by the script and the worker.
DELTA = ROOT / "docs" / "assets" / "lab" / "wasmdata.js"
CACHE_DIR = ROOT / ".cache" / "snapshot"
SITE_DIR = "assets/lab"
_KEEP_CACHED = 6
log = logging.getLogger(__name__)
_NODE_TIMEOUT_S = 300


STDLIB_DIR = "assets/pyodide"


@dataclass(frozen=True)
class Snapshot:
    key: str
    path: Path  # the cached file
    sha256: str
    size: int
    report: dict
    stdlib_path: Path  # the cached trimmed standard library
    stdlib_sha256: str

    @property
    def name(self):
        return f"snapshot.{self.key[:12]}.bin.gz"

    @property
    def stdlib_name(self):
        return f"python_stdlib.{self.stdlib_sha256[:12]}.zip"

    def page_config(self, root):
        """What the page hands the runtime: where to fetch it and how to check it."""
        return {"url": f"{root}{SITE_DIR}/{self.name}", "sha256": self.sha256, "bytes": self.size}

    def stdlib_config(self, root):
        return {"url": f"{root}{STDLIB_DIR}/{self.stdlib_name}", "bytes": self.stdlib_path.stat().st_size}

    @property
    def lock_info(self):
        """Pyodide's lock-file ``info`` (the worker passes it with no packages instead of fetching the lock file)."""
        return self.report["lockInfo"]


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _pyodide_identity():
    """The pinned Pyodide release: its version and its loader (which carries the build id)."""
    directory = NODE_MODULES / "pyodide"
    try:
        version = json.loads((directory / "package.json").read_text(encoding="utf-8"))["version"]
        loader = (directory / "pyodide.mjs").read_bytes()
    except FileNotFoundError:
        raise BuildError(directory, "Pyodide is not installed: run `npm ci` (or `make setup`) first") from None
    return f"{version}:{_sha256(loader)}"


def inputs_key(pyzip):
    """Hash of everything the snapshot is made from."""
    parts = ("lab-snapshot-v2", _sha256(pyzip), _pyodide_identity(), _sha256(SCRIPT.read_bytes()), _sha256(DELTA.read_bytes()))
    return _sha256("\n".join(parts).encode())


def _node():
    node = shutil.which("node")
    if not node:
        raise BuildError(SCRIPT, "Node.js is needed to make the Pyodide snapshot (`node` not found on PATH)")
    return node


def check_report(report, where=SCRIPT):
    """Raise BuildError when the heap is larger than a restore can take."""
    heap, limit = report.get("heapBytes"), report.get("heapLimitBytes")
    if heap is None or limit is None:
        raise BuildError(where, f"snapshot report lacks heap sizes: {report}")
    if heap > limit:
        raise BuildError(
            where,
            f"the Pyodide snapshot's heap is {heap / 2**20:.1f} MiB, over the {limit / 2**20:.1f} MiB a restore can take "
            "(the browser would fail with 'RangeError: offset is out of bounds'). Something imported by lab_core/lab_view "
            "allocates too much at import time: make it lazy, or drop the module from the snapshot.",
        )


def make(pyzip, out_path, stdlib_path=None):
    """Run the Node script on ``pyzip`` (bytes), writing ``out_path`` and the
    trimmed standard library (``stdlib_path``, default beside ``out_path``); return its report."""
    stdlib_path = stdlib_path or Path(out_path).with_name("stdlib.zip")
    with tempfile.TemporaryDirectory(prefix="lab-snapshot-") as tmp:
        zip_path = Path(tmp) / "py.zip"
        zip_path.write_bytes(pyzip)
        try:
            result = subprocess.run(
                [_node(), str(SCRIPT), "--zip", str(zip_path), "--out", str(out_path), "--stdlib-out", str(stdlib_path),
                 "--pyodide", str(NODE_MODULES / "pyodide")],
                cwd=ROOT, capture_output=True, text=True, timeout=_NODE_TIMEOUT_S, check=False,
            )
        except subprocess.TimeoutExpired:
            raise BuildError(SCRIPT, f"making the Pyodide snapshot took over {_NODE_TIMEOUT_S} s") from None
    report = None
    lines = result.stdout.strip().splitlines()
    if lines:
        try:
            report = json.loads(lines[-1])
        except json.JSONDecodeError:
            report = None
    if report is not None and report.get("error") == "heap-too-large":
        check_report(report)
    if result.returncode != 0 or report is None:
        detail = (result.stderr or result.stdout).strip()[-2000:]
        raise BuildError(SCRIPT, f"making the Pyodide snapshot failed (exit {result.returncode}):\n{detail}")
    check_report(report)
    return report


def _prune_cache(keep_key):
    entries = sorted((p for p in CACHE_DIR.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in entries[_KEEP_CACHED:]:
        if stale.name != keep_key:
            shutil.rmtree(stale, ignore_errors=True)


def for_python_zip(pyzip):
    """The snapshot for these packages: from the cache, or made now (a few seconds)."""
    return _for_key(inputs_key(pyzip), pyzip)


@lru_cache(maxsize=1)
def _for_key(key, pyzip):
    """Remembered per inputs key (which also covers Pyodide and the script);
    the zip rides along to make the snapshot on a miss."""
    entry = CACHE_DIR / key[:32]
    data_path, report_path, stdlib_path = entry / "snapshot.bin.gz", entry / "report.json", entry / "stdlib.zip"
    if not (data_path.exists() and report_path.exists() and stdlib_path.exists()):
        entry.mkdir(parents=True, exist_ok=True)
        report = make(pyzip, data_path, stdlib_path)
        log.info(
            "Pyodide snapshot made in %.1f s: heap %.1f MiB (limit %.1f MiB, %.1f MiB in use), %.1f MB gzipped, %d modules; "
            "standard library: %d modules, %.1f MB of .pyc, cold boot from it %.1f s",
            report["makeMs"] / 1000, report["heapBytes"] / 2**20, report["heapLimitBytes"] / 2**20,
            (report.get("usedBytes") or 0) / 2**20, report["gzipBytes"] / 1e6, len(report["modules"]),
            report["stdlibModules"], report["stdlibBytes"] / 1e6, report["coldMs"] / 1000,
        )
        partial = report_path.with_name(f"report.json.{os.getpid()}.tmp")
        partial.write_text(json.dumps(report, indent=1, sort_keys=True), encoding="utf-8")
        partial.replace(report_path)
        _prune_cache(entry.name)
    else:
        os.utime(entry)  # most recently used: pruned last
    report = json.loads(report_path.read_text(encoding="utf-8"))
    check_report(report, data_path)
    data = data_path.read_bytes()
    return Snapshot(key=key, path=data_path, sha256=_sha256(data), size=len(data), report=report,
                    stdlib_path=stdlib_path, stdlib_sha256=_sha256(stdlib_path.read_bytes()))


def current():
    """The snapshot for the packages as they are on disk now."""
    return for_python_zip(assets.python_zip_bytes())


def _place(source, target, pattern, written):
    """Copy ``source`` to ``target`` unless identical; remove files of earlier
    builds matching ``pattern`` (not ones in ``written``, the set of files this build wrote)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    written.add(target)
    for stale in target.parent.glob(pattern):
        if stale not in written:
            os.remove(stale)
    if not target.exists() or target.stat().st_size != source.stat().st_size or target.read_bytes() != source.read_bytes():
        shutil.copyfile(source, target)


def write(site_dir, written):
    """Copy the current snapshot and standard library into the site; remove ones of earlier builds."""
    snapshot = current()
    _place(snapshot.path, Path(site_dir) / SITE_DIR / snapshot.name, "snapshot.*.bin.gz", written)
    _place(snapshot.stdlib_path, Path(site_dir) / STDLIB_DIR / snapshot.stdlib_name, "python_stdlib.*.zip", written)
    return snapshot
