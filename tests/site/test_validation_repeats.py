"""Runs published more than once (labsite.validation.repeats): which rows count as the
same run, the spread of their figures, and the page's section that reports it in both
languages with every figure computed from end_to_end.yaml."""
import re
from html import unescape

import pytest

from labsite.catalog import LANGUAGES
from labsite.validation import EndToEndRun, end_to_end_runs
from labsite.validation.repeats import repeated_runs, spread_summary
from labtest import language_dir

_GROUP = {"id": "a", "metric": "tokens_per_s_per_gpu"}
_SPEC = {"model": "M", "gpu": "h100_80gb", "layers": 32, "hidden": 4096, "heads": 32, "gpus": 8, "batch": 128, "seq_len": 8192,
         "tp": 1, "pp": 1, "precision": "fp8"}


def _run(published, group=_GROUP, **changes):
    return EndToEndRun(group, dict(_SPEC, published=published, **changes))


def test_the_same_run_from_two_tables_or_names_is_one_repeat():
    other = {"id": "b", "metric": "tokens_per_s_per_gpu"}
    repeats = repeated_runs([_run(100.0), _run(118.0, other, model="M-renamed", source="elsewhere"), _run(90.0)])
    assert len(repeats) == 1
    assert (repeats[0].low, repeats[0].high) == (90.0, 118.0)
    assert repeats[0].spread_percent == pytest.approx(118.0 / 90.0 * 100.0 - 100.0)
    assert repeats[0].groups == ["a", "b"]


def test_a_row_that_spells_out_a_default_is_the_same_run():
    assert len(repeated_runs([_run(100.0), _run(104.0, tp_comm_overlap=True, stack="modern")])) == 1


@pytest.mark.parametrize("changes", [{"batch": 256}, {"precision": "bf16"}, {"tp_comm_overlap": False},
                                     {"gpus": 16}, {"micro_batch": 2}, {"inter_node_gbps": 100}])
def test_a_run_that_differs_in_any_input_is_not_a_repeat(changes):
    assert repeated_runs([_run(100.0), _run(110.0, **changes)]) == []


def test_memory_readings_and_other_metrics_do_not_pair():
    memory = {"id": "m", "metric": "reserved_memory_gib"}
    step = {"id": "s", "metric": "step_time_s"}
    assert repeated_runs([_run(70.0, memory), _run(72.0, memory)]) == []
    assert repeated_runs([_run(100.0), _run(1.2, step)]) == []


def test_largest_spread_first_and_the_summary():
    repeats = repeated_runs([_run(100.0), _run(102.0), _run(50.0, batch=64), _run(60.0, batch=64),
                             _run(10.0, batch=32), _run(10.5, batch=32)])
    assert [round(r.spread_percent, 1) for r in repeats] == [20.0, 5.0, 2.0]
    assert spread_summary(repeats) == pytest.approx((5.0, 20.0))
    assert spread_summary([]) is None


def _section(built_site, lang):
    html = (language_dir(built_site, lang) / "validation" / "index.html").read_text(encoding="utf-8")
    start = html.index('<h2 id="repeats"')
    return html, html[start:html.index('<h2 id="left-out"', start)]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_reports_every_repeated_run_with_computed_figures(built_site, lang):
    repeats = repeated_runs(end_to_end_runs())
    assert len(repeats) >= 5  # the section has something to say: several tables publish the same runs
    median, largest = spread_summary(repeats)
    html, section = _section(built_site, lang)
    rows = re.findall(r'<tr data-spread="([0-9.]+)">', section)
    assert rows == [f"{r.spread_percent:.1f}" for r in repeats]
    for text in (f"{median:.1f}%", f"{largest:.1f}%"):
        assert text in unescape(section)
        # The summary says it too, before the groups.
        assert text in unescape(html[:html.index('<h2 id="repeats"')])
    for anchor in set(re.findall(r'href="#([^"]+)"', section)):
        assert f'id="{anchor}"' in html, anchor
