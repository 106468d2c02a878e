"""The lab's recompute-modules box, in both languages: what the reader types is read
as Megatron-Core's module names (any of the languages' commas), the plan names the
modules it recomputes, and a name or a module the model cannot take is refused with
the rule it breaks, in the reader's language."""
import pytest

from deepseek_lab import DEEPSEEK_V3, language_sessions
from lab_core.recompute_modules import RECOMPUTE_MODULES
from labsite.catalog import LANGUAGES
from labsite.labpage import default_inputs
# DeepSeek-V3's own layout with its selective recompute (arXiv:2412.19437 Sec 3.2, 3.2.3).
PINS = {"tp": "1", "pp": "16", "ep": "64", "cp": "1", "zero": "1", "recompute": "selective", "micro_batch": "1",
        "first_stage_layers": "2", "last_stage_layers": "3"}


@pytest.fixture(scope="module")
def sessions():
    return language_sessions()


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("typed", ["layernorm, mla_up_proj, moe_act", "moe_act，mla_up_proj、layernorm",
                                   "mla_up_proj moe_act layernorm"])
def test_the_typed_modules_reach_the_plan_in_megatrons_order(sessions, lang, typed):
    session = sessions[lang]
    result = session.evaluate(DEEPSEEK_V3, typed={"recompute_modules": typed}, pins=PINS)
    assert result["ok"], result
    assert result["inputs"]["recompute_modules"] == ["layernorm", "mla_up_proj", "moe_act"]
    view = result["view"]
    assert view["values"]["recompute_modules"] == "layernorm, mla_up_proj, moe_act"
    expected = session.catalog["lab"]["selective_modules"].format(modules="layernorm, mla_up_proj, moe_act")
    assert view["plan"]["items"]["recompute"] == expected
    options = session.catalog["decisions"]["activation_memory"]["options"]
    choice = options["selective_modules"].format(modules="layernorm, mla_up_proj, moe_act")
    assert f'data-decision="activation_memory"><h4>' in view["decisions"]
    card = view["decisions"].split('data-decision="activation_memory"')[1].split("</article>")[0]
    assert f'<p class="decision-choice">{choice}</p>' in card


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_default_modules_read_as_plain_selective(sessions, lang):
    session = sessions[lang]
    result = session.evaluate(dict(DEEPSEEK_V3, recompute_modules=["core_attn"]),
                              pins=dict(PINS, tp="2", pp="8", ep="32", first_stage_layers="5", last_stage_layers="8"))
    assert result["ok"], result
    assert result["view"]["plan"]["items"]["recompute"] == session.catalog["lab"]["terms"]["selective"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_unknown_name_is_refused_with_the_names_allowed(sessions, lang):
    result = sessions[lang].evaluate(DEEPSEEK_V3, typed={"recompute_modules": "layernorm, attention"})
    assert not result["ok"]
    text = result["error"]["text"]
    assert result["error"]["field"] == "recompute_modules" and "attention" in text
    assert all(name in text for name in RECOMPUTE_MODULES)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("inputs, typed, rule", [
    ({"params": 7e9, "gpus": 8}, "moe_act", "needs_experts"),
    ({"params": 7e9, "gpus": 8}, "mla_up_proj", "needs_mla"),
    (dict(DEEPSEEK_V3, stack="torch_native"), "layernorm", "stack"),
    (dict(DEEPSEEK_V3, shared_experts=0), "shared_experts", "needs_shared"),
    (dict(DEEPSEEK_V3, dense_layers=0), "mlp", "needs_dense"),
])
def test_a_module_the_model_cannot_take_is_refused_with_its_rule(sessions, lang, inputs, typed, rule):
    session = sessions[lang]
    result = session.evaluate(dict(default_inputs(), **inputs), typed={"recompute_modules": typed})
    assert not result["ok"]
    error = result["error"]
    assert error["field"] == "recompute_modules"
    template = session.catalog["errors"]["inconsistent"]["recompute_modules"][rule]
    head = template.split("{", 2)[1].split("}", 1)[1].split("{")[0]  # the words after {field}, before the next value
    assert head.strip(" ：:") in error["text"]
    assert typed in error["text"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_compare_names_the_modules_of_each_state(sessions, lang):
    """Two states that differ only in their recompute modules show it in the compare panel."""
    session = sessions[lang]
    a = {"inputs": dict(DEEPSEEK_V3, recompute_modules=["layernorm", "mla_up_proj", "moe_act"]), "pins": PINS}
    result = session.evaluate(dict(DEEPSEEK_V3, recompute_modules=["mla_up_proj"]), pins=PINS, compare=a)
    rows = {row["id"]: row for row in result["compare"]["rows"]}
    template = session.catalog["lab"]["selective_modules"]
    assert rows["recompute"]["a"] == template.format(modules="layernorm, mla_up_proj, moe_act")
    assert rows["recompute"]["b"] == template.format(modules="mla_up_proj")
    assert rows["recompute"]["differs"]
