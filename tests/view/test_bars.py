"""The step-time bar names its parts after the plan: the time FlashAttention's
backward spends replaying the attention core is not called "recompute" beside a
plan that recomputes nothing."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.presets import preset_inputs
from lab_view.bars import time_bar, time_parts
from labsite.catalog import LANGUAGES, load_catalogs


@pytest.fixture(scope="module")
def catalogs():
    return load_catalogs()


def _time(recompute):
    par = Parallelism(tp=8, pp=1, dp=1, zero=0, recompute=recompute, micro_batch=1)
    report = evaluate(Workload(params=13e9, gpus=8, global_batch_tokens=2 ** 20, seq_len=4096), par).to_dict()
    return report["time"], report["parallelism"]["recompute"]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("recompute, part_name", [("none", "attention_replay"), ("full", "recompute")])
def test_recompute_part_is_named_after_the_plan(catalogs, lang, recompute, part_name):
    texts, units = catalogs[lang]["lab"]["bars"], catalogs[lang]["units"]
    time, mode = _time(recompute)
    assert mode == recompute and time["recompute_s"] > 0.0
    _, parts = time_parts(time, texts, units, mode)
    names = {part: name for part, name, _ in parts}
    assert names["recompute"] == texts["time_parts"][part_name]
    assert texts["time_parts"][part_name] in time_bar(time, texts, units, mode).replace("&amp;", "&")


@pytest.fixture(scope="module")
def sessions():
    from labsite.labpage import load_lab_layout, session_config
    from lab_view import Session

    extras = {"rules_short": [], "rules_href": "../rules/"}
    return {lang: Session(session_config(load_lab_layout(), catalog, extras)) for lang, catalog in load_catalogs().items()}


DEEPSEEK = dict(preset_inputs("deepseek-v3"), gpus=2048, gpu="h800_80gb", global_batch_tokens=62914560,
                precision="fp8", moe_dispatcher="per_node", inter_node_gbps=400)
GPT_530B_NO_FLASH = dict(params=530e9, gpus=1024, global_batch_tokens=2 ** 22, seq_len=2048, flash_attention=False)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("inputs, recompute, key", [(DEEPSEEK, "none", "title_no_recompute"),
                                                    (GPT_530B_NO_FLASH, "selective", "title")])
def test_full_3d_stage_is_named_after_the_plans_recompute(catalogs, sessions, lang, inputs, recompute, key):
    result = sessions[lang].evaluate(inputs)
    assert result["ok"], result
    view = result["view"]
    assert view["stage"]["id"] == "full_3d"
    assert view["plan"]["items"]["recompute"] == catalogs[lang]["lab"]["terms"][recompute]
    assert view["stage"]["title"] == catalogs[lang]["stages"]["full_3d"][key]
