"""Rules the model's code keeps: standard library only, no I/O outside the
command line, and functions short enough to read in one screen."""
import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted((ROOT / "lab_core").rglob("*.py"))
COMMAND_LINE = {"cli.py", "__main__.py"}
MAX_FUNCTION_LINES = 80


def _tree(path):
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_only_the_standard_library(path):
    outside = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module]
        else:
            continue
        outside += [n for n in names if n.split(".")[0] not in sys.stdlib_module_names and n.split(".")[0] != "lab_core"]
    assert outside == []


@pytest.mark.parametrize("path", [p for p in MODULES if p.name not in COMMAND_LINE],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_input_or_output(path):
    calls = [node.func.id for node in ast.walk(_tree(path))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("open", "print", "input")]
    assert calls == []


def test_functions_fit_one_screen():
    long = []
    for path in MODULES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_no_builtin_sum():
    """Python 3.12 made sum() of floats compensated (Neumaier); the browser's
    Pyodide runs 3.14 and the build 3.11, so a sum() would differ in the last
    digit between them. lab_core adds with loops instead."""
    calls = [f"{path.relative_to(ROOT)}:{node.lineno}" for path in MODULES for node in ast.walk(_tree(path))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "sum"]
    assert calls == []
