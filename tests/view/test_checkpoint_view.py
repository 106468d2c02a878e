"""The checkpointing decision and the fault meter in the reader's words: every
reason the planner reaches is rendered in both languages with its numbers, and
the fault meter breaks the lost time down (lost work, pauses, recovery parts)."""
import re

import pytest

from lab_core.planner.json_plan import plan_json
from lab_view import Session
from labsite.catalog import load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config

EXTRAS = {"rules_short": [], "rules_href": "../rules/"}
AT_SCALE = dict(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16 * 2 ** 20,
                inter_node_gbps=400)

#: (inputs, option, reason) the planner gives for each case.
CASES = [
    (dict(gpu_failures_per_hour=0.0), "keep_interval", "no_failures"),
    (dict(), "keep_interval", "gain_immaterial"),
    (dict(AT_SCALE, checkpoint_mode="blocking"), "use_in_memory", "blocking_pauses_training"),
    (dict(AT_SCALE, checkpoint_interval_min=2), "use_in_memory", "memory_recovery_faster"),
    (dict(AT_SCALE, checkpoint_interval_min=60), "shorten_interval", "too_long_loses_work"),
    (dict(AT_SCALE, checkpoint_mode="in_memory", checkpoint_interval_min=2), "keep_interval", "snapshot_beats_blocking"),
    (dict(AT_SCALE, checkpoint_mode="in_memory", checkpoint_interval_min=0.1), "lengthen_interval",
     "too_short_wastes_writes"),
    (dict(AT_SCALE, checkpoint_mode="in_memory", checkpoint_storage_gbps=2, checkpoint_interval_min=0.5),
     "lengthen_interval", "waits_for_background"),
    # Failures every few minutes (20,736 A100s, a 59-minute restart): the reader's 1-minute interval
    # beats Daly's 1.67 (goodput 58.85% against 58.84%), which read "would win back only -0.1%".
    (dict(params=868.8e9, gpus=20736, global_batch_tokens=65536, seq_len=512, inter_node_gbps=25,
          checkpoint_interval_min=1, gpu="a100_80gb", flash_attention=False, checkpoint_mode="in_memory",
          restart_min=59), "keep_interval", "beats_estimate"),
]


@pytest.fixture(scope="module")
def sessions():
    layout = load_lab_layout()
    return {lang: Session(session_config(layout, catalog, EXTRAS)) for lang, catalog in load_catalogs().items()}


def _decision(view):
    html = view["decisions"]
    match = re.search(r'<article[^>]*data-decision="checkpointing">(.*?)</article>', html, re.S)
    return re.sub(r"<[^>]+>", " ", match.group(1))


@pytest.mark.parametrize("inputs,option,reason", CASES, ids=[case[2] for case in CASES])
def test_every_checkpoint_reason_renders_in_both_languages(sessions, inputs, option, reason):
    catalogs = load_catalogs()
    for lang, session in sessions.items():
        result = session.evaluate(dict(default_inputs(), **inputs))
        assert result["ok"], result
        plan = plan_json(dict(default_inputs(), **inputs))["plan"]
        decision = next(d for d in plan["decisions"] if d["id"] == "checkpointing")
        assert (decision["option"], decision["reason"]) == (option, reason)
        text = _decision(result["view"])
        assert "{" not in text and "}" not in text
        title = catalogs[lang]["decisions"]["checkpointing"]["title"]
        assert title in text


def test_fault_meter_breaks_the_lost_time_down(sessions):
    inputs = dict(default_inputs(), **AT_SCALE)
    en = sessions["en"].evaluate(inputs)["view"]["meters"]["fault"]["text"]
    zh = sessions["zh"].evaluate(inputs)["view"]["meters"]["fault"]["text"]
    for word in ("recomputing lost work", "checkpoint pauses", "detection", "communicator set-up",
                 "loading the checkpoint"):
        assert word in en
    for word in ("重算丢失的工作", "checkpoint 停顿", "发现故障", "建立通信器", "加载 checkpoint"):
        assert word in zh
    fixed = sessions["en"].evaluate(dict(inputs, restart_min=10))["view"]["meters"]["fault"]["text"]
    assert "a fixed 10 min per interruption" in fixed
    none = sessions["en"].evaluate(dict(inputs, gpu_failures_per_hour=0.0))["view"]["meters"]["fault"]["text"]
    assert "no interruptions are modelled" in none


def test_the_modelled_restart_time_is_the_hint_of_the_empty_box(sessions):
    view = sessions["en"].evaluate(dict(default_inputs(), **AT_SCALE))["view"]
    assert "restart_min" not in view["values"]
    assert view["derived"]["restart_min"].startswith("derived: ") and "min" in view["derived"]["restart_min"]
    typed = sessions["en"].evaluate(dict(default_inputs(), **AT_SCALE), {"restart_min": "90 s"})
    assert typed["inputs"]["restart_min"] == 1.5 and "restart_min" not in typed["view"]["derived"]
