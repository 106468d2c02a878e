"""How far the model was from published runs by kind of run (labsite.validation.accuracy):
which rows count, the figures of each kind, the lab's sentence under its figures, the
validation page's table and the worked design's paragraph, in both languages, every figure
computed from end_to_end.yaml."""
import math
import os
import re
import statistics
from html import unescape

import pytest
import yaml

from lab_core.hardware import GPU_PRESETS
from labsite.catalog import LANGUAGES, load_catalogs
from labsite.labpage import default_inputs, load_lab_layout
from labsite.pages.lab import runtime_session_config
from labsite.pages.rules import load_rules
from labsite.tutorial_values import chapter_data
from labsite.tutorial_values.design import WORKLOAD
from labsite.validation import MEMORY_METRICS, EndToEndRun, end_to_end_rows, end_to_end_runs
from labsite.validation.accuracy import MIN_RUNS, kind_of, quoted_run_kinds, run_kinds
from lab_view import Session
from lab_view.accuracy import kind_parts, kind_words, run_kind
from lab_view.quantities import format_quantity
from labtest import page_html

_SPEED = {"id": "speed", "source": "s", "url": "u", "quantity": "q", "tolerance_percent": 100,
          "metric": "tokens_per_s_per_gpu", "kind": "prediction"}
_SPEC = {"model": "M", "gpu": "h100_80gb", "layers": 8, "hidden": 1024, "heads": 8, "gpus": 8, "batch": 64,
         "seq_len": 2048, "tp": 1, "pp": 1}


def _runs(count, group=_SPEED, **changes):
    # Published figures spread around the model's own so the errors differ (the batch changes the run).
    runs = [EndToEndRun(group, dict(_SPEC, batch=64 * (i + 1), **changes)) for i in range(count)]
    for i, run in enumerate(runs):
        run.spec["published"] = run.predicted() * (1.0 + 0.01 * (i + 1))
    return runs


def _out_of_sample_speed(runs, rows):
    return [(run, row) for run, row in zip(runs, rows)
            if row.kind in ("prediction", "held_out") and run.group["metric"] not in MEMORY_METRICS]


def test_every_gpu_preset_has_a_generation():
    assert {gpu.architecture for gpu in GPU_PRESETS.values()} <= {"ampere", "hopper", "blackwell"}


def test_only_out_of_sample_speed_rows_count():
    fitted = dict(_SPEED, id="fitted", kind="calibrated")
    memory = dict(_SPEED, id="memory", metric="memory_gib")
    runs = _runs(MIN_RUNS) + _runs(MIN_RUNS, fitted, hidden=2048) + _runs(MIN_RUNS, memory, hidden=512)
    kinds = run_kinds(runs, end_to_end_rows(runs))
    assert {kind.runs for kind in kinds} == {MIN_RUNS}


def test_a_kind_with_too_few_runs_is_folded_into_a_broader_one():
    runs = _runs(MIN_RUNS) + _runs(MIN_RUNS - 1, gpu="b200_192gb", hidden=2048)
    kinds = run_kinds(runs, end_to_end_rows(runs))
    keys = [(k.stack, k.moe, k.architecture, k.runs) for k in kinds]
    assert keys == [("modern", False, "hopper", MIN_RUNS), ("modern", False, None, 2 * MIN_RUNS - 1),
                    ("modern", None, None, 2 * MIN_RUNS - 1), (None, None, None, 2 * MIN_RUNS - 1)]
    # A Blackwell workload falls back to the stack and model kind on any GPU.
    kind = run_kind([k.to_dict() for k in kinds], {"stack": "modern", "gpu": "b200_192gb", "experts": 0})
    assert (kind["architecture"], kind["runs"]) == (None, 2 * MIN_RUNS - 1)


def test_a_step_time_row_counts_a_shorter_predicted_step_as_faster():
    step = dict(_SPEED, id="step", metric="step_time_s")
    runs = _runs(MIN_RUNS, step)
    rows = end_to_end_rows(runs)
    assert all(row.error < 0 for row in rows)  # published steps 1-5% longer than the model's
    assert run_kinds(runs, rows)[0].bias > 0


def test_the_figures_of_each_kind_are_those_of_its_runs():
    runs = end_to_end_runs()
    picked = _out_of_sample_speed(runs, end_to_end_rows(runs))
    kinds = quoted_run_kinds()
    assert kinds[-1].runs == len(picked)  # every run, the last fallback
    for kind in kinds:
        errors = [row.error / 100.0 * (-1.0 if run.group["metric"] == "step_time_s" else 1.0)
                  for run, row in picked
                  if all(want is None or want == have for want, have in zip((kind.stack, kind.moe, kind.architecture),
                                                                            kind_of(run)))]
        sizes = sorted(abs(e) for e in errors)
        assert kind.runs == len(errors) >= MIN_RUNS
        assert kind.median == pytest.approx(statistics.median(sizes))
        assert kind.bias == pytest.approx(statistics.median(errors))
        # At least nine in ten are within the bound, and it is one of the runs' own errors.
        assert sum(size <= kind.bound for size in sizes) >= math.ceil(0.9 * len(sizes))
        assert kind.bound in sizes


def test_more_specific_kinds_come_first():
    levels = [(k.stack is None) + (k.moe is None) + (k.architecture is None) for k in quoted_run_kinds()]
    assert levels == sorted(levels)
    assert levels[-1] == 3


def test_the_run_kinds_follow_the_file(tmp_path):
    path = tmp_path / "end_to_end.yaml"
    group = dict(_SPEED, common=_SPEC)
    runs = _runs(MIN_RUNS)
    group["rows"] = [{"batch": run.spec["batch"], "published": run.spec["published"]} for run in runs]
    path.write_text(yaml.safe_dump({"groups": [group]}), encoding="utf-8")
    first = quoted_run_kinds(path)
    assert first[0].runs == MIN_RUNS
    group["rows"] = group["rows"] + [{"batch": 640, "published": 1.0}]
    path.write_text(yaml.safe_dump({"groups": [group]}), encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert quoted_run_kinds(path)[0].runs == MIN_RUNS + 1


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_lab_quotes_the_kind_of_the_readers_workload(lang):
    catalog = load_catalogs()[lang]
    session = Session(runtime_session_config(load_lab_layout(), catalog, lang, load_rules()))
    kinds = [kind.to_dict() for kind in quoted_run_kinds()]
    for changes in ({}, {"gpu": "h100_80gb"}, {"gpu": "h100_80gb", "stack": "torch_native"},
                    {"gpu": "h100_80gb", "experts": 8, "experts_per_token": 2}):
        inputs = dict(default_inputs(), **changes)
        view = session.evaluate(inputs)["view"]
        kind = run_kind(kinds, dict({"stack": "modern", "experts": 0}, **inputs))
        text = view["accuracy"]
        assert kind_words(kind, catalog["lab"]["accuracy"]) in text
        for value in (kind["median"], kind["bound"]):
            assert format_quantity(value, "percent", catalog["units"]) in text
        assert f"{kind['runs']:,}" in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_pages_show_the_kinds_and_link_to_them(built_site, lang):
    lab = unescape(page_html(built_site, lang, "lab/index.html"))
    assert re.search(r'<span data-bind="accuracy">[^<]+</span> <a href="[^"]*validation/#run-kinds">', lab)
    html = unescape(page_html(built_site, lang, "validation/index.html"))
    assert 'id="run-kinds"' in html
    table = html[html.index('data-table="run-kinds"'):]
    table = table[:table.index("</table>")]
    cells = re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td><td class=\"num\">(\d+)</td>"
                       r"<td class=\"num\">([0-9.]+)%</td>", table)
    texts = load_catalogs()[lang]["lab"]["accuracy"]
    shown = {kind_parts(k.to_dict(), texts) + (str(k.runs), f"{100 * k.median:.1f}") for k in quoted_run_kinds()}
    assert cells and set(cells) <= shown
    # A broader kind with the very runs of a narrower one is not listed again.
    assert len({cell[3:] for cell in cells}) == len(cells)


def test_the_worked_design_quotes_the_kind_the_lab_quotes_for_its_brief():
    values = chapter_data("design").values
    kind = run_kind([k.to_dict() for k in quoted_run_kinds()], dict({"stack": "modern", "experts": 0}, **WORKLOAD))
    assert values["acc_runs"][0] == kind["runs"]
    assert (values["acc_median"][0], values["acc_bound"][0]) == (kind["median"], kind["bound"])
    assert values["acc_bias"][0] == abs(kind["bias"])
