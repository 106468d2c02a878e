"""Model presets (lab_core.presets): each is a valid workload whose shape
reproduces the published parameter count, named in every language."""
import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from lab_core import Workload
from lab_core.presets import PRESET_IDS, PRESETS, matching_preset, preset_for_shape, preset_inputs
from lab_core.errors import LabInputError

# "A few percent": the lab's shape rules (head size = hidden / heads, learned
# positions, biases) against each paper's count.
TOLERANCE = 0.03


@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_preset_shape_reproduces_the_published_parameter_count(preset_id):
    preset = PRESETS[preset_id]
    shape = Workload(**preset_inputs(preset_id)).shape
    counted = shape.params + (shape.vocab * shape.hidden if preset["untied_output"] else 0.0)
    assert abs(counted / preset["published_params"] - 1.0) < TOLERANCE, counted
    assert shape.derived == () or preset_id == "gpt3-175b"


def test_presets_are_found_from_their_inputs_and_shape():
    for preset_id in PRESET_IDS:
        inputs = preset_inputs(preset_id)
        assert matching_preset(inputs) == preset_id
        found = preset_for_shape(Workload(**inputs).shape)
        # The 128K preset is Llama 3 405B's shape: the shape alone names the first of them.
        assert found == ("llama3-405b" if preset_id == "llama3-405b-128k" else preset_id)
    assert matching_preset(dict(preset_inputs("llama3-8b"), layers=33)) is None
    # The sequence length is the run's: a changed one keeps the model's preset.
    assert matching_preset(dict(preset_inputs("llama3-8b"), seq_len=4096)) == "llama3-8b"
    assert matching_preset(dict(preset_inputs("llama3-405b"), seq_len=131072)) == "llama3-405b-128k"
    assert preset_for_shape(Workload(params=13e9).shape) is None


def test_unknown_preset_is_an_input_error():
    with pytest.raises(LabInputError) as err:
        preset_inputs("llama4")
    assert err.value.field == "preset" and "llama3-8b" in err.value.allowed


def test_every_preset_has_a_name_and_source_in_every_language():
    catalogs = load_catalogs()
    for lang in LANGUAGES:
        assert set(catalogs[lang]["presets"]["names"]) == set(PRESET_IDS), lang
    for preset in PRESETS.values():
        assert preset["source"]["id"].startswith("arXiv:") and preset["source"]["url"].startswith("https://arxiv.org/")


def test_scenario_files_take_their_shapes_from_the_presets():
    """One source of truth: scenario files of a published model name its preset
    (``model``) instead of repeating the shape; their workload is the preset's
    inputs with the file's own on top."""
    from labsite.scenarios import load_scenario
    for scenario_id, preset_id in (("gpt3-175b-ptdp", "gpt3-175b"), ("llama3-405b", "llama3-405b"),
                                   ("llama3-405b-128k", "llama3-405b-128k"), ("deepseek-v3", "deepseek-v3"),
                                   ("qwen3-235b-moe", "qwen3-235b-a22b")):
        scenario = load_scenario(scenario_id)
        text = open(scenario.path, encoding="utf-8").read()
        assert scenario.model == preset_id
        assert "hidden:" not in text and "heads:" not in text
        assert scenario.workload["hidden"] == PRESETS[preset_id]["inputs"]["hidden"]
    assert load_scenario("llama3-405b").workload["layers"] == 126
