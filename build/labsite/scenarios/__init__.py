"""Scenarios: the contributor surface (``scenarios/*.yaml``).

    from labsite.scenarios import load_scenarios, load_demo_path
    scenarios = load_scenarios()        # [Scenario], sorted by id, validated
    steps = load_demo_path()            # [Scenario] in walkthrough order

Both raise labsite.errors.BuildError listing every problem, one per line as
``file:line: field: what is wrong (allowed: …)`` — the same lines
``python -m labsite.check_scenarios`` prints. The format is
scenarios/scenario.schema.json (schema.py); the site build validates the
folder once per build (labsite.site.SiteBuild).
"""
from pathlib import Path

from ..errors import BuildError
from ..paths import display_path
from .metrics import METRICS, predicted
from .model import Scenario
from .problems import Problem
from .validate import SCENARIOS, check_scenario_file, check_tree

__all__ = ["SCENARIOS", "Scenario", "Problem", "METRICS", "check_tree", "load_scenarios", "load_scenario",
           "load_demo_path", "load_all", "predicted", "problems_text"]


def problems_text(problems):
    return "\n".join(str(p) for p in problems)


def load_all(directory=SCENARIOS):
    """``(scenarios by id, demo path ids)`` of a valid folder; BuildError otherwise."""
    directory = Path(directory)
    result = check_tree(directory)
    if not result.ok:
        count, files = len(result.problems), len({p.file for p in result.problems})
        raise BuildError(display_path(directory), f"{count} problem{'s' if count != 1 else ''} in "
                         f"{files} scenario file{'s' if files != 1 else ''}:\n" + problems_text(result.problems))
    return dict(sorted(result.scenarios.items())), list(result.demo_path)


def load_scenario(scenario_id, directory=SCENARIOS):
    """One scenario file, validated on its own (BuildError lists its problems)."""
    scenario, problems = check_scenario_file(Path(directory) / f"{scenario_id}.yaml")
    if problems:
        raise BuildError(display_path(Path(directory) / f"{scenario_id}.yaml"), "\n" + problems_text(problems))
    return scenario


def load_scenarios(directory=SCENARIOS):
    """Every scenario of the folder, validated, sorted by id."""
    return list(load_all(directory)[0].values())


def load_demo_path(directory=SCENARIOS):
    """The demo path's scenarios, in walkthrough order."""
    scenarios, steps = load_all(directory)
    return [scenarios[step] for step in steps]
