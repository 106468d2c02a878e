"""The scenario format, checked with its JSON Schemas (scenarios/*.schema.json).

The schema files are the one definition of the format: editors use them while
you type (each scenario's first line points at its schema), the Contributing
page lists their fields, and this module validates files against them with
the ``jsonschema`` library (Draft 7). Every schema error becomes one Problem
at the line of the key or list item it is about (``file:line: field: what is
wrong (allowed: …)``); numbers written as text (``175B``, ``1.3e9``, ``1_000``)
are checked by the ``quantity`` format, which is lab_view's own parser.
"""
import json
import re
from functools import cache

from jsonschema import Draft7Validator, FormatChecker

from lab_view import QuantityError, parse_quantity

from .problems import did_you_mean, listing
from .yamlload import YList, YMap

SCENARIO_SCHEMA_FILE = "scenario.schema.json"
DEMO_PATH_SCHEMA_FILE = "demo-path.schema.json"
NUMBER_FORMS = "written like 175B, 1.3e9, 1_000, 1,024, 4M or 8K"
_TYPE_WORDS = {"object": "a mapping", "array": "a list", "string": "text", "boolean": "true or false",
               "number": "a number", "integer": "a whole number", "null": "nothing (null)"}


def _is_quantity(text):
    parse_quantity(text)  # raises QuantityError
    return True  # (the parsed value may be 0, which a format check would read as "no")


def _formats():
    checker = FormatChecker(formats=())
    checker.checks("quantity", raises=QuantityError)(_is_quantity)
    return checker


@cache
def load_schema(path):
    """The schema of ``path`` (a str), checked to be a valid Draft 7 schema."""
    with open(path, encoding="utf-8") as handle:
        schema = json.load(handle)
    Draft7Validator.check_schema(schema)
    return schema


@cache
def _validator(path):
    return Draft7Validator(load_schema(path), format_checker=_formats())


def type_name(value):
    if isinstance(value, bool):
        return "true/false"
    if value is None:
        return "nothing (null)"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__  # dates and times


def shown(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return f"{value:g}" if isinstance(value, float) else str(value)


def field_name(path):
    """``["published", 0, "metric"]`` -> ``published[0].metric``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def line_of(data, path):
    """The line of the key or list item at ``path`` (the closest one that exists)."""
    line, node = getattr(data, "line", 1), data
    for part in path:
        if isinstance(node, YMap) and part in node.key_lines:
            line, node = node.key_lines[part], node[part]
        elif isinstance(node, YList) and isinstance(part, int) and part < len(node):
            line, node = node.item_lines[part], node[part]
        else:
            break
    return line


def _described(schema, root):
    """A schema node's description, following a ``$ref`` to a definition."""
    if "description" in schema:
        return schema["description"]
    ref = schema.get("$ref", "")
    if ref.startswith("#/definitions/"):
        return root["definitions"][ref.rsplit("/", 1)[1]].get("description", "")
    return ""


def _number_problem(value, error):
    """An ``anyOf`` of a number type and quantity text: why ``value`` is neither."""
    integer = any(option.get("type") == "integer" for option in error.validator_value)
    if isinstance(value, str):
        return f"{shown(value)} is not a number"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and integer:
        return f"{shown(value)} is not a whole number"
    return f"{shown(value)} is not a number" if isinstance(value, (dict, list)) else f"must be a number, got {type_name(value)}"


def _problems_of(error, data, root):
    """``[(line, field, message, allowed)]`` for one jsonschema error."""
    path, kind, value, node = list(error.absolute_path), error.validator, error.instance, error.schema
    here = field_name(path)
    line = line_of(data, path)
    if kind == "required":
        properties = node.get("properties", {})
        return [(line, field_name(path + [name]), "is missing",
                 _described(properties.get(name, {}), root)) for name in error.validator_value if name not in value]
    if kind == "dependencies":
        return [(line_of(data, path + [name]), field_name(path + [name]), f"needs {needed} as well",
                 _described(node["properties"][needed], root))
                for name, needs in error.validator_value.items() if name in value
                for needed in needs if needed not in value]
    if kind == "additionalProperties":
        known = list(node.get("properties", {}))
        return [(line_of(data, path + [key]), field_name(path + [key]), "unknown field" + did_you_mean(key, known),
                 listing(known)) for key in value if key not in known]
    if kind == "type":
        expected = error.validator_value
        allowed = listing(node["properties"]) if expected == "object" and "properties" in node else _described(node, root)
        return [(line, here, f"must be {_TYPE_WORDS[expected]}, got {shown(value)}", allowed)]
    if kind == "enum":
        return [(line, here, f"{shown(value)} is not one of the choices" + did_you_mean(value, error.validator_value),
                 listing(error.validator_value))]
    if kind == "anyOf":
        return [(line, here, _number_problem(value, error), f"{_described(node, root)}; {NUMBER_FORMS}")]
    if kind == "pattern":
        message = node.get("patternErrorMessage", f"{shown(value)} does not have the expected form")
        if "patternErrorMessage" in node and not message.startswith("is empty"):
            message = f"{shown(value)} {message}"
        return [(line, here, message, _described(node, root))]
    if kind == "not":
        if not isinstance(value, str):
            return []  # a pattern holds for any non-string: the field's type error says what is wrong
        found = re.search(error.validator_value["pattern"], value)
        return [(line, here, f"contains HTML, script or control characters ({found.group(0)!r}); "
                             "it would be shown escaped", _described(node, root))]
    if kind == "maxLength":
        return [(line, here, f"is {len(value)} characters long", f"at most {error.validator_value}")]
    if kind == "maxItems":
        return [(line, here, f"has {len(value)} items", f"at most {error.validator_value}")]
    if kind == "minItems":
        return [(line, here, "is empty", f"at least {error.validator_value}")]
    if kind == "uniqueItems":
        first = {}
        repeated = []
        for index, item in enumerate(value):
            key = json.dumps(item, sort_keys=True, default=str)
            if key in first:
                repeated.append((line_of(data, path + [index]), field_name(path + [index]),
                                 f"{shown(item)} is already item {first[key] + 1}", "each one once"))
            first.setdefault(key, index)
        return repeated
    return [(line, here, error.message, _described(node, root))]


def schema_problems(data, schema_path):
    """``[(line, field, message, allowed)]`` of ``data`` (YMap/YList/scalars)
    against the schema file, each once, in file order."""
    path = str(schema_path)
    root = load_schema(path)
    found = []
    for error in _validator(path).iter_errors(data):
        for problem in _problems_of(error, data, root):
            if problem not in found:
                found.append(problem)
    return sorted(found, key=lambda problem: problem[0])


def object_fields(schema):
    """``[(name, required)]`` of a schema's top-level properties, in order (the Contributing page's table)."""
    required = set(schema.get("required", ()))
    return [(name, name in required) for name in schema["properties"]]
