"""Serve the built site on 127.0.0.1 the way a static host would.

    python -m labtools.serve [--root site] [--port 8000] [--compress precompressed|gzip|none]
                          [--throttle-kbps N] [--latency-ms N]

- MIME types the lab needs: Pyodide's ``.wasm`` must be ``application/wasm``
  and ``.mjs`` a JavaScript type, or the worker never boots.
- Compression (``--compress``):
  ``precompressed`` (default, what ``make serve`` uses): a request for ``x``
  from a browser that accepts it gets the build's ``x.br`` or ``x.gz`` with
  ``Content-Encoding`` (as nginx ``gzip_static``/``brotli_static`` or Caddy's
  ``precompressed`` do); ``gzip``: every compressible response is gzipped on
  the fly, as hosts that compress but ignore precompressed files do;
  ``none``: raw files.
- Network emulation for tests and the bench: ``--latency-ms`` delays each
  response by one round trip and ``--throttle-kbps`` caps the bytes per second
  of *all* responses together (one shared link, as a phone has), so the page,
  its Web Worker and its service worker are all throttled alike.
- Every response is recorded (``server.log``: path, status, encoding, bytes
  sent, start and end times) so tests and the bench can count bytes on the
  wire and spot a file downloaded twice.

Used by `make serve`, the browser tests and the bench (``make_server``).
"""
import argparse
import email.utils
import functools
import gzip
import http.server
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

EXTRA_TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".zip": "application/zip",
    ".webmanifest": "application/manifest+json",
}

#: Types a compressing host gzips on the fly (``--compress gzip``).
COMPRESSIBLE = ("text/", "application/javascript", "application/json", "application/wasm", "application/zip",
                "application/manifest+json", "image/svg+xml", "application/xml", "application/octet-stream")

#: Precompressed siblings, best first, with the Content-Encoding each stands for.
PRECOMPRESSED = ((".br", "br"), (".gz", "gzip"))

COMPRESS_MODES = ("precompressed", "gzip", "none")
_CHUNK = 16 * 1024


@dataclass
class Served:
    """One response as it went on the wire."""
    path: str
    status: int
    encoding: str  # "br", "gzip" or "" (identity)
    bytes: int  # body bytes sent (after compression)
    started: float  # time.time() when the request arrived
    ended: float


class Link:
    """A shared downlink: every response's bytes queue on one clock, so N
    parallel downloads share ``bytes_per_s`` between them."""

    def __init__(self, bytes_per_s=None, latency_s=0.0):
        self.bytes_per_s = bytes_per_s
        self.latency_s = latency_s
        self._lock = threading.Lock()
        self._free_at = 0.0

    def wait_for(self, size):
        if not self.bytes_per_s:
            return
        with self._lock:
            start = max(time.monotonic(), self._free_at)
            self._free_at = start + size / self.bytes_per_s
            until = self._free_at
        delay = until - time.monotonic()
        if delay > 0:
            time.sleep(delay)


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **EXTRA_TYPES}

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)

    # ---- the response body ---------------------------------------------------
    def _accepts(self, encoding):
        header = self.headers.get("Accept-Encoding", "")
        return any(part.split(";")[0].strip() == encoding for part in header.split(","))

    def _record(self, status, encoding, sent, started):
        log = getattr(self.server, "log", None)
        if log is not None:
            with self.server.log_lock:
                log.append(Served(self.path.split("?", 1)[0], int(status), encoding, sent, started, time.time()))

    def _write(self, data):
        """Send ``data`` through the (possibly throttled) link; return bytes sent."""
        link = self.server.link
        sent = 0
        for offset in range(0, len(data), _CHUNK):
            chunk = data[offset:offset + _CHUNK]
            link.wait_for(len(chunk))
            self.wfile.write(chunk)
            sent += len(chunk)
        return sent

    def do_GET(self):
        self._respond(body=True)

    def do_HEAD(self):
        self._respond(body=False)

    def _respond(self, body):
        started = time.time()
        if self.server.link.latency_s:
            time.sleep(self.server.link.latency_s)
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            # Directory redirects and index.html: the base class knows how.
            if not self.path.split("?", 1)[0].endswith("/"):
                return self._plain(body, started)
            path = os.path.join(path, "index.html")
            if not os.path.isfile(path):
                return self._plain(body, started)
        if not os.path.isfile(path):
            return self._plain(body, started)
        stat = os.stat(path)
        if self._not_modified(stat):
            self.send_response(304)
            self.send_header("Vary", "Accept-Encoding")
            self.end_headers()
            return self._record(304, "", 0, started)
        ctype = self.guess_type(path)
        data, encoding = self._body_for(path, ctype)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Last-Modified", self.date_time_string(stat.st_mtime))
        self.send_header("Vary", "Accept-Encoding")
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.end_headers()
        sent = 0
        try:
            if body:
                sent = self._write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (an aborted fetch): record what got through
        self._record(200, encoding, sent, started)

    def _not_modified(self, stat):
        since = self.headers.get("If-Modified-Since")
        if not since or self.headers.get("If-None-Match"):
            return False
        try:
            when = email.utils.parsedate_to_datetime(since)
        except (TypeError, ValueError, IndexError, OverflowError):
            return False
        return int(stat.st_mtime) <= when.timestamp()

    def _body_for(self, path, ctype):
        mode = self.server.compress
        if mode == "precompressed":
            for suffix, encoding in PRECOMPRESSED:
                if os.path.isfile(path + suffix) and self._accepts(encoding):
                    with open(path + suffix, "rb") as handle:
                        return handle.read(), encoding
        with open(path, "rb") as handle:
            data = handle.read()
        if mode == "gzip" and self._accepts("gzip") and ctype.startswith(COMPRESSIBLE) and len(data) > 256:
            return self.server.gzipped(path, data), "gzip"
        return data, ""

    def _plain(self, body, started):
        """Redirects, listings and 404s, as the base class makes them."""
        handle = self.send_head()
        sent = 0
        if handle:
            try:
                if body:
                    sent = self._write(handle.read())
            finally:
                handle.close()
        self._record(getattr(self, "_status", 0), "", sent, started)

    def send_response(self, code, message=None):
        self._status = code
        super().send_response(code, message)


class SiteServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler, compress="precompressed", link=None, verbose=False):
        if compress not in COMPRESS_MODES:
            raise ValueError(f"compress must be one of {COMPRESS_MODES}, not {compress!r}")
        super().__init__(address, handler)
        self.compress = compress
        self.link = link or Link()
        self.verbose = verbose
        self.log = []
        self.log_lock = threading.Lock()
        self._gzip_cache = {}

    def gzipped(self, path, data):
        """On-the-fly gzip (level 6, as hosts use), memoised per file version."""
        stat = os.stat(path)
        key = (path, stat.st_size, stat.st_mtime_ns)
        if key not in self._gzip_cache:
            self._gzip_cache[key] = gzip.compress(data, compresslevel=6, mtime=0)
        return self._gzip_cache[key]

    def served(self):
        with self.log_lock:
            return list(self.log)


def make_server(root, port=0, host="127.0.0.1", verbose=False, compress="precompressed", throttle_kbps=None, latency_ms=0):
    """A threaded server for ``root``; ``port=0`` picks a free port.
    ``throttle_kbps`` is kilobytes (1000 bytes) per second for all responses together."""
    handler = functools.partial(SiteHandler, directory=str(root))
    link = Link(throttle_kbps * 1000 if throttle_kbps else None, latency_ms / 1000)
    return SiteServer((host, port), handler, compress=compress, link=link, verbose=verbose)


def serve_in_thread(root, port=0, **options):
    server = make_server(root, port, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="site")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--compress", choices=COMPRESS_MODES, default="precompressed")
    parser.add_argument("--throttle-kbps", type=float, default=None, help="cap all responses together at this many kB/s")
    parser.add_argument("--latency-ms", type=float, default=0, help="delay each response by this round trip")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "index.html").exists():
        sys.exit(f"error: {root}/index.html not found; build the site first (make site)")
    server = make_server(root, args.port, args.host, verbose=True, compress=args.compress,
                         throttle_kbps=args.throttle_kbps, latency_ms=args.latency_ms)
    network = ""
    if args.throttle_kbps or args.latency_ms:
        network = f", throttled to {args.throttle_kbps or 'unlimited'} kB/s with {args.latency_ms:g} ms latency"
    print(f"Serving {root}/ at http://{args.host}:{args.port}/ (English) and http://{args.host}:{args.port}/zh/ (中文); "
          f"compression: {args.compress}{network}. Ctrl+C stops.")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
