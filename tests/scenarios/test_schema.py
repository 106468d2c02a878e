"""The JSON Schemas beside the scenarios: generated from the validator's
tables, up to date, and in agreement with the validator on the shipped files
and on bad ones (checked with a small JSON-Schema subset, no dependency)."""
import json
import re
from pathlib import Path

import pytest
import yaml

from lab_core.inputs import INPUT_SPECS
from labsite.scenarios import SCENARIOS
from labsite.scenarios.fields import (METRICS, PARALLELISM_FIELDS, PARALLELISM_REQUIRED, SCENARIO_FIELDS,
                                      SOURCE_FIELDS)
from labsite.scenarios.jsonschema import demo_path_schema, dumps, scenario_schema

BAD = Path(__file__).parent / "fixtures" / "bad"


def load_schema(name):
    return json.loads((SCENARIOS / name).read_text(encoding="utf-8"))


def test_schema_files_are_what_the_generator_writes():
    assert (SCENARIOS / "scenario.schema.json").read_text(encoding="utf-8") == dumps(scenario_schema()), \
        "run: python -m labsite.check_scenarios --write-schema"
    assert (SCENARIOS / "demo-path.schema.json").read_text(encoding="utf-8") == dumps(demo_path_schema())


def test_schema_fields_match_the_validator_tables():
    schema = load_schema("scenario.schema.json")
    assert list(schema["properties"]) == [f.name for f in SCENARIO_FIELDS]
    assert schema["required"] == [f.name for f in SCENARIO_FIELDS if f.required]
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]["workload"]["properties"]) == [s.name for s in INPUT_SPECS]
    par = schema["properties"]["parallelism"]
    assert list(par["properties"]) == list(PARALLELISM_FIELDS) and par["required"] == list(PARALLELISM_REQUIRED)
    assert list(schema["properties"]["source"]["properties"]) == [f.name for f in SOURCE_FIELDS]
    assert schema["properties"]["published"]["items"]["properties"]["metric"]["enum"] == list(METRICS)


# --- a JSON-Schema subset, enough for these two schemas ----------------------------


def _errors(value, schema, root, path="$"):
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return _errors(value, root["definitions"][name], root, path)
    found = []
    kind = schema.get("type")
    checks = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "null": lambda v: v is None,
              "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "integer": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()}
    if kind and not checks[kind](value):
        return [f"{path}: not {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{path}: not in enum")
    if "const" in schema and value != schema["const"]:
        found.append(f"{path}: not const")
    if "anyOf" in schema and all(_errors(value, s, root, path) for s in schema["anyOf"]):
        found.append(f"{path}: matches no alternative")
    if "not" in schema and not _errors(value, schema["not"], root, path):
        found.append(f"{path}: matches a forbidden pattern")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{path}: below minimum")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{path}: above maximum")
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            found.append(f"{path}: not above minimum")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            found.append(f"{path}: pattern")
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", 1e9):
            found.append(f"{path}: length")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                found.append(f"{path}.{key}: required")
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                found += _errors(item, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{path}.{key}: not allowed")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", 1e9) or len(value) < schema.get("minItems", 0):
            found.append(f"{path}: item count")
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
            found.append(f"{path}: repeated items")
        for index, item in enumerate(value):
            found += _errors(item, schema.get("items", {}), root, f"{path}[{index}]")
    return found


def validate(path):
    schema = load_schema("demo-path.schema.json" if path.name == "demo-path.yaml" else "scenario.schema.json")
    return _errors(yaml.safe_load(path.read_text(encoding="utf-8")), schema, schema)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")) + sorted((SCENARIOS / "examples").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_schema_accepts_every_shipped_file(path):
    assert validate(path) == []


@pytest.mark.parametrize("name", ["unknown-field", "wrong-type", "out-of-range", "not-a-number", "missing-language",
                                  "missing-fields", "html-injection", "published-figures"])
def test_schema_rejects_the_bad_files_too(name):
    assert validate(BAD / f"{name}.yaml")
