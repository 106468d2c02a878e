"""tools/serve.py behaves like the static hosts the README names: precompressed
twins sent with Content-Encoding, on-the-fly gzip, 304 revalidation; and its
network emulation (latency, one shared throttled link) with a log of bytes."""
import gzip
import time
import urllib.request

import brotli
import pytest

from labtools.serve import make_server, serve_in_thread


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "index.html").write_text("<p>home</p>" * 200, encoding="utf-8")
    body = b"\0asm" + bytes(range(256)) * 400
    (tmp_path / "a.wasm").write_bytes(body)
    (tmp_path / "a.wasm.br").write_bytes(brotli.compress(body))
    (tmp_path / "a.wasm.gz").write_bytes(gzip.compress(body, mtime=0))
    (tmp_path / "data.bin.gz").write_bytes(gzip.compress(b"x" * 1000, mtime=0))
    return tmp_path


def fetch(server, path, accept="gzip, deflate, br", headers=None):
    request = urllib.request.Request(f"http://127.0.0.1:{server.server_address[1]}/{path}",
                                     headers={"Accept-Encoding": accept, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), b""


def served(server, count):
    """The server's log once it holds ``count`` responses (each is logged just after it is sent)."""
    deadline = time.monotonic() + 60
    while len(server.served()) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.served()


@pytest.fixture
def serve(tree):
    servers = []

    def start(**options):
        server = serve_in_thread(tree, **options)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_precompressed_twin_is_sent_with_its_encoding(serve, tree):
    server = serve()
    status, headers, body = fetch(server, "a.wasm")
    assert status == 200 and headers["Content-Encoding"] == "br" and headers["Content-Type"] == "application/wasm"
    assert brotli.decompress(body) == (tree / "a.wasm").read_bytes()
    assert headers["Vary"] == "Accept-Encoding"
    status, headers, body = fetch(server, "a.wasm", accept="gzip")
    assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == (tree / "a.wasm").read_bytes()
    status, headers, body = fetch(server, "a.wasm", accept="identity")
    assert "Content-Encoding" not in headers and body == (tree / "a.wasm").read_bytes()
    # A .gz file asked for by its own name is a file, not an encoding.
    status, headers, body = fetch(server, "data.bin.gz")
    assert "Content-Encoding" not in headers and body == (tree / "data.bin.gz").read_bytes()
    # Each response is logged by its own handler thread just after it is sent, so under load two entries
    # may land in the log out of order: the log is compared as a set of entries.
    assert sorted((r.path, r.encoding) for r in served(server, 4)) == sorted(
        [("/a.wasm", "br"), ("/a.wasm", "gzip"), ("/a.wasm", ""), ("/data.bin.gz", "")])


def test_gzip_host_compresses_on_the_fly_and_ignores_twins(serve, tree):
    server = serve(compress="gzip")
    status, headers, body = fetch(server, "index.html")
    assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == (tree / "index.html").read_bytes()
    status, headers, body = fetch(server, "a.wasm")
    assert headers["Content-Encoding"] == "gzip"
    [logged] = [r for r in served(server, 2) if r.path == "/a.wasm"]
    assert int(headers["Content-Length"]) == len(body) == logged.bytes


def test_plain_host_sends_raw_files_and_revalidates(serve, tree):
    server = serve(compress="none")
    status, headers, body = fetch(server, "a.wasm")
    assert "Content-Encoding" not in headers and len(body) == (tree / "a.wasm").stat().st_size
    status, headers, body = fetch(server, "a.wasm", headers={"If-Modified-Since": headers["Last-Modified"]})
    assert status == 304 and body == b""
    assert fetch(server, "missing.js")[0] == 404
    assert sorted(r.status for r in served(server, 3)) == [200, 304, 404]


def test_throttle_is_one_link_shared_by_parallel_downloads(serve, tree):
    import threading

    server = serve(compress="none", throttle_kbps=200, latency_ms=50)
    size = (tree / "a.wasm").stat().st_size  # about 100 kB: half a second alone
    started = time.monotonic()
    threads = [threading.Thread(target=fetch, args=(server, "a.wasm")) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    assert elapsed >= 2 * size / 200_000  # two downloads share the link: no faster than both in a row
    assert all(r.ended - r.started >= 0.05 for r in served(server, 2))  # each paid the latency


def test_unknown_compression_mode_is_refused(tree):
    with pytest.raises(ValueError):
        make_server(tree, compress="zstd")
