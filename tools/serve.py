"""Serve the built site on 127.0.0.1 with the MIME types the lab needs.

`python -m labtools.serve [--root site] [--port 8000]`. Pyodide's ``.wasm`` must be
``application/wasm`` and ``.mjs`` a JavaScript type, or the worker never boots.
Used by `make serve` and by the browser tests (``make_server``).
"""
import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

EXTRA_TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".zip": "application/zip",
    ".webmanifest": "application/manifest+json",
}


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **EXTRA_TYPES}

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        if getattr(self.server, "verbose", False):
            super().log_message(format, *args)


def make_server(root, port=0, host="127.0.0.1", verbose=False):
    """A ThreadingHTTPServer for ``root``; ``port=0`` picks a free port."""
    handler = functools.partial(SiteHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    server.verbose = verbose
    return server


def serve_in_thread(root, port=0):
    server = make_server(root, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="site")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not (root / "index.html").exists():
        sys.exit(f"error: {root}/index.html not found; build the site first (make site)")
    server = make_server(root, args.port, args.host, verbose=True)
    print(f"Serving {root}/ at http://{args.host}:{args.port}/ (English) and http://{args.host}:{args.port}/zh/ (中文). Ctrl+C stops.")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
