"""The validation table (labsite.validation): every published figure the model
is judged on, within the tolerance its row carries. The same rows are on the
site's "model vs published runs" page and printed by `make validation`."""
import pytest

from labsite.validation import KINDS, rows

ROWS = rows()


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.fact}:{r.what}" for r in ROWS])
def test_published_figure(row):
    assert row.within(), (f"{row.fact} {row.what}: predicted {row.predicted:g}, published {row.published:g} "
                          f"(error {row.error:+.2f}%, tolerance {row.tolerance})")


def test_every_row_says_what_it_tests():
    assert {row.kind for row in ROWS} <= set(KINDS)
    assert all(row.fact and row.what for row in ROWS)

