"""The JSON Schemas beside the scenarios are the definition of the format:
valid Draft 7 schemas, accepted by every shipped file, and in agreement with
what lab_core accepts (the workload inputs and the layout are lab_core's; the
schema names them, and its descriptions say their ranges)."""
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from lab_core import Parallelism
from lab_core.inputs import INPUT_SPECS
from lab_core.parallelism import RECOMPUTE_MODES, ZERO_STAGES
from lab_view import QuantityError, parse_quantity
from labsite.catalog import LANGUAGES
from labsite.scenarios import METRICS, SCENARIOS
from labsite.scenarios.schema import DEMO_PATH_SCHEMA_FILE, SCENARIO_SCHEMA_FILE, load_schema, schema_problems
from labsite.scenarios.yamlload import load_text

SCENARIO = load_schema(str(SCENARIOS / SCENARIO_SCHEMA_FILE))
PROPERTIES = SCENARIO["properties"]


@pytest.mark.parametrize("name", [SCENARIO_SCHEMA_FILE, DEMO_PATH_SCHEMA_FILE])
def test_schemas_are_draft_7(name):
    schema = load_schema(str(SCENARIOS / name))
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(schema)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")) + sorted((SCENARIOS / "examples").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_every_shipped_file_passes_its_schema(path):
    name = DEMO_PATH_SCHEMA_FILE if path.name == "demo-path.yaml" else SCENARIO_SCHEMA_FILE
    assert schema_problems(load_text(path.read_text(encoding="utf-8")), SCENARIOS / name) == []


def _input_description(spec):
    if spec.kind == "bool":
        return f"true or false; default {str(spec.default).lower()}"
    if spec.kind == "choice":
        return f"{spec.unit}; one of {', '.join(map(str, spec.choices))}; default {spec.default}"
    if spec.kind == "modules":
        return f"{spec.unit}; any of {', '.join(spec.choices)}; default [{', '.join(spec.default)}]"
    return f"{spec.lowest:g} … {spec.highest:g} {spec.unit}; default {spec.default:g}"


def _kinds(node):
    return {option.get("type") or option["$ref"].rsplit("/", 1)[1] for option in node["anyOf"]}


@pytest.mark.parametrize("spec", INPUT_SPECS, ids=lambda s: s.name)
def test_workload_inputs_are_lab_cores_with_their_ranges_described(spec):
    node = PROPERTIES["workload"]["properties"][spec.name]
    assert node["description"] == _input_description(spec)
    if spec.kind == "bool":
        assert node["type"] == "boolean"
    elif spec.kind == "choice":
        assert node["enum"] == list(spec.choices)
    elif spec.kind == "modules":
        assert node["type"] == "array" and node["uniqueItems"] and node["items"]["enum"] == list(spec.choices)
    else:
        expected = {"integer" if spec.integer else "number", "quantity_text"} | ({"null"} if spec.derive_if_zero else set())
        assert _kinds(node) == expected


def test_workload_lists_exactly_lab_cores_inputs_in_order():
    assert list(PROPERTIES["workload"]["properties"]) == [spec.name for spec in INPUT_SPECS]
    assert PROPERTIES["workload"]["additionalProperties"] is False


def test_parallelism_is_lab_cores_layout():
    par = PROPERTIES["parallelism"]["properties"]
    assert list(par) == [f.name for f in dataclasses.fields(Parallelism)]
    assert par["recompute"]["enum"] == list(RECOMPUTE_MODES)
    assert par["zero"]["enum"] == list(ZERO_STAGES)


def test_published_metrics_are_the_ones_the_lab_predicts():
    assert PROPERTIES["published"]["items"]["properties"]["metric"]["enum"] == list(METRICS)


def test_texts_are_given_in_every_language():
    text = SCENARIO["definitions"]["text"]
    assert list(text["properties"]) == list(LANGUAGES) and text["required"] == list(LANGUAGES)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789_,.eE+- kKmMbBgGtTx\t", min_size=1, max_size=12))
def test_every_number_the_lab_reads_passes_the_schema(text):
    """Numbers written as text (175B, 1.3e9, 1_000, …): the schema accepts what lab_view's parser reads."""
    try:
        parse_quantity(text)
    except QuantityError:
        return
    data = load_text("id: n\ntitle: {en: t, zh: t}\nsummary: {en: s, zh: s}\nnarrative: {en: n, zh: n}\n"
                     "workload: {params: x}\n")
    data["workload"]["params"] = text
    assert schema_problems(data, SCENARIOS / SCENARIO_SCHEMA_FILE) == []


def test_model_names_a_lab_core_preset():
    from lab_core.presets import PRESET_IDS
    assert PROPERTIES["model"]["enum"] == list(PRESET_IDS)
