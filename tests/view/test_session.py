"""lab_view.Session over the whole input space, in both languages: it never
raises, every view has what the lab template binds, and bad input comes back
as one sentence naming the field."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from lab_core.inputs import SPEC_BY_NAME
from lab_view import Session
from lab_core.planner import STAGES
from lab_core.planner.meters import METERS
from lab_view.view import FIGURE_KEYS, PLAN_KEYS
from labsite.catalog import LANGUAGES, load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config

EXTRAS = {"rules_short": [{"id": "zero", "applies": ["zero"], "title": "ZeRO", "source": "arXiv:1910.02054"}],
          "rules_href": "../rules/"}


@pytest.fixture(scope="module")
def sessions():
    layout = load_lab_layout()
    return {lang: Session(session_config(layout, catalog, EXTRAS)) for lang, catalog in load_catalogs().items()}


def log_range(name):
    spec = SPEC_BY_NAME[name]
    values = st.floats(min_value=spec.minimum, max_value=spec.maximum, allow_nan=False)
    return values.map(round) if spec.integer else values


workloads = st.fixed_dictionaries({
    "params": log_range("params"), "gpus": log_range("gpus"), "global_batch_tokens": log_range("global_batch_tokens"),
    "seq_len": log_range("seq_len"), "inter_node_gbps": log_range("inter_node_gbps"),
    "checkpoint_interval_min": log_range("checkpoint_interval_min"),
    "gpu": st.sampled_from(SPEC_BY_NAME["gpu"].choices), "flash_attention": st.booleans(),
    "state_bytes_per_param": st.sampled_from((16, 18)),
})


def check_view(view):
    assert view["stage"]["id"] in STAGES
    assert set(view["meters"]) == set(METERS)
    for meter in view["meters"].values():
        assert 0.0 <= meter["fill"] <= 1.0 and meter["level"] in ("ok", "warn", "critical") and meter["text"]
    assert set(view["plan"]["items"]) == set(PLAN_KEYS)
    assert set(view["figures"]) == set(FIGURE_KEYS)
    assert view["decisions"].count("<article") == 6
    assert "<svg" in view["memory_bar"] and "<svg" in view["time_bar"] and "<svg" in view["schedule"]["svg"]
    texts = [*view["figures"].values(), view["decisions"], view["thresholds"], view["stage"]["text"],
             *(m["text"] for m in view["meters"].values())]
    assert not [text for text in texts if "{" in text or "}" in text]  # no unfilled placeholder


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(workload=workloads, lang=st.sampled_from(LANGUAGES))
def test_session_never_raises_and_views_are_complete(sessions, workload, lang):
    inputs = default_inputs()
    inputs.update(workload)
    result = sessions[lang].evaluate(inputs)
    assert result["ok"], result
    check_view(result["view"])


def test_nothing_fits_is_a_result_with_the_smallest_gpu_count(sessions):
    inputs = default_inputs()
    inputs.update(params=1e12, gpus=8)
    result = sessions["en"].evaluate(inputs)
    assert result["ok"]
    assert not result["view"]["plan"]["fits"]
    assert "smallest GPU count" in result["view"]["plan"]["nofit"]


@pytest.mark.parametrize("typed, field, fragment", [
    ({"gpus": "100000"}, "gpus", "32,768"), ({"params": "lots"}, "params", "lots"), ({"seq_len": "1e9"}, "seq_len", "128K"),
])
def test_bad_input_is_one_sentence_naming_the_field(sessions, typed, field, fragment):
    for session in sessions.values():
        result = session.evaluate(default_inputs(), typed)
        assert not result["ok"]
        assert result["error"]["field"] == field and fragment in result["error"]["text"]


def test_handle_turns_an_internal_failure_into_an_error_result(sessions):
    session = sessions["en"]
    broken = Session({"catalog": {**session.catalog, "stages": {}}, "kinds": session.kinds})
    answer = json.loads(broken.handle(json.dumps({"inputs": default_inputs()})))
    assert not answer["ok"] and answer["error"]["field"] is None and "KeyError" in answer["error"]["text"]


def test_changed_decisions_are_marked_after_a_move(sessions):
    session = Session({"catalog": sessions["en"].catalog, "kinds": sessions["en"].kinds})
    first = session.evaluate(default_inputs())["view"]["decisions"]
    assert " changed" not in first
    moved = dict(default_inputs(), params=175e9, gpus=1024)
    assert 'class="decision changed"' in session.evaluate(moved)["view"]["decisions"]
