"""Fixtures shared by every test folder."""
from pathlib import Path

import pytest
from hypothesis import settings

from labtest import build_site, copy_tree  # tests/ is on sys.path (pytest.ini: pythonpath)

ROOT = Path(__file__).resolve().parents[1]

# CI runs on two cores under load: a property's first example can take longer than
# hypothesis's 200 ms default, which is timing, not a failure of the property.
settings.register_profile("ci", deadline=None)
settings.load_profile("ci")


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The site built once per test session (strict); the path of its root."""
    target = tmp_path_factory.mktemp("site")
    result = build_site(target)
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stdout}\n{result.stderr}"
    return target


@pytest.fixture(scope="session")
def tree_copy(tmp_path_factory):
    """A copy of the repository to build with a file added or changed (a test undoes its change)."""
    return copy_tree(tmp_path_factory.mktemp("tree") / "repo")


@pytest.fixture(scope="session")
def repo_root():
    return ROOT
