"""Fixtures shared by every test folder."""
import os
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "build", ROOT / "tools", ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from labtest import build_site  # noqa: E402  (needs tests/ on sys.path, set just above)


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
