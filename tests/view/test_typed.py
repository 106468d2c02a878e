"""Typed inputs accept what the lab displays, in both languages; bad values
get specific sentences; an emptied box keeps its value; a shared link's bad
values are reported one by one while the rest are kept."""
import pytest

from lab_view import Session
from labsite.catalog import load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config

EXTRAS = {"rules_short": [], "rules_href": "../rules/"}


@pytest.fixture(scope="module")
def sessions():
    layout = load_lab_layout()
    return {lang: Session(session_config(layout, catalog, EXTRAS)) for lang, catalog in load_catalogs().items()}


@pytest.mark.parametrize("lang, name, text, value", [
    ("en", "checkpoint_interval_min", "30 min", 30), ("en", "checkpoint_interval_min", "2 h", 120),
    ("en", "checkpoint_interval_min", "1 day", 1440), ("zh", "checkpoint_interval_min", "30 分钟", 30),
    ("zh", "checkpoint_interval_min", "2 小时", 120), ("zh", "checkpoint_interval_min", "45 min", 45),
    ("en", "inter_node_gbps", "400 Gb/s", 400), ("en", "inter_node_gbps", "3.2 Tb/s", 3200),
    ("zh", "inter_node_gbps", "400 Gb/s", 400), ("en", "params", "175B", 175e9), ("en", "gpus", "1,024", 1024),
    ("en", "seq_len", "8K", 8192), ("en", "restart_min", "90 s", 1.5),
])
def test_a_box_accepts_what_it_displays(sessions, lang, name, text, value):
    result = sessions[lang].evaluate(default_inputs(), {name: text})
    assert result["ok"], result
    assert result["inputs"][name] == pytest.approx(value)
    # and what the box then displays reads back to the same value
    shown = result["view"]["values"][name]
    again = sessions[lang].evaluate(default_inputs(), {name: shown})
    assert again["inputs"][name] == pytest.approx(value, rel=5e-3)


@pytest.mark.parametrize("lang, fragment", [("en", "between 1 and 32,768"), ("zh", "必须在 1 到 32,768 之间")])
def test_a_negative_value_is_out_of_range_not_not_a_number(sessions, lang, fragment):
    result = sessions[lang].evaluate(default_inputs(), {"gpus": "-5"})
    assert not result["ok"] and fragment in result["error"]["text"] and "-5" in result["error"]["text"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", ["compiled_loss", "flash_attention", "te_attention"])
def test_a_switch_given_neither_true_nor_false_names_both(sessions, lang, name):
    result = sessions[lang].evaluate(default_inputs(), {name: "maybe"})
    assert not result["ok"] and result["error"]["field"] == name
    assert "maybe" in result["error"]["text"] and "true, false" in result["error"]["text"]


def test_a_unit_of_another_box_is_refused_with_examples_for_this_box(sessions):
    result = sessions["en"].evaluate(default_inputs(), {"checkpoint_interval_min": "400 Gb/s"})
    assert not result["ok"] and "e.g. 30 min, 2 h" in result["error"]["text"]
    result = sessions["zh"].evaluate(default_inputs(), {"checkpoint_interval_min": "很久"})
    assert not result["ok"] and "30 分钟" in result["error"]["text"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_emptied_box_keeps_its_value_with_a_note(sessions, lang):
    inputs = dict(default_inputs(), params=7e9)
    result = sessions[lang].evaluate(inputs, {"params": "  "})
    assert result["ok"] and result["inputs"]["params"] == 7e9
    [note] = result["notes"]
    assert note["field"] == "params" and "7B" in note["text"] and "None" not in note["text"]


def test_a_shared_link_keeps_the_good_values_and_reports_each_bad_one(sessions):
    typed = {"params": "175B", "gpus": "lots", "seq_len": "1e9", "inter_node_gbps": "400", "flash_attention": "true"}
    result = sessions["en"].evaluate(default_inputs(), typed, lenient=True)
    assert result["ok"]
    assert result["inputs"]["params"] == 175e9 and result["inputs"]["inter_node_gbps"] == 400
    assert result["inputs"]["flash_attention"] is True
    assert result["inputs"]["gpus"] == default_inputs()["gpus"] and result["inputs"]["seq_len"] == default_inputs()["seq_len"]
    assert sorted(n["field"] for n in result["notes"]) == ["gpus", "seq_len"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_refused_number_is_quoted_as_the_range_is_written(sessions, lang):
    """'100M is outside', not '100000000.0'; in full where the short form would read as an
    end of the range; and the Chinese sentence has no space between two Chinese characters."""
    from labtest import spaces_between_chinese

    typed = sessions[lang].evaluate(default_inputs(), {"params": "100M"})
    slider = sessions[lang].evaluate(dict(default_inputs(), params=1e8))
    near_end = sessions[lang].evaluate(dict(default_inputs(), params=124.9e6))
    for result, shown in ((typed, "100M"), (slider, "100M"), (near_end, "124,900,000")):
        assert not result["ok"] and shown in result["error"]["text"], result["error"]
        assert "100000000" not in result["error"]["text"]
    assert spaces_between_chinese([typed["error"]["text"]]) == []


def test_every_english_unit_spelling_works_in_the_chinese_lab_too():
    """A Chinese reader types English units as often as Chinese ones: every spelling the English
    catalog accepts is accepted by the Chinese one ("1 hour", "400 Gbit/s" had been not-a-number)."""
    catalogs = load_catalogs()
    for unit, words in catalogs["en"]["unit_words"].items():
        assert set(words) <= set(catalogs["zh"]["unit_words"][unit]), unit


@pytest.mark.parametrize("name, text, value", [
    ("checkpoint_interval_min", "1 hour", 60), ("checkpoint_interval_min", "2 hrs", 120),
    ("checkpoint_interval_min", "1 minute", 1), ("restart_min", "30 secs", 0.5),
    ("inter_node_gbps", "400 Gbit/s", 400), ("inter_node_gbps", "3.2 Tbit/s", 3200),
])
def test_the_chinese_lab_reads_english_unit_words(sessions, name, text, value):
    result = sessions["zh"].evaluate(default_inputs(), {name: text})
    assert result["ok"], result
    assert result["inputs"][name] == pytest.approx(value)


DEEPSEEK = dict(params=671e9, layers=61, hidden=7168, experts=256, experts_per_token=8, gpus=2048, gpu="h800_80gb")

# (inputs that do not fit together, the field refused, numbers the sentence must quote in both languages)
MISMATCHES = [
    (dict(params=7e9, hidden=4096, heads=48), "heads", ("48", "4,096")),
    (dict(params=7e9, heads=32, kv_heads=6), "kv_heads", ("6", "32")),
    (dict(DEEPSEEK, experts=16, experts_per_token=32), "experts_per_token", ("32", "16")),
    (dict(DEEPSEEK, dense_layers=61), "dense_layers", ("61", "60")),
    (dict(DEEPSEEK, expert_groups=7), "expert_groups", ("7", "256")),
    (dict(DEEPSEEK, expert_groups=8, expert_groups_per_token=9), "expert_groups_per_token", ("9", "8", "32")),
    (dict(DEEPSEEK, expert_groups=64, expert_groups_per_token=1), "expert_groups_per_token", ("1", "64", "4", "2")),
    (dict(params=7e9, gpu="a100_80gb", precision="fp8"), "precision", ("A100", "H100")),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("inputs, field, numbers", MISMATCHES, ids=[f"{m[1]}-{i}" for i, m in enumerate(MISMATCHES)])
def test_an_input_that_does_not_fit_the_others_names_them_not_its_own_range(sessions, lang, inputs, field, numbers):
    """A group count of 7 for 256 experts read "7 is not allowed (allowed: 0 to 1,024)": a value inside the
    range it quoted. The sentence now names the other inputs it must fit (lab_core's LabInputError.numbers)."""
    from labtest import spaces_between_chinese

    result = sessions[lang].evaluate(dict(default_inputs(), **inputs))
    assert not result["ok"] and result["error"]["field"] == field, result
    text = result["error"]["text"]
    assert all(number in text for number in numbers), text
    assert "1,024" not in text and "{" not in text and "None" not in text, text
    if lang == "zh":
        assert spaces_between_chinese([text]) == []
