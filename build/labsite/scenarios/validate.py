"""Validation of scenario files and the demo path.

Every check appends a Problem and carries on, so one run lists every error
of every file. Nothing here raises on bad content: callers decide (the CLI
prints and exits 1, the build raises BuildError).

Numbers: YAML numbers, or text the lab's own parser reads (lab_view.
parse_quantity: ``1.3e9``, ``175B``, ``1_000``, ``1,024``, ``4M``, ``8K``).
Anything else is an error with its line; a number never reaches lab_core as
a string. Ranges and choices are lab_core's (INPUT_SPECS via Workload,
Parallelism, evaluate): a LabInputError becomes ``workload.<field>: ...``.
"""
import math
import re
from pathlib import Path

from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core.inputs import SPEC_BY_NAME
from lab_view import QuantityError, parse_quantity

from .fields import (DEMO_PATH_FIELDS, DEMO_PATH_FILE, EXAMPLES_DIR, ID_RE, LANGUAGES, MAX_TAGS, METRICS,
                     PARALLELISM_FIELDS, PARALLELISM_REQUIRED, PUBLISHED_FIELDS, SCENARIO_FIELDS,
                     SOURCE_FIELDS, TAG_PATTERN)
from .model import Scenario
from .problems import Problem, did_you_mean, display_path, listing
from .yamlload import YamlProblem, YList, YMap, load_text

NUMBER_FORMS = "a number such as 175B, 1.3e9, 1_000, 1,024, 4M or 8K"
PLAIN_TEXT = "plain text: no HTML tags, entities or script links"
_UNSAFE = re.compile(
    r"<\s*[a-zA-Z/!?]"           # an HTML tag, comment or declaration
    r"|&#?[a-zA-Z0-9]+;"          # an HTML entity
    r"|\b(?:java|vb)script\s*:"    # script URLs
    r"|\bdata\s*:\s*text/html",
    re.IGNORECASE,
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[^\s\"'<>`]*)?$")
_REASONS = {
    "out_of_range": "{value} is out of range",
    "not_a_number": "{value} is not a number",
    "not_an_integer": "{value} is not a whole number",
    "unknown_choice": "{value} is not one of the choices",
    "not_a_bool": "{value} is not true or false",
    "inconsistent": "{value} does not fit the workload",
    "unknown_field": "{value} is not a known field",
}


def _shown(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _type_name(value):
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


def lab_error_text(err, shown=None):
    """Words for a LabInputError (without the field and the allowed part)."""
    value = shown if shown is not None else _shown(err.value)
    text = _REASONS.get(err.reason, "{value} is not allowed ({reason})").format(value=value, reason=err.reason)
    if err.detail:
        text += f": {err.detail}"
    return text


class FileCheck:
    """Problems of one file; ``add`` records one with the file's display name."""

    def __init__(self, path):
        self.path = Path(path)
        self.name = display_path(path)
        self.problems = []

    def add(self, line, field, message, allowed=""):
        self.problems.append(Problem(self.name, line, field, message, str(allowed) if allowed else ""))

    def load(self):
        try:
            text = self.path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as err:
            self.add(1, "file", f"not UTF-8 text ({err.reason} at byte {err.start})")
            return None
        except OSError as err:
            self.add(1, "file", f"cannot be read ({err.strerror})")
            return None
        try:
            return load_text(text)
        except YamlProblem as err:
            self.add(err.line, "yaml", err.message)
            return None

    # --- generic pieces ---------------------------------------------------

    def mapping(self, value, line, where):
        if not isinstance(value, YMap):
            self.add(line, where, f"must be a mapping of fields, got {_type_name(value)}")
            return False
        for key, key_line in value.repeated:
            self.add(key_line, f"{where}.{key}" if where else key, "is given twice (a key may appear once)")
        return True

    def fields(self, data, table, where):
        """Unknown and missing fields of mapping ``data`` against a Field table."""
        known = [f.name for f in table]
        for key in data:
            if key not in known:
                self.add(data.key_lines[key], _join(where, key), "unknown field" + did_you_mean(key, known),
                         listing(known))
        for f in table:
            if f.required and f.name not in data:
                self.add(data.line, _join(where, f.name), "is missing", f.description)

    def string(self, value, line, where, max_length, allowed=PLAIN_TEXT):
        if not isinstance(value, str):
            self.add(line, where, f"must be text, got {_type_name(value)}", allowed)
            return False
        if not value.strip():
            self.add(line, where, "is empty", allowed)
            return False
        if max_length and len(value) > max_length:
            self.add(line, where, f"is {len(value)} characters long", f"at most {max_length}")
            return False
        return self.safe(value, line, where)

    def safe(self, value, line, where):
        found = _UNSAFE.search(value)
        if found:
            self.add(line, where, f"contains HTML or script ({found.group(0)!r}); it would be shown escaped",
                     PLAIN_TEXT)
            return False
        if _CONTROL.search(value):
            self.add(line, where, "contains control characters", PLAIN_TEXT)
            return False
        return True

    def text(self, value, line, where, max_length):
        """A reader-facing text: ``{en: ..., zh: ...}``, every language required."""
        if not isinstance(value, YMap):
            self.add(line, where, f"must give the text in every language ({listing(LANGUAGES)}), "
                                  f"got {_type_name(value)}", f"a mapping with {listing(LANGUAGES)}")
            return False
        ok = self.mapping(value, line, where)
        for key in value:
            if key not in LANGUAGES:
                self.add(value.key_lines[key], f"{where}.{key}", "unknown language" + did_you_mean(key, LANGUAGES),
                         listing(LANGUAGES))
                ok = False
        for lang in LANGUAGES:
            if lang not in value:
                self.add(line, f"{where}.{lang}", "missing text in this language",
                         f"a text in each of {listing(LANGUAGES)}")
                ok = False
            elif not self.string(value[lang], value.key_lines[lang], f"{where}.{lang}", max_length):
                ok = False
        return ok

    def number(self, value, line, where, allowed=NUMBER_FORMS):
        """A number as YAML or as text parse_quantity reads; None after reporting a problem."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            self.add(line, where, f"must be a number, got {_type_name(value)}", allowed)
            return None
        try:
            number = parse_quantity(value)
        except QuantityError:
            self.add(line, where, f"{_shown(value)} is not a number", allowed)
            return None
        if isinstance(number, float) and not math.isfinite(number):
            self.add(line, where, f"{_shown(value)} is not a finite number", allowed)
            return None
        return number


def _join(where, key):
    return f"{where}.{key}" if where else str(key)


# --- scenario files ---------------------------------------------------------


def _workload(check, data, line):
    """Parsed workload inputs (numbers, never strings), or None after problems."""
    if not check.mapping(data, line, "workload"):
        return None
    parsed, ok = {}, True
    for key, raw in data.items():
        key_line = data.key_lines[key]
        where = f"workload.{key}"
        spec = SPEC_BY_NAME.get(key)
        if spec is None:
            check.add(key_line, where, "unknown workload input" + did_you_mean(key, SPEC_BY_NAME),
                      listing(SPEC_BY_NAME))
            ok = False
            continue
        if spec.kind == "bool" or (spec.kind == "choice" and isinstance(spec.default, str)):
            value = raw  # true/false, or a preset id: lab_core checks the type
        elif raw is None and spec.derive_if_zero:
            value = None
        elif isinstance(raw, str) and not isinstance(raw, bool):
            try:
                value = parse_quantity(raw)
            except QuantityError:
                allowed = _lab_allowed(key, raw)
                check.add(key_line, where, f"{_shown(raw)} is not a number", f"{allowed}; written like 175B, "
                          "1.3e9, 1_000, 1,024, 4M or 8K")
                ok = False
                continue
        else:
            value = raw
        try:
            Workload(**{key: value})
        except LabInputError as err:
            if err.field != key or err.reason == "inconsistent":
                parsed[key] = value  # a cross-field rule: judged below with every input
                continue
            allowed = err.allowed
            if err.reason == "unknown_choice":
                message = lab_error_text(err, _shown(raw)) + did_you_mean(raw, spec.choices)
            elif err.reason == "not_a_bool":
                message = f"must be true or false, got {_shown(raw)}"
            else:
                message = lab_error_text(err, _shown(raw))
            check.add(key_line, f"workload.{err.field}", message, allowed)
            ok = False
            continue
        parsed[key] = value
    if not ok:
        return None
    try:
        Workload(**parsed)
    except LabInputError as err:
        check.add(data.key_lines.get(err.field, data.line), f"workload.{err.field}", lab_error_text(err), err.allowed)
        return None
    return parsed


def _lab_allowed(key, raw):
    try:
        Workload(**{key: raw})
    except LabInputError as err:
        return err.allowed
    return NUMBER_FORMS


def _parallelism(check, data, line, workload):
    """The full pinned layout as a dict, or None after problems."""
    if not check.mapping(data, line, "parallelism"):
        return None
    parsed, ok = {}, True
    for key, raw in data.items():
        key_line = data.key_lines[key]
        where = f"parallelism.{key}"
        if key not in PARALLELISM_FIELDS:
            check.add(key_line, where, "unknown field" + did_you_mean(key, PARALLELISM_FIELDS),
                      listing(PARALLELISM_FIELDS))
            ok = False
            continue
        if key in ("recompute", "sequence_parallel"):
            parsed[key] = raw  # Parallelism checks choice and type
            continue
        value = check.number(raw, key_line, where, "a positive whole number")
        if value is None:
            ok = False
        else:
            parsed[key] = value
    for key in PARALLELISM_REQUIRED:
        if key not in data:
            check.add(data.line, f"parallelism.{key}", "is missing",
                      f"a pinned layout gives at least {listing(PARALLELISM_REQUIRED)}")
            ok = False
    if not ok:
        return None
    try:
        par = Parallelism(**parsed)
    except LabInputError as err:
        shown = _shown(data.get(err.field, err.value))
        message = (f"must be true or false, got {shown}" if err.reason == "not_a_bool"
                   else lab_error_text(err, shown))
        if err.reason == "unknown_choice" and isinstance(err.value, str):
            message += did_you_mean(err.value, ("none", "selective", "full"))
        check.add(data.key_lines.get(err.field, data.line), f"parallelism.{err.field}", message, err.allowed)
        return None
    if workload is None:
        return par.to_dict()
    try:
        evaluate(Workload(**workload), par)
    except LabInputError as err:
        message = f"{_shown(err.value)} is impossible for this workload" + (f": {err.detail}" if err.detail else "")
        check.add(data.key_lines.get(err.field, data.line), f"parallelism.{err.field}", message, err.allowed)
        return None
    except Exception as err:  # a model bug must not hide behind a traceback
        check.add(data.line, "parallelism", f"the lab could not evaluate this layout ({type(err).__name__}: {err})")
        return None
    return par.to_dict()


def _source(check, data, line):
    if not check.mapping(data, line, "source"):
        return None
    before = len(check.problems)
    check.fields(data, SOURCE_FIELDS, "source")
    result = {}
    for f in SOURCE_FIELDS:
        if f.name not in data:
            continue
        value, key_line = data[f.name], data.key_lines[f.name]
        if f.kind == "url":
            if check.string(value, key_line, "source.url", f.max_length, "an http(s):// link") \
                    and not _URL.match(value):
                check.add(key_line, "source.url", f"{_shown(value)} is not a web link", "an https:// link")
        else:
            check.string(value, key_line, f"source.{f.name}", f.max_length)
        result[f.name] = value
    return result if len(check.problems) == before else None


def _published(check, data, line):
    if not isinstance(data, YList):
        check.add(line, "published", f"must be a list of figures, got {_type_name(data)}",
                  "a list of {metric, value, where}")
        return None
    ok, figures, seen = True, [], {}
    for index, item in enumerate(data):
        item_line = data.item_lines[index]
        where = f"published[{index}]"
        if not check.mapping(item, item_line, where):
            ok = False
            continue
        before = len(check.problems)
        check.fields(item, PUBLISHED_FIELDS, where)
        figure = {}
        metric = item.get("metric")
        if "metric" in item:
            m_line = item.key_lines["metric"]
            if not isinstance(metric, str) or metric not in METRICS:
                check.add(m_line, f"{where}.metric", f"{_shown(metric)} is not a known figure"
                          + did_you_mean(metric, METRICS), listing(METRICS))
                metric = None
            elif metric in seen:
                check.add(m_line, f"{where}.metric", f"{metric!r} is already given at line {seen[metric]}",
                          "each figure once")
            else:
                seen[metric] = m_line
                figure["metric"] = metric
        if "value" in item:
            v_line = item.key_lines["value"]
            value = check.number(item["value"], v_line, f"{where}.value")
            if value is not None and metric:
                top = METRICS[metric].maximum
                if not 0 < value <= top:
                    check.add(v_line, f"{where}.value", f"{_shown(value)} is out of range for {metric}",
                              f"more than 0 and at most {top:g}")
                else:
                    figure["value"] = value
        if "where" in item and check.string(item["where"], item.key_lines["where"], f"{where}.where", 200):
            figure["where"] = item["where"]
        if "note" in item and check.text(item["note"], item.key_lines["note"], f"{where}.note", 600):
            figure["note"] = {lang: item["note"][lang] for lang in LANGUAGES}
        if len(check.problems) > before:
            ok = False
        figures.append(figure)
    return tuple(figures) if ok else None


def _tags(check, data, line):
    if not isinstance(data, YList):
        check.add(line, "tags", f"must be a list, got {_type_name(data)}", "a list of kebab-case words")
        return None
    ok = True
    if len(data) > MAX_TAGS:
        check.add(line, "tags", f"{len(data)} tags given", f"at most {MAX_TAGS}")
        ok = False
    seen = set()
    for index, tag in enumerate(data):
        tag_line = data.item_lines[index]
        if not isinstance(tag, str) or not ID_RE.match(tag):
            check.add(tag_line, f"tags[{index}]", f"{_shown(tag)} is not a kebab-case tag",
                      f"lowercase words joined by '-' ({TAG_PATTERN})")
            ok = False
        elif tag in seen:
            check.add(tag_line, f"tags[{index}]", f"{tag!r} is given twice")
            ok = False
        seen.add(tag)
    return tuple(data) if ok else None


def _open_mapping(path, field_table):
    """Load ``path`` as a top-level mapping and check its field names; ``data``
    is None when the file cannot be read as one (the problems say why)."""
    check = FileCheck(path)
    data = check.load()
    if data is None or not check.mapping(data, 1, ""):
        return check, None
    check.fields(data, field_table, "")
    return check, data


def check_scenario_file(path):
    """Validate one scenario file; return ``(Scenario or None, [Problem])``."""
    check, data = _open_mapping(path, SCENARIO_FIELDS)
    if data is None:
        return None, check.problems
    values = {}
    stem = Path(path).stem
    if "id" in data:
        value, line = data["id"], data.key_lines["id"]
        if not isinstance(value, str) or not ID_RE.match(value):
            check.add(line, "id", f"{_shown(value)} is not a kebab-case id", "lowercase letters, digits and '-'")
        elif len(value) > 64:
            check.add(line, "id", f"is {len(value)} characters long", "at most 64")
        elif value != stem:
            check.add(line, "id", f"{value!r} differs from the file name {stem!r}",
                      f"the file name without .yaml: {stem}")
        else:
            values["id"] = value
    for f in SCENARIO_FIELDS:
        if f.kind == "text" and f.name in data:
            if check.text(data[f.name], data.key_lines[f.name], f.name, f.max_length):
                values[f.name] = {lang: data[f.name][lang] for lang in LANGUAGES}
    workload = None
    if "workload" in data:
        workload = _workload(check, data["workload"], data.key_lines["workload"])
        values["workload"] = workload
    if "parallelism" in data:
        values["parallelism"] = _parallelism(check, data["parallelism"], data.key_lines["parallelism"], workload)
    if "source" in data:
        values["source"] = _source(check, data["source"], data.key_lines["source"])
    if "published" in data:
        line = data.key_lines["published"]
        values["published"] = _published(check, data["published"], line)
        if "parallelism" not in data:
            check.add(line, "published", "published figures need the layout they were measured with",
                      "add the run's parallelism")
        if "source" not in data:
            check.add(line, "published", "published figures need a source", "add source: {id, where}")
    if "tags" in data:
        values["tags"] = _tags(check, data["tags"], data.key_lines["tags"])
    check.problems.sort(key=lambda problem: problem.line)
    if check.problems:
        return None, check.problems
    scenario = Scenario(
        id=values["id"], path=check.name, title=values["title"], summary=values["summary"],
        narrative=values["narrative"], workload=values["workload"], parallelism=values.get("parallelism"),
        source=values.get("source"), published=values.get("published") or (), notes=values.get("notes"),
        tags=values.get("tags") or (),
    )
    scenario.extra["id_line"] = data.key_lines["id"]
    return scenario, check.problems


# --- the demo path ------------------------------------------------------------


def check_demo_path_file(path, known_ids, broken_ids=()):
    """Validate the demo path against ``known_ids`` (``broken_ids``: files that exist
    but are not valid); return ``(ids or None, [Problem])``."""
    check, data = _open_mapping(path, DEMO_PATH_FIELDS)
    if data is None:
        return None, check.problems
    steps = data.get("steps")
    if "steps" in data:
        line = data.key_lines["steps"]
        if not isinstance(steps, YList):
            check.add(line, "steps", f"must be a list of scenario ids, got {_type_name(steps)}", "a list of ids")
        elif not steps:
            check.add(line, "steps", "is empty", "at least one scenario id")
        else:
            seen = {}
            for index, step in enumerate(steps):
                step_line = steps.item_lines[index]
                where = f"steps[{index}]"
                if not isinstance(step, str) or not ID_RE.match(step):
                    check.add(step_line, where, f"{_shown(step)} is not a scenario id", "kebab-case ids")
                elif step in seen:
                    check.add(step_line, where, f"{step!r} is already step {seen[step] + 1}", "each scenario once")
                elif step in broken_ids:
                    folder = Path(path).parent
                    check.add(step_line, where, f"the scenario file {display_path(folder / (step + '.yaml'))} "
                              "is not valid (see its problems)")
                elif step not in known_ids:
                    folder = Path(path).parent
                    check.add(step_line, where, f"no scenario file {display_path(folder / (step + '.yaml'))}"
                              + did_you_mean(step, sorted(known_ids)), listing(sorted(known_ids)))
                else:
                    seen[step] = index
    if check.problems:
        return None, check.problems
    return list(steps), check.problems


# --- a whole folder -----------------------------------------------------------


class TreeResult:
    """What check_tree found: the folder's scenarios by id, its demo path, every
    problem of the files asked for, and those files."""

    def __init__(self):
        self.scenarios = {}
        self.demo_path = None
        self.problems = []
        self.files = []

    @property
    def ok(self):
        return not self.problems


def scenario_files(directory):
    """The scenario files of a folder (every ``*.yaml`` but the demo path)."""
    return sorted(p for p in Path(directory).glob("*.yaml") if p.name != DEMO_PATH_FILE)


def example_files(directory):
    return sorted((Path(directory) / EXAMPLES_DIR).glob("*.yaml"))


def check_tree(directory, paths=None):
    """Validate ``paths`` (default: every scenario file, example and the demo
    path of ``directory``) in the context of ``directory``'s scenarios.

    ``result.scenarios`` and ``result.demo_path`` are the folder's own (what
    the site shows). Ids must be unique across the folder and the files asked
    for; a demo path's ids must have a file beside it (or among the files
    asked for). Examples are checked on their own: their ids are not taken.
    Problems of files not asked for are not reported.
    """
    directory = Path(directory)
    result = TreeResult()
    if paths is None:
        targets = scenario_files(directory) + example_files(directory) + [directory / DEMO_PATH_FILE]
    else:
        targets = [Path(p) for p in paths]
    asked = {p.resolve() for p in targets}
    loaded = {}
    ids = {}

    def load(path):
        key = path.resolve()
        if key not in loaded:
            scenario, problems = check_scenario_file(path)
            if key in asked:
                result.files.append(path)
                result.problems.extend(problems)
            loaded[key] = scenario
        return loaded[key]

    def register(scenario, path):
        first = ids.get(scenario.id)
        if first is None:
            ids[scenario.id] = scenario
            return True
        if path.resolve() in asked:
            result.problems.append(Problem(scenario.path, scenario.extra["id_line"], "id",
                                           f"{scenario.id!r} is already the id of {first.path}",
                                           "an id no other scenario file uses"))
        return False

    for path in scenario_files(directory):
        scenario = load(path)
        if scenario is not None and register(scenario, path):
            result.scenarios[scenario.id] = scenario
    examples = (directory / EXAMPLES_DIR).resolve()
    demo_targets = []
    for path in targets:
        if path.name == DEMO_PATH_FILE:
            demo_targets.append(path)
            continue
        scenario = load(path)
        if scenario is not None and path.parent.resolve() != examples and path.resolve().parent != directory.resolve():
            register(scenario, path)
    for path in demo_targets:
        known = set(ids)
        if path.parent.resolve() != directory.resolve():
            known |= {s.id for s in map(load_quietly, scenario_files(path.parent)) if s is not None}
        if not path.exists():
            result.problems.append(Problem(display_path(path), 1, "file", "the demo path file is missing",
                                           f"a {DEMO_PATH_FILE} listing scenario ids"))
            continue
        broken = {p.stem for p in scenario_files(path.parent) if loaded.get(p.resolve(), 0) is None}
        steps, problems = check_demo_path_file(path, known, broken - known)
        result.files.append(path)
        result.problems.extend(problems)
        if path.resolve() == (directory / DEMO_PATH_FILE).resolve():
            result.demo_path = steps
    return result


def load_quietly(path):
    return check_scenario_file(path)[0]
