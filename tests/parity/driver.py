"""Runs the same calls in CPython and in Pyodide; both print one JSON string.

A case is ``{"fn": "module.function", "args": [...]}`` on the JSON entry points
of lab_core / lab_view, or ``{"session": config, "inputs": {...}, "typed": {...}}``.
"""
import importlib
import json


def _call(case):
    if "session" in case:
        import lab_view

        return lab_view.Session(case["session"]).evaluate(case["inputs"], case.get("typed"))
    module_name, _, function_name = case["fn"].rpartition(".")
    return getattr(importlib.import_module(module_name), function_name)(*case["args"])


def run(cases_json):
    return json.dumps([_call(case) for case in json.loads(cases_json)], sort_keys=True)
