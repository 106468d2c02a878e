"""Multi-token prediction in the lab, in both languages: the advanced box takes the module
count, the plan's layers per stage say the last stage also runs the modules, and a count out
of range is refused with the field and its range, the last valid workload kept."""
import pytest

from deepseek_lab import DEEPSEEK_V3, language_sessions
from labsite.catalog import LANGUAGES
# Megatron-Bridge's DeepSeek-V3 layout for 16 stages: 4 layers first, 1 and the module last.
PINS = {"tp": "1", "pp": "16", "ep": "64", "cp": "1", "zero": "1", "micro_batch": "1",
        "first_stage_layers": "4", "last_stage_layers": "1"}


@pytest.fixture(scope="module")
def sessions():
    return language_sessions()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_plan_says_the_last_stage_runs_the_module(sessions, lang):
    session = sessions[lang]
    texts = session.catalog["lab"]["stage_layers"]
    result = session.evaluate(DEEPSEEK_V3, pins=PINS)
    assert result["ok"], result
    expected = texts["uneven"].format(first="4", middle="4", last="1") + texts["mtp"].format(mtp=1)
    assert result["view"]["plan"]["items"]["stage_layers"] == expected
    plain = session.evaluate(dict(DEEPSEEK_V3, mtp_layers=0), pins=PINS)
    assert plain["view"]["plan"]["items"]["stage_layers"] == texts["uneven"].format(first="4", middle="4", last="1")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_count_out_of_range_is_refused_in_the_readers_language(sessions, lang):
    session = sessions[lang]
    result = session.evaluate(DEEPSEEK_V3, typed={"mtp_layers": "12"})
    assert not result["ok"]
    error = result["error"]
    assert error["field"] == "mtp_layers" and "12" in error["text"] and "8" in error["text"]
    assert session.catalog["input_labels"]["mtp_layers"] in error["text"]
    # The lab keeps the last valid workload (the page keeps the typed text in its box).
    assert result["inputs"]["mtp_layers"] == 1


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_parallelism_decision_says_where_the_module_runs(sessions, lang):
    """The pipelined plan's why-it-changes card quotes the module, the output passes and the last stage's layers."""
    session = sessions[lang]
    texts = session.catalog["decisions"]["parallelism"]
    result = session.evaluate(DEEPSEEK_V3, pins=PINS)
    card = result["view"]["decisions"].split('data-decision="parallelism"')[1].split("</article>")[0]
    modules = texts["mtp_modules"]
    module = (modules["one"] if isinstance(modules, dict) else modules).format(n=1)
    note = texts["mtp_note"].format(pp=16, mtp_counted=module, mtp_passes=2, layers=61, last_layers=1,
                                    first_layers=4)
    assert note.strip() in card
    plain = session.evaluate(dict(DEEPSEEK_V3, mtp_layers=0), pins=PINS)["view"]["decisions"]
    assert module not in plain.split('data-decision="parallelism"')[1].split("</article>")[0]
