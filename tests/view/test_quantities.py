"""What readers type and what the lab prints."""
import pytest
from hypothesis import given, strategies as st

from lab_view import QuantityError, format_quantity, parse_quantity
from lab_view.quantities import byte_units, format_scaled

UNITS = {"params": "{n}", "count": "{n}", "tokens": "{n}", "bytes_gb": "{n} GB", "plain": "{n}"}


@pytest.mark.parametrize(
    "text, value",
    [("1.3B", 1_300_000_000), ("1.3e9", 1_300_000_000), ("175 B", 175_000_000_000), ("1_000", 1000),
     ("1,024", 1024), ("8K", 8000), ("4M", 4_000_000), ("2T", 2_000_000_000_000), ("0.5", 0.5), ("  64 ", 64)],
)
def test_parse_accepts_what_engineers_write(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["", "abc", "1.3X", "1..3", "--5", "1e", "nan", "inf", "B", "1E310", "9e305T"])
def test_parse_rejects_the_rest_and_keeps_the_text(text):
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.text == text


@pytest.mark.parametrize("text, value", [("70,000,000,000", 70e9), ("1,024.5", 1024.5), ("1,234B", 1.234e12),
                                         ("1,024 B", 1.024e12), ("1,024e3", 1.024e6)])
def test_commas_that_group_thousands_are_dropped(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["1,5B", "12,3", "1.024,5", "1,0245", ",123", "1,,024", "1,024,", "12,34", "0,5"])
def test_a_comma_that_does_not_group_thousands_is_refused_not_dropped(text):
    """"1,5B" is 1.5B to a reader who writes decimal commas; dropping the comma read it as 15B."""
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.text == text and info.value.reason == "comma_grouping"


@pytest.mark.parametrize(
    "value, kind, text",
    [(1.3e9, "params", "1.3B"), (175e9, "params", "175B"), (1024, "count", "1,024"), (20.8e9, "bytes_gb", "20.8 GB"),
     (80e9, "bytes_gb", "80 GB"), (125e6, "params", "125M"), (2e12, "params", "2T")],
)
def test_format(value, kind, text):
    assert format_quantity(value, kind, UNITS) == text


@given(st.floats(min_value=1e3, max_value=1e15))
def test_scaled_format_round_trips_to_three_significant_figures(value):
    assert parse_quantity(format_scaled(value)) == pytest.approx(value, rel=5e-3)


def test_quoted_numbers_are_formatted_when_a_sentence_uses_them():
    from labsite.catalog import load_catalogs
    from lab_view.numbers import format_number, format_numbers

    catalog = load_catalogs()["en"]
    raw = {"tp": 8, "step_s": 1.25, "mfu": 0.41, "layout": {"tp": 8}, "memory_bytes": 7.2e10}
    numbers = format_numbers(raw, catalog, extras=" x CP 2")
    text = "TP {tp}{extras}: {step_s}, {mfu} MFU".format_map(numbers)
    assert text == (f"TP {format_number('tp', 8, catalog)} x CP 2: {format_number('step_s', 1.25, catalog)}, "
                    f"{format_number('mfu', 0.41, catalog)} MFU")
    assert "memory_bytes" not in numbers  # never quoted, never formatted
    for missing in ("{gpus}", "{layout}"):  # unknown, or not a scalar: the catalog's mistake shows
        with pytest.raises(KeyError):
            missing.format_map(numbers)


def test_a_remembered_quantity_is_the_text_of_its_own_value_kind_and_units():
    from lab_view.quantities import _format_quantity
    from labsite.catalog import load_catalogs

    catalogs = load_catalogs()
    en, zh = catalogs["en"]["units"], catalogs["zh"]["units"]
    gib = byte_units(en, "gib")
    for value, kind in ((1, "count"), (1.0, "count"), (True, "count"), (3e9, "bytes"), (3e9, "bytes_gb"),
                        (0.25, "percent"), (7200.0, "duration"), (8192, "tokens")):
        for units in (en, zh, gib):
            for _ in range(2):  # computed, then remembered
                assert format_quantity(value, kind, units) == _format_quantity(value, kind, units)
    assert format_quantity(3e9, "bytes", en) != format_quantity(3e9, "bytes", gib)


def test_a_share_too_small_for_three_figures_reads_below_the_smallest_never_zero():
    """A meter once read "0% of wall time lost (0.00379 interruptions a day)": a share under
    0.1% was written "0%". Now it reads "<0.1%"; zero (and floating-point residue of one) stays "0%",
    and 0.1% and above keep three significant figures, in both languages' units."""
    from labsite.catalog import load_catalogs

    for units in (catalog["units"] for catalog in load_catalogs().values()):
        percent = units["percent"]
        assert format_quantity(0.0, "percent", units) == percent.format(n="0")
        assert format_quantity(1e-14, "percent", units) == percent.format(n="0")
        assert format_quantity(0.00047, "percent", units) == percent.format(n="<0.1")
        assert format_quantity(-0.00047, "percent", units) == percent.format(n=">-0.1")
        assert format_quantity(0.001, "percent", units) == percent.format(n="0.1")
        assert format_quantity(0.00328, "percent", units) == percent.format(n="0.328")
        assert format_quantity(-0.05, "percent", units) == percent.format(n="-5")
