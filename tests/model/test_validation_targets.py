"""`make validation`'s targets block (labtools.validation_report.target_lines): each bar
issue 14 set is printed with its mean, the rows past its row limit, and NOT MET when missed."""
from types import SimpleNamespace

from labsite.validation import Row, Tolerance, end_to_end_rows, end_to_end_runs
from labsite.validation.accuracy import quoted_run_kinds
from labtools.validation_report import TARGETS, kind_lines, target_lines


def _pair(error, metric="tokens_per_s_per_gpu", kind="prediction", modern=True, megatron=False):
    run = SimpleNamespace(group={"metric": metric})
    row = Row("g", f"row {error:+g}", 100.0 + error, 100.0, Tolerance(0.5), kind, modern=modern, megatron=megatron)
    return run, row


def _lines(pairs):
    runs, rows = zip(*pairs)
    return target_lines(list(runs), list(rows))


def test_each_bar_is_one_line_and_a_met_bar_says_nothing_more():
    pairs = [_pair(2.0), _pair(-3.0, megatron=True, modern=False),
             _pair(1.0, metric="reserved_memory_gib", modern=False), _pair(4.0, kind="held_out")]
    lines = _lines(pairs)
    assert len(lines) == len(TARGETS)
    assert not any("NOT MET" in line for line in lines)
    assert "mean  2.00% over 1 rows (target < 6%); 0 above 15%" in lines[0]


def test_a_row_past_the_row_limit_is_named_and_fails_the_bar_even_with_a_low_mean():
    pairs = [_pair(0.0)] * 9 + [_pair(-20.0), _pair(-3.0, megatron=True, modern=False),
                                _pair(1.0, metric="reserved_memory_gib", modern=False), _pair(4.0, kind="held_out")]
    lines = _lines(pairs)
    assert lines[0].endswith("1 above 15%  NOT MET")
    assert lines[1].strip() == "g row -20: -20.0%"


def test_a_mean_over_its_limit_fails():
    pairs = [_pair(2.0), _pair(-5.0, megatron=True, modern=False),
             _pair(1.0, metric="reserved_memory_gib", modern=False), _pair(9.0, kind="held_out")]
    lines = _lines(pairs)
    assert [("NOT MET" in line) for line in lines] == [False, True, False, True]


def test_the_kinds_of_run_print_as_the_lab_quotes_them():
    runs = end_to_end_runs()
    lines = kind_lines(runs, end_to_end_rows(runs))
    kinds = quoted_run_kinds()
    assert len(lines) == 1 + len(kinds)
    for line, kind in zip(lines[1:], kinds):
        assert line.split()[3:6] == [str(kind.runs), f"{100 * kind.median:.2f}", f"{100 * kind.bound:.2f}"]
