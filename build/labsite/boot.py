"""What the lab page hands its runtime for the boot: every file the worker
downloads, with its size (the progress bar is determinate from the first
byte), the trimmed standard library, the Pyodide lock info (no lock-file
request) and the optional memory snapshot."""
from . import assets, scripts, snapshot


def boot_config(root, pyzip_url, pyzip_bytes):
    current = snapshot.current()
    index = f"{root}{assets.PYODIDE_DIR}/"
    return {
        "worker": scripts.url(root, "worker"),
        "indexURL": index,
        "wasm": {"url": f"{index}pyodide.asm.wasm", "bytes": assets.pyodide_bytes("pyodide.asm.wasm")},
        "asm": {"url": f"{index}pyodide.asm.mjs", "bytes": assets.pyodide_bytes("pyodide.asm.mjs")},
        "loader": {"url": f"{index}pyodide.mjs", "bytes": assets.pyodide_bytes("pyodide.mjs")},
        "stdlib": current.stdlib_config(root),
        "pyzip": {"url": pyzip_url, "bytes": pyzip_bytes},
        "lockInfo": current.lock_info,
        # Build-time Pyodide memory snapshot ({url, sha256, bytes}); the worker
        # fetches it only when it pays on this connection (or is cached), and
        # boots cold when it is missing, stale or broken (labsite.snapshot).
        "snapshot": current.page_config(root),
    }
