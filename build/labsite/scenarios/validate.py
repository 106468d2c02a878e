"""Validation of scenario files and the demo path.

A file is read with line numbers (yamlload), checked against its JSON Schema
(schema.py: every structural rule), then by the checks that need the model or
the other files (model_checks.py; ids equal file names and are unique; demo
path steps have a valid file). Every check appends a Problem and carries on,
so one run lists every error of every file. Nothing here raises on bad
content: callers decide (the CLI prints and exits 1, the build raises
BuildError).
"""
from pathlib import Path

from . import model_checks
from ..folding import unfold_zh
from ..paths import ROOT, display_path
from .model import Scenario
from .problems import Problem, did_you_mean, listing
from .schema import DEMO_PATH_SCHEMA_FILE, SCENARIO_SCHEMA_FILE, schema_problems
from .yamlload import YamlProblem, YList, YMap, load_text

#: The shipped scenarios, and the schemas every scenario file is checked against.
SCENARIOS = ROOT / "scenarios"
SCHEMAS = SCENARIOS
#: The demo path's file name inside the scenarios folder.
DEMO_PATH_FILE = "demo-path.yaml"
#: Worked examples beside the scenarios (validated, not shown in the gallery).
EXAMPLES_DIR = "examples"


class FileCheck:
    """Problems of one file; ``add`` records one with the file's display name."""

    def __init__(self, path):
        self.path = Path(path)
        self.name = display_path(path)
        self.problems = []

    def add(self, line, field, message, allowed=""):
        self.problems.append(Problem(self.name, line, field, message, str(allowed) if allowed else ""))

    def load(self):
        """The file as YMap/YList/scalars, or None after a problem."""
        try:
            text = self.path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as err:
            self.add(1, "file", f"not UTF-8 text ({err.reason} at byte {err.start})")
            return None
        except OSError as err:
            self.add(1, "file", f"cannot be read ({err.strerror})")
            return None
        try:
            data = load_text(text)
        except YamlProblem as err:
            self.add(err.line, "yaml", err.message)
            return None
        self._repeated_keys(data, "")
        return data

    def _repeated_keys(self, node, where):
        """Keys given twice (PyYAML would let the last one win silently)."""
        if isinstance(node, YMap):
            for key, line in node.repeated:
                self.add(line, f"{where}.{key}" if where else key, "is given twice (a key may appear once)")
            for key, value in node.items():
                self._repeated_keys(value, f"{where}.{key}" if where else key)
        elif isinstance(node, YList):
            for index, value in enumerate(node):
                self._repeated_keys(value, f"{where}[{index}]")

    def schema(self, data, schema_path):
        """Add every schema problem; return the fields that have one, and
        their top-level fields (``""``: the file as a whole)."""
        bad = set()
        for line, field, message, allowed in schema_problems(data, schema_path):
            self.add(line, field or "file", message, allowed)
            bad.add(field)
        return bad


def _open(path, schema_name):
    """``(check, data, top-level fields with schema problems)``; data is None
    when the file is not a YAML mapping (the problems say why)."""
    check = FileCheck(path)
    data = check.load()
    if data is None:
        return check, None, set()
    bad = check.schema(data, SCHEMAS / schema_name)
    return check, (data if isinstance(data, YMap) else None), bad


def _under(bad, where):
    """Whether the schema found a problem at ``where`` or inside it."""
    return any(field == where or field.startswith((where + ".", where + "[")) for field in bad)


def check_scenario_file(path):
    """Validate one scenario file; return ``(Scenario or None, [Problem])``."""
    check, data, bad = _open(path, SCENARIO_SCHEMA_FILE)
    if data is None:
        return None, check.problems
    stem = Path(path).stem
    if "id" in data and "id" not in bad and data["id"] != stem:
        check.add(data.key_lines["id"], "id", f"{data['id']!r} differs from the file name {stem!r}",
                  f"the file name without .yaml: {stem}")
    # The model judges what the schema accepted: each input, each figure.
    workload = layout = figures = None
    model = data["model"] if "model" in data and "model" not in bad else None
    if isinstance(data.get("workload"), YMap):
        # An input the schema refused, or an item of it (a recompute module's name), is not judged again.
        skip = {key for key in data["workload"] if _under(bad, f"workload.{key}")}
        workload = model_checks.workload(data["workload"], check.add, skip, model)
    if "parallelism" in data and not _under(bad, "workload") and not _under(bad, "parallelism"):
        layout = model_checks.parallelism(data["parallelism"], workload, check.add)
    if isinstance(data.get("published"), YList):
        skip = {index for index in range(len(data["published"]))
                if bad & {f"published[{index}]", f"published[{index}].metric", f"published[{index}].value"}}
        figures = model_checks.published(data["published"], check.add, skip)
    check.problems.sort(key=lambda problem: problem.line)
    if check.problems:
        return None, check.problems
    scenario = Scenario(
        id=data["id"], path=check.name, title=unfold_zh(dict(data["title"])), summary=unfold_zh(dict(data["summary"])),
        narrative=unfold_zh(dict(data["narrative"])), workload=workload, parallelism=layout, model=model,
        source=dict(data["source"]) if "source" in data else None, published=figures or (),
        notes=unfold_zh(dict(data["notes"])) if "notes" in data else None, tags=tuple(data.get("tags", ())),
    )
    scenario.extra["id_line"] = data.key_lines["id"]
    return scenario, check.problems


# --- the demo path ------------------------------------------------------------


def check_demo_path_file(path, known_ids, broken_ids=()):
    """Validate the demo path against ``known_ids`` (``broken_ids``: files that exist
    but are not valid); return ``(ids or None, [Problem])``."""
    check, data, bad = _open(path, DEMO_PATH_SCHEMA_FILE)
    if data is None or not isinstance(data.get("steps"), YList):
        return None, check.problems
    folder = Path(path).parent
    for index, step in enumerate(data["steps"]):
        line, where = data["steps"].item_lines[index], f"steps[{index}]"
        if where in bad:
            continue  # not an id, or a repeat: the schema said so
        if step in broken_ids:
            check.add(line, where, f"the scenario file {display_path(folder / (step + '.yaml'))} "
                      "is not valid (see its problems)")
        elif step not in known_ids:
            check.add(line, where, f"no scenario file {display_path(folder / (step + '.yaml'))}"
                      + did_you_mean(step, sorted(known_ids)), listing(sorted(known_ids)))
    check.problems.sort(key=lambda problem: problem.line)
    if check.problems:
        return None, check.problems
    return list(data["steps"]), check.problems


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
