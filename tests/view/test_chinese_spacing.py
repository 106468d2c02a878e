"""The Chinese lab puts no space between two Chinese characters (lab_view.chinese):
the catalogs write a space after each quoted number, and a number whose unit is
Chinese ("2.26 秒") would otherwise be followed by one ("2.26 秒 没有被隐藏").
The English answers are the same with or without the rule."""
import json

import pytest

from lab_view import Session
from lab_view import session as session_module
from labsite.catalog import load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config
from labsite.scenarios import load_scenario
from labtest import spaces_between_chinese, strings_in

EXTRAS = {"rules_short": [], "rules_href": "../rules/"}
#: States whose answers quote times in Chinese units: the default, a mixture of experts, 128K tokens at scale.
STATES = {"default": {}, "deepseek-v3": load_scenario("deepseek-v3").workload,
          "llama3-405b-128k": load_scenario("llama3-405b-128k").workload}


@pytest.fixture(scope="module")
def configs():
    layout = load_lab_layout()
    return {lang: session_config(layout, catalog, EXTRAS) for lang, catalog in load_catalogs().items()}


def _answer(config, state):
    """A new session's first answer and open panels (a session's later answers mark what changed)."""
    session = Session(config)
    inputs = dict(default_inputs(), **state)
    baseline = {"inputs": default_inputs(), "pins": {}}
    out = session.evaluate(inputs, compare=baseline)
    extras = session.extras({"inputs": inputs, "pins": {}}, want_curves=True, want_pins=True)
    return out, extras


@pytest.mark.parametrize("state", sorted(STATES))
def test_no_space_between_chinese_characters(configs, state):
    out, extras = _answer(configs["zh"], STATES[state])
    texts = list(strings_in([out["view"], out["compare"], extras["curves"], extras["pins"]]))
    assert texts and spaces_between_chinese(texts) == []


def test_the_rule_is_what_takes_them_out(configs, monkeypatch):
    """Without it the same answer has such spaces (so the test above can fail)."""
    monkeypatch.setattr(session_module, "tighten", lambda node: node)
    out, _ = _answer(configs["zh"], STATES["deepseek-v3"])
    assert spaces_between_chinese([json.dumps(out["view"], ensure_ascii=False)])


@pytest.mark.parametrize("state", sorted(STATES))
def test_english_answers_do_not_change(configs, state, monkeypatch):
    tightened = _answer(configs["en"], STATES[state])
    monkeypatch.setattr(session_module, "tighten", lambda node: node)
    assert _answer(configs["en"], STATES[state]) == tightened


@pytest.mark.parametrize("state", sorted(STATES))
def test_no_space_after_full_width_punctuation(configs, state):
    """A full-width stop, comma or semicolon carries its own space: the plan's sentences
    (lab_view.narrative) are joined without one after it ("。backward", not "。 backward")."""
    out, extras = _answer(configs["zh"], STATES[state])
    texts = list(strings_in([out["view"], out["compare"], extras["curves"], extras["pins"]]))
    assert texts and [t for t in texts if any(mark + " " in t for mark in "。，；：")] == []
