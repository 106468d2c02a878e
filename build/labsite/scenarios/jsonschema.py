"""JSON Schemas for editors, generated from the same tables the validator uses.

``python -m labsite.check_scenarios --write-schema`` writes them into
``scenarios/``; a test fails when the files differ from what this module
generates. Editors with YAML language support pick them up from each file's
first line (``# yaml-language-server: $schema=./scenario.schema.json``) and
autocomplete fields and flag errors as you type. The Python validator stays
the authority (it also checks cross-field rules, pinned layouts and the demo
path); the schema is the fast, local half.
"""
import json

from lab_core.inputs import INPUT_SPECS
from lab_core.parallelism import RECOMPUTE_MODES, ZERO_STAGES

from .fields import (DEMO_PATH_FIELDS, ID_PATTERN, LANGUAGES, MAX_ID, MAX_TAGS, METRICS, PARALLELISM_FIELDS,
                     PARALLELISM_REQUIRED, PUBLISHED_FIELDS, SCENARIO_FIELDS, SOURCE_FIELDS, TAG_PATTERN)

DRAFT = "http://json-schema.org/draft-07/schema#"
QUANTITY_TEXT = r"^\s*[0-9][0-9_,]*(\.[0-9]+)?([eE][+-]?[0-9]+)?\s*[kKmMbBgGtT]?\s*$"
NO_HTML = r"<\s*[a-zA-Z/!?]|&#?[a-zA-Z0-9]+;|[jJ][aA][vV][aA][sS][cC][rR][iI][pP][tT]\s*:"


def _plain(max_length, description=""):
    schema = {"type": "string", "minLength": 1, "not": {"pattern": NO_HTML}}
    if max_length:
        schema["maxLength"] = max_length
    if description:
        schema["description"] = description
    return schema


def _text(field_max, description):
    return {
        "description": description,
        "type": "object",
        "additionalProperties": False,
        "required": list(LANGUAGES),
        "properties": {lang: _plain(field_max) for lang in LANGUAGES},
    }


def _quantity(minimum=None, maximum=None, integer=False):
    number = {"type": "integer" if integer else "number"}
    if minimum is not None:
        number["minimum"] = minimum
    if maximum is not None:
        number["maximum"] = maximum
    return {"anyOf": [number, {"$ref": "#/definitions/quantity_text"}]}


def _input(spec):
    if spec.kind == "bool":
        schema = {"type": "boolean"}
        described = f"{spec.unit}; default {str(spec.default).lower()}"
    elif spec.kind == "choice":
        schema = {"enum": list(spec.choices)}
        described = f"{spec.unit}; one of {', '.join(map(str, spec.choices))}; default {spec.default}"
    else:
        schema = _quantity(spec.lowest, spec.highest, spec.integer)
        if spec.derive_if_zero:
            schema["anyOf"] += [{"type": "null"}, {"const": 0}]
        described = f"{spec.unit}; {spec.lowest:g} … {spec.highest:g}; default {spec.default:g}" \
            if spec.default is not None else spec.unit
    schema["description"] = described
    return schema


def _parallelism():
    properties = {}
    for name in PARALLELISM_FIELDS:
        if name == "zero":
            properties[name] = {"enum": list(ZERO_STAGES), "description": "ZeRO stage"}
        elif name == "recompute":
            properties[name] = {"enum": list(RECOMPUTE_MODES), "description": "activation recomputation"}
        elif name == "sequence_parallel":
            properties[name] = {"type": "boolean", "description": "Megatron sequence parallelism"}
        else:
            properties[name] = dict(_quantity(1, None, True), description=f"{name}: a positive whole number")
    return {
        "description": next(f.description for f in SCENARIO_FIELDS if f.name == "parallelism"),
        "type": "object",
        "additionalProperties": False,
        "required": list(PARALLELISM_REQUIRED),
        "properties": properties,
    }


def _object(table, overrides, description):
    properties = {}
    for f in table:
        properties[f.name] = overrides.get(f.name) or _plain(f.max_length, f.description)
    return {
        "description": description,
        "type": "object",
        "additionalProperties": False,
        "required": [f.name for f in table if f.required],
        "properties": properties,
    }


def scenario_schema():
    by_name = {f.name: f for f in SCENARIO_FIELDS}
    properties = {}
    for f in SCENARIO_FIELDS:
        if f.kind == "id":
            properties[f.name] = {"type": "string", "pattern": ID_PATTERN, "maxLength": MAX_ID,
                                  "description": f.description}
        elif f.kind == "text":
            properties[f.name] = _text(f.max_length, f.description)
        elif f.kind == "workload":
            properties[f.name] = {
                "description": f.description,
                "type": "object",
                "additionalProperties": False,
                "properties": {spec.name: _input(spec) for spec in INPUT_SPECS},
            }
        elif f.kind == "parallelism":
            properties[f.name] = _parallelism()
        elif f.kind == "source":
            url = {"type": "string", "pattern": r"^https?://", "description": "an https:// link to the source"}
            properties[f.name] = _object(SOURCE_FIELDS, {"url": url}, f.description)
        elif f.kind == "published":
            metric = {"enum": list(METRICS), "description": "; ".join(f"{m.name}: {m.description}"
                                                                     for m in METRICS.values())}
            value = {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"$ref": "#/definitions/quantity_text"}],
                     "description": "the published value, in the metric's unit"}
            note = _text(600, "how the figure was measured or derived")
            properties[f.name] = {"description": f.description, "type": "array",
                                  "items": _object(PUBLISHED_FIELDS, {"metric": metric, "value": value, "note": note},
                                                   "one published figure")}
        elif f.kind == "tags":
            properties[f.name] = {"description": f.description, "type": "array", "maxItems": MAX_TAGS,
                                  "uniqueItems": True, "items": {"type": "string", "pattern": TAG_PATTERN}}
    assert set(properties) == set(by_name)
    return {
        "$schema": DRAFT,
        "title": "LLM Pretraining System Design Lab scenario",
        "description": "One scenario: a workload (and, for published runs, the layout they used) with its story "
                       "in English and Chinese. Checked by python -m labsite.check_scenarios.",
        "type": "object",
        "additionalProperties": False,
        "required": [f.name for f in SCENARIO_FIELDS if f.required],
        "properties": properties,
        "definitions": {
            "quantity_text": {"type": "string", "pattern": QUANTITY_TEXT,
                              "description": "a number written like 175B, 1.3e9, 1_000, 1,024, 4M or 8K"},
        },
    }


def demo_path_schema():
    return {
        "$schema": DRAFT,
        "title": "LLM Pretraining System Design Lab demo path",
        "description": "The walkthrough's steps: scenario ids in order, each with a file in this folder.",
        "type": "object",
        "additionalProperties": False,
        "required": [f.name for f in DEMO_PATH_FIELDS if f.required],
        "properties": {
            "steps": {"description": DEMO_PATH_FIELDS[0].description, "type": "array", "minItems": 1,
                      "uniqueItems": True, "items": {"type": "string", "pattern": ID_PATTERN}},
        },
    }


def dumps(schema):
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
