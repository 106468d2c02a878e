"""The lab's tools in lab_view, in both languages: pins (options, errors with
the rule and the nearest values, links that drop a bad pin), presets, GB/GiB,
compare A/B, curves and the extras request (curves, export) the page sends
after an answer."""
import json
import re

import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config
from lab_core import Parallelism, Workload, export, preset_inputs
from lab_core.curves import curves
from lab_view import Session
from lab_view.compare import compare_rows
from lab_view.curves import render_curves
from lab_view.pins import PANEL_FIELDS, read_pins
from lab_view.quantities import byte_units, format_quantity

EXTRAS = {"rules_short": [], "rules_href": "../rules/"}
CATALOGS = load_catalogs()
LLAMA = dict(default_inputs(), **preset_inputs("llama3-70b"), gpus=512, gpu="h100_80gb")


@pytest.fixture(scope="module")
def sessions():
    layout = load_lab_layout()
    return {lang: Session(session_config(layout, CATALOGS[lang], EXTRAS)) for lang in LANGUAGES}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pins_fix_the_plan_and_the_view_marks_them(sessions, lang):
    result = sessions[lang].evaluate(LLAMA, pins={"tp": "8", "zero": "3", "recompute": "full"})
    assert result["ok"], result
    items = result["view"]["plan"]["items"]
    assert items["tp"] == "8" and items["zero"] == "3"
    assert result["pins"] == {"tp": "8", "zero": "3", "recompute": "full"}
    extras = sessions[lang].extras({"inputs": result["inputs"], "pins": result["pins"]}, want_pins=True)
    options = extras["pins"]
    assert set(options) == set(PANEL_FIELDS)
    assert '<option value="8" selected>' in options["tp"]["options"] and options["tp"]["pinned"]
    assert '<option value="" selected>' in options["pp"]["options"] and not options["pp"]["pinned"]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("pins,field,nearest", [({"tp": "3"}, "tp", "1, 2, 4, 8"), ({"pp": "7"}, "pp", "8"),
                                                ({"tp": "8", "dp": "3"}, "dp", "4")])
def test_an_invalid_pin_says_why_in_one_line_with_the_nearest_valid_values(sessions, lang, pins, field, nearest):
    result = sessions[lang].evaluate(LLAMA, pins=pins)
    assert not result["ok"] and result["error"]["field"] == field
    text = result["error"]["text"]
    assert CATALOGS[lang]["pin_errors"]["why"][field] in text and nearest in text
    assert CATALOGS[lang]["field_labels"][field] in text and "\n" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_pipelined_zero_3_pin_on_the_pytorch_native_stack_says_which_stages_run(sessions, lang):
    """FSDP under PyTorch's pipeline is ZeRO-1 (lab_core.parallelism.zero_stages): the pin's
    error gives that rule in the reader's language and the stages that do run."""
    result = sessions[lang].evaluate(dict(LLAMA, stack="torch_native"), pins={"pp": "2", "zero": "3"})
    assert not result["ok"] and result["error"]["field"] == "zero"
    text = result["error"]["text"]
    why = CATALOGS[lang]["pin_errors"]["why"]["zero"]
    assert why in text and "0, 1" in text and "PyTorch" in why and "\n" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_micro_batch_pin_dualpipe_cannot_run_says_so(sessions, lang):
    """DualPipe needs an even count of micro-batches, at least 2 pp: a micro-batch pin that
    leaves fewer on every pinned grid is refused with that rule and the sizes that run (the
    pins were accepted and the answer was an internal error)."""
    inputs = dict(default_inputs(), params=962e6, gpus=128, inter_node_gbps=25.8, gpu="a100_80gb",
                  stack="torch_native", flash_attention=False, seq_len=16384, global_batch_tokens=131072,
                  pipeline_schedule="dualpipe")
    result = sessions[lang].evaluate(inputs, pins={"micro_batch": "2", "tp": "8", "first_stage_layers": "5"})
    assert not result["ok"] and result["error"]["field"] == "micro_batch"
    text = result["error"]["text"]
    why = CATALOGS[lang]["pin_errors"]["why"]["micro_batch"]
    assert why in text and "DualPipe" in why and text.rstrip("。.").endswith("1") and "\n" not in text


def test_a_links_bad_pin_is_dropped_with_a_note(sessions):
    result = sessions["en"].evaluate(LLAMA, pins={"tp": "3", "zero": "1"}, lenient=True)
    assert result["ok"] and result["pins"] == {"zero": "1"}
    assert result["notes"][0]["field"] == "tp"


def test_read_pins_keeps_types_and_drops_auto():
    assert read_pins({"tp": "8", "recompute": "full", "sequence_parallel": "false", "pp": "", "bogus": "1"}) == \
        {"tp": 8, "recompute": "full", "sequence_parallel": False}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_presets_are_named_with_their_source_and_custom_otherwise(sessions, lang):
    view = sessions[lang].evaluate(LLAMA)["view"]["preset"]
    assert view["id"] == "llama3-70b" and "arXiv:2407.21783" in view["source"] and view["note"]
    assert sessions[lang].evaluate(default_inputs())["view"]["preset"] == {"id": "custom", "source": "", "note": ""}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_memory_in_gib_changes_every_memory_figure_not_the_rates(sessions, lang):
    gb = sessions[lang].evaluate(LLAMA)["view"]
    gib = sessions[lang].evaluate(LLAMA, units="gib")["view"]
    assert "GiB" in gib["memory_bar"] and "GiB" not in gb["memory_bar"]
    assert "GiB" in gib["meters"]["memory"]["text"]
    units = CATALOGS[lang]["units"]
    assert format_quantity(80e9, "bytes", byte_units(units, "gib")) == units["gib"].format(n="74.5")
    assert format_quantity(100e9, "bytes_per_s", byte_units(units, "gib")) == format_quantity(100e9, "bytes_per_s", units)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_compare_shows_a_beside_b_and_marks_what_differs(sessions, lang):
    a = {"inputs": LLAMA, "pins": {}}
    same = sessions[lang].evaluate(LLAMA, compare=a)["compare"]
    assert same["ok"] and not any(row["differs"] for row in same["rows"])
    assert same["summary"] == CATALOGS[lang]["compare"]["same"]
    other = sessions[lang].evaluate(dict(LLAMA, gpus=1024), compare=a)["compare"]
    rows = {row["id"]: row for row in other["rows"]}
    assert rows["gpus"]["differs"] and rows["gpus"]["a"] == "512" and rows["gpus"]["b"] == "1,024"
    assert rows["step"]["better"] == "b" and rows["step"]["change"]
    assert 'class="cmp-differs"' in other["html"] and CATALOGS[lang]["compare"]["better"] in other["html"]


def test_compare_direction_of_better(sessions):
    a = sessions["en"].plan_result(LLAMA)
    b = sessions["en"].plan_result(dict(LLAMA, gpus=1024))
    rows = {r["id"]: r for r in compare_rows({"plan": a["plan"], "report": a["plan"]["report"]},
                                             {"plan": b["plan"], "report": b["plan"]["report"]}, CATALOGS["en"])}
    faster = b["plan"]["report"]["time"]["step_s"] < a["plan"]["report"]["time"]["step_s"]
    assert rows["step"]["better"] == ("b" if faster else "a")
    assert rows["tokens_per_s"]["better"] == ("b" if faster else "a")


def test_a_pinned_a_the_workload_rejects_is_said_in_the_panel(sessions):
    compare = sessions["en"].evaluate(LLAMA, compare={"inputs": LLAMA, "pins": {"tp": "3"}})["compare"]
    assert not compare["ok"] and "Tensor parallel" in compare["summary"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_curves_draw_every_point_and_table_it(lang):
    workload = Workload(**{k: v for k, v in LLAMA.items()})
    par = Parallelism(tp=4, pp=8, dp=16, zero=1, sequence_parallel=True, micro_batch=1, interleave=10)
    data = curves(workload, par)
    rendered = render_curves(data, 512, CATALOGS[lang])
    for name, points in data.items():
        chart = rendered[name]
        assert chart["svg"].startswith("<svg") and 'role="img"' in chart["svg"]
        assert chart["table"].count("<tr>") == len(points) + 1
        assert CATALOGS[lang]["curves"]["titles"][name] == chart["title"]
    assert rendered["seq_len"]["svg"].count('class="bar-weights"') == sum(p["ok"] for p in data["seq_len"])
    assert "ch-limit" in rendered["seq_len"]["svg"] and "ch-here" in rendered["gpus"]["svg"]
    memory = [p["memory_bytes"] for p in data["seq_len"] if p["ok"]]
    assert memory == sorted(memory)  # longer sequences never need less memory
    steps = [p["step_s"] for p in data["gpus"] if p["ok"]]
    assert steps == sorted(steps, reverse=True)  # more GPUs, same batch: shorter steps


def test_extras_request_returns_the_curves_and_the_export_of_the_answered_state(sessions):
    session = sessions["en"]
    answer = session.evaluate(LLAMA, pins={"tp": "8"})
    request = {"kind": "extras", "state": {"inputs": answer["inputs"], "pins": answer["pins"]}, "units": "gb",
               "curves": True, "export": "torchtitan"}
    extras = json.loads(session.handle(json.dumps(request)))
    assert extras["kind"] == "extras" and extras["ok"]
    assert set(extras["curves"]) == {"seq_len", "micro_batch", "gpus"}
    plan = session.plan_result(answer["inputs"], answer["pins"])["plan"]
    workload = Workload(**dict(answer["inputs"], gpus=plan["gpus"]["used"]))
    want = export(Parallelism(**plan["parallelism"]), workload, "torchtitan", CATALOGS["en"]["export"]).text
    assert extras["export"]["text"] == want and "tensor_parallel_degree = 8" in want
    only_export = json.loads(session.handle(json.dumps(dict(request, curves=False, export="megatron"))))
    assert only_export["curves"] is None and "--tensor-model-parallel-size 8" in only_export["export"]["text"]


def test_evaluate_answers_say_their_kind(sessions):
    answer = json.loads(sessions["zh"].handle(json.dumps({"inputs": LLAMA, "units": "gib"})))
    assert answer["kind"] == "evaluate" and answer["ok"]
    assert re.search(r"GiB", answer["view"]["memory_bar"])
