"""Fixtures shared by every test folder."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "build", ROOT / "tools"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def build_site(target, source_root=ROOT):
    """Run a strict MkDocs build of ``source_root`` into ``target``; return the CompletedProcess."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = Path(sys.executable).with_name("mkdocs")
    command = [str(mkdocs)] if mkdocs.exists() else [sys.executable, "-m", "mkdocs"]
    return subprocess.run(
        [*command, "build", "--strict", "--quiet", "--site-dir", str(target)],
        cwd=source_root,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The site built once per test session (strict); the path of its root."""
    target = tmp_path_factory.mktemp("site")
    result = build_site(target)
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stdout}\n{result.stderr}"
    return target


@pytest.fixture(scope="session")
def repo_root():
    return ROOT
