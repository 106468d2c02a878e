"""Scenarios: the contributor surface (``scenarios/*.yaml``).

    from labsite.scenarios import load_scenarios, load_demo_path
    scenarios = load_scenarios()        # [Scenario], sorted by id, validated
    steps = load_demo_path()            # [Scenario] in walkthrough order

Both raise labsite.errors.BuildError listing every problem, one per line as
``file:line: field: what is wrong (allowed: …)`` — the same lines
``python -m labsite.check_scenarios`` prints. Results are cached per folder
and revalidated when a file changes (``mkdocs serve``).
"""
from pathlib import Path

from ..errors import BuildError
from .metrics import METRICS, predicted
from .model import Scenario
from .problems import Problem
from .validate import DEMO_PATH_FILE, SCENARIOS, check_tree, example_files, scenario_files

__all__ = ["SCENARIOS", "Scenario", "Problem", "METRICS", "check_tree", "load_scenarios",
           "load_demo_path", "load_all", "predicted", "problems_text"]

_cache = {}


def problems_text(problems):
    return "\n".join(str(p) for p in problems)


def _fingerprint(directory):
    files = scenario_files(directory) + example_files(directory) + [directory / DEMO_PATH_FILE]
    stamp = []
    for path in files:
        try:
            info = path.stat()
            stamp.append((str(path), info.st_mtime_ns, info.st_size))
        except OSError:
            stamp.append((str(path), None, None))
    return tuple(stamp)


def load_all(directory=SCENARIOS):
    """``(scenarios by id, demo path ids)`` of a valid folder; BuildError otherwise."""
    directory = Path(directory)
    stamp = _fingerprint(directory)
    cached = _cache.get(str(directory))
    if cached and cached[0] == stamp:
        return cached[1]
    result = check_tree(directory)
    if not result.ok:
        count = len(result.problems)
        raise BuildError(directory, f"{count} problem{'s' if count != 1 else ''} in scenario files:\n"
                                    + problems_text(result.problems))
    value = (dict(sorted(result.scenarios.items())), list(result.demo_path))
    _cache[str(directory)] = (stamp, value)
    return value


def load_scenarios(directory=SCENARIOS):
    """Every scenario of the folder, validated, sorted by id."""
    return list(load_all(directory)[0].values())


def load_demo_path(directory=SCENARIOS):
    """The demo path's scenarios, in walkthrough order."""
    scenarios, steps = load_all(directory)
    return [scenarios[step] for step in steps]
