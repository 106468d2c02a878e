"""Published figures (shared/validation/published.yaml) reproduced by lab_core."""
import filecmp
import os

import pytest

from published_checks import SHARED, VENDORED, checks, load_facts, within

ROWS = checks(load_facts())


@pytest.mark.parametrize("row", ROWS, ids=[f"{r[0]}:{r[1]}" for r in ROWS])
def test_published_figure(row):
    fid, quantity, predicted, published, tol, kind = row
    assert within(row), f"{fid} {quantity}: predicted {predicted}, published {published} ({kind} tol {tol})"


def test_vendored_copy_is_identical():
    assert os.path.exists(VENDORED)
    if os.path.exists(SHARED):
        assert filecmp.cmp(SHARED, VENDORED, shallow=False), "content/validation/published.yaml differs from shared/"
