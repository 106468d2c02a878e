"""Which Chromium the browser tests and benchmarks drive, and how to get one.

LAB_BROWSER chooses:
  auto (default)  a system Chromium if one is found (LAB_CHROMIUM, then
                  /usr/bin/chromium, chromium-browser, google-chrome); else,
                  on Debian/Ubuntu as root, `apt-get install chromium`;
                  else Playwright's own Chromium (`playwright install chromium`).
  system          only a system Chromium (installed with apt-get when missing).
  playwright      Playwright's own downloaded Chromium.
LAB_CHROMIUM=/path/to/chrome pins the executable.

`python -m labtools.browser ensure` installs what is missing; `python -m labtools.browser path` prints the choice.
"""
import os
import shutil
import subprocess
import sys

SYSTEM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def mode():
    value = os.environ.get("LAB_BROWSER", "auto")
    if value not in ("auto", "system", "playwright"):
        sys.exit(f"error: LAB_BROWSER={value!r}; allowed: auto, system, playwright")
    return value


def system_chromium():
    pinned = os.environ.get("LAB_CHROMIUM")
    if pinned:
        return pinned if os.path.exists(pinned) else None
    for candidate in SYSTEM_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def executable_path():
    """Executable for Playwright's ``launch(executable_path=...)``; None means Playwright's own."""
    if mode() == "playwright":
        return None
    return system_chromium()


def _has_cjk_font():
    try:
        out = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        return False
    return bool(out.strip())


def _apt_install(packages):
    if not shutil.which("apt-get"):
        return False
    prefix = [] if os.geteuid() == 0 else (["sudo"] if shutil.which("sudo") else None)
    if prefix is None:
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print(f"browser: installing {' '.join(packages)} with apt-get", flush=True)
    subprocess.run(prefix + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(prefix + ["apt-get", "install", "-y", "-qq", *packages], check=True, env=env, stdout=subprocess.DEVNULL)
    return True


def ensure():
    chosen = mode()
    if chosen in ("auto", "system"):
        if system_chromium() is None:
            installed = _apt_install(["chromium", "fonts-noto-cjk"])
            if not installed and chosen == "system":
                sys.exit("error: no system Chromium and apt-get is not usable; set LAB_CHROMIUM or LAB_BROWSER=playwright")
        elif not _has_cjk_font() and shutil.which("apt-get") and os.geteuid() == 0:
            _apt_install(["fonts-noto-cjk"])
        if system_chromium() is not None:
            print(f"browser: {system_chromium()}")
            return
    subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=True)
    print("browser: Playwright's Chromium")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "path"
    if command == "ensure":
        ensure()
    elif command == "path":
        print(executable_path() or "playwright")
    else:
        sys.exit(f"error: unknown command {command!r}; allowed: ensure, path")
