"""python -m lab_core plan / compare: the lab's answer, its exports and two
plans side by side on the command line, in both languages; bad flags exit 2
with the page's own sentence."""
import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config
from lab_core import Workload, export, preset_inputs, recommend
from labtest import spaces_between_chinese
from lab_view import Session

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CATALOGS = load_catalogs()
LLAMA = ["--preset", "llama3-70b", "--gpus", "512", "--gpu", "h100_80gb", "--global-batch-tokens", "4M"]
LLAMA_WORKLOAD = Workload(**dict(preset_inputs("llama3-70b"), gpus=512, gpu="h100_80gb", global_batch_tokens=4194304))


def run(*args):
    return subprocess.run([sys.executable, "-m", "lab_core", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.fixture(scope="module")
def planned():
    return recommend(LLAMA_WORKLOAD)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plan_prints_the_recommended_plan_with_its_reasons(lang, planned):
    out = run("plan", *LLAMA, "--lang", lang)
    assert out.returncode == 0, out.stderr
    words = CATALOGS[lang]
    par = planned.parallelism
    assert words["stages"][planned.stage]["title"] in out.stdout
    for decision in planned.decisions:
        assert words["decisions"][decision["id"]]["title"] in out.stdout
    assert re.search(rf"{re.escape(words['lab']['plan']['tp'])}\s+{par.tp}\n", out.stdout)
    assert words["presets"]["names"]["llama3-70b"] in out.stdout
    has_chinese = bool(re.search(r"[\u4e00-\u9fff]", out.stdout))
    assert has_chinese == (lang == "zh")
    # Spaced as the page spaces Chinese: no space between two Chinese characters within a
    # sentence (the padded columns between a label and its value aside).
    segments = [segment for line in out.stdout.splitlines() for segment in re.split(r" {2,}", line.strip())]
    assert spaces_between_chinese(segments) == []


@pytest.mark.parametrize("fmt", ["megatron", "torchtitan", "deepspeed", "json"])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_plan_formats_are_lab_cores_exports_of_the_recommended_plan(fmt, lang, planned):
    out = run("plan", *LLAMA, "--format", fmt, "--lang", lang)
    assert out.returncode == 0, out.stderr
    assert out.stdout == export(planned, LLAMA_WORKLOAD, fmt, CATALOGS[lang]["export"]).text
    if fmt == "torchtitan":
        assert tomllib.loads(out.stdout)["parallelism"]["tensor_parallel_degree"] == planned.parallelism.tp
    if fmt in ("json", "deepspeed"):
        json.loads(out.stdout)


def test_units_write_memory_in_gibibytes():
    out = run("plan", *LLAMA, "--units", "gib")
    # Memory in GiB; rates (GB/s) stay decimal, as storage and networks quote them.
    assert out.returncode == 0 and " GiB" in out.stdout and not re.search(r"\d GB(?!/s)", out.stdout)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_compare_prints_both_plans_and_marks_what_differs(lang):
    out = run("compare", *LLAMA, "--lang", lang, "--vs", "--gpus", "1024")
    assert out.returncode == 0, out.stderr
    words = CATALOGS[lang]["compare"]
    assert words["columns"]["a"] in out.stdout and words["columns"]["b"] in out.stdout
    gpus_row = next(line for line in out.stdout.splitlines() if words["rows"]["gpus"] in line)
    assert gpus_row.startswith("≠") and "512" in gpus_row and "1,024" in gpus_row


def test_compare_json_has_both_states_and_the_rows():
    out = run("compare", *LLAMA, "--format", "json", "--vs", "--gpu", "h200_141gb")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["a"]["inputs"]["gpu"] == "h100_80gb" and data["b"]["inputs"]["gpu"] == "h200_141gb"
    total = next(row for row in data["rows"] if row["id"] == "memory_total")
    assert set(total) >= {"a", "b", "differs", "better", "change"}


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("flag,value", [("--params", "abc"), ("--params", "1e20"), ("--gpus", "0"),
                                        ("--seq-len", "3x"), ("--gpu", "tpu")])
def test_bad_values_exit_2_with_the_pages_sentence(lang, flag, value):
    out = run("plan", flag, value, "--lang", lang)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    name = flag[2:].replace("-", "_")
    session = Session(session_config(load_lab_layout(), CATALOGS[lang], {"rules_short": [], "rules_href": ""}))
    page = session.evaluate(default_inputs(), {name: value})
    assert not page["ok"] and page["error"]["text"] in out.stderr
    assert out.stderr.startswith(CATALOGS[lang]["cli"]["error"].split("{")[0])


@pytest.mark.parametrize("args", [["plan", "--bogus", "1"], ["plan", "--pin", "tp"], ["plan", "--pin", "speed=9"],
                                  ["plan", "--tp", "0"],  # never the abbreviation of --tp-comm-overlap
                                  ["plan", "--preset", "llama9"], ["plan", "--format", "nemo"],
                                  ["compare", "--gpus", "8"]])
def test_bad_flags_exit_2_in_one_line(args):
    out = run(*args)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_on_off_inputs_read_as_the_help_writes_them():
    """The help names on/off inputs "(on/off)": plan reads those words as the page's boxes do."""
    words = run("plan", "--params", "7e9", "--gpus", "8", "--tp-comm-overlap", "off", "--format", "json")
    plain = run("plan", "--params", "7e9", "--gpus", "8", "--tp-comm-overlap", "false", "--format", "json")
    assert words.returncode == 0 and plain.returncode == 0, words.stderr
    assert words.stdout == plain.stdout


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pins_fix_the_plan_and_reach_the_export(lang):
    out = run("plan", *LLAMA, "--pin", "tp=8", "--pin", "zero=3", "--pin", "recompute=full", "--format", "megatron",
              "--lang", lang)
    assert out.returncode == 0, out.stderr
    assert "--tensor-model-parallel-size 8 " in out.stdout and "optim_grads_params" in out.stdout
    assert "--recompute-granularity full" in out.stdout
    unpinned = run("plan", *LLAMA, "--pin", "tp=8", "--pin", "tp=auto", "--format", "json")
    assert json.loads(unpinned.stdout)["parallelism"]["tp"] == recommend(LLAMA_WORKLOAD).parallelism.tp


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_invalid_pin_exits_2_with_the_rule_and_the_nearest_values(lang):
    out = run("plan", *LLAMA, "--pin", "tp=3", "--lang", lang)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert CATALOGS[lang]["pin_errors"]["why"]["tp"] in out.stderr and "1, 2, 4, 8" in out.stderr


def test_compare_b_changes_a_pin():
    out = run("compare", *LLAMA, "--pin", "zero=1", "--format", "json", "--vs", "--pin", "zero=3")
    data = json.loads(out.stdout)
    assert data["a"]["pins"] == {"zero": "1"} and data["b"]["pins"] == {"zero": "3"}
    assert next(row for row in data["rows"] if row["id"] == "zero")["differs"]
