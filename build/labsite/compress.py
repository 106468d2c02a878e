"""Precompressed twins of the built site's files: ``x.br`` (brotli, quality
11) and ``x.gz`` (gzip -9) beside every compressible ``x``, so a host that
serves precompressed files (tools/serve.py, nginx ``gzip_static`` /
``brotli_static``, Caddy ``precompressed``) sends the smallest encoding the
browser accepts with ``Content-Encoding``, and the browser decodes it natively.

Measured on the pinned Pyodide 314.0.7: pyodide.asm.wasm 9.6 MB raw, 3.6 MB
gzip -9, 2.8 MB brotli; the trimmed standard library 3.8 MB of stored .pyc,
1.5 MB gzip, 1.0 MB brotli. A twin is kept only when it saves at least a
tenth. Brotli at quality 11 is slow on the wasm (about 40 s), so results are
cached under ``.cache/compressed/`` by content hash.
"""
import gzip
import hashlib
import os
from pathlib import Path

import brotli

from .paths import ROOT

CACHE_DIR = ROOT / ".cache" / "compressed"
COMPRESSIBLE = (".html", ".js", ".mjs", ".css", ".json", ".wasm", ".svg", ".xml", ".txt", ".zip", ".webmanifest")
ENCODERS = {
    ".br": lambda data: brotli.compress(data, quality=11, lgwin=24),
    ".gz": lambda data: gzip.compress(data, compresslevel=9, mtime=0),
}
_MIN_BYTES = 512
_MIN_SAVING = 0.1
#: Never twinned: the service worker script must always be the file the build just wrote.
_NEVER = {"sw.js"}


def _cached(data, suffix):
    digest = hashlib.sha256(data).hexdigest()
    path = CACHE_DIR / f"{digest}{suffix}"
    if path.exists():
        return path.read_bytes()
    out = ENCODERS[suffix](data)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_bytes(out)
    partial.replace(path)
    return out


def _write_if_changed(target, data):
    if target.exists() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return
    target.write_bytes(data)


def compress_site(site_dir):
    """Write the twins for every compressible file of ``site_dir``; return ``{rel: {suffix: bytes}}``."""
    site_dir = Path(site_dir)
    written = {}
    for path in sorted(site_dir.rglob("*")):
        if not path.is_file() or path.suffix not in COMPRESSIBLE or path.name.endswith(".tmp"):
            continue
        if path.relative_to(site_dir).as_posix() in _NEVER:
            for suffix in ENCODERS:
                path.with_name(path.name + suffix).unlink(missing_ok=True)
            continue
        data = path.read_bytes()
        if len(data) < _MIN_BYTES:
            continue
        sizes = {}
        for suffix in ENCODERS:
            twin = path.with_name(path.name + suffix)
            out = _cached(data, suffix) if len(data) > 64 * 1024 else ENCODERS[suffix](data)
            if len(out) <= (1 - _MIN_SAVING) * len(data):
                _write_if_changed(twin, out)
                sizes[suffix] = len(out)
            elif twin.exists():
                twin.unlink()
        if sizes:
            written[path.relative_to(site_dir).as_posix()] = sizes
    return written
