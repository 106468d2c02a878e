"""Runs the same calls in CPython and in Pyodide; both print one JSON string.

A case is ``{"fn": "module.function", "args": [...]}`` on the JSON entry points
of lab_core / lab_view, ``{"session": config, "inputs": {...}, "typed": {...}}``,
or ``{"session": config, "requests": [...]}``: what the page's worker sends,
one Session answering them in turn (Session.handle).
"""
import importlib
import json


def _call(case):
    if "session" in case:
        import lab_view

        session = lab_view.Session(case["session"])
        if "requests" in case:
            return [json.loads(session.handle(json.dumps(request))) for request in case["requests"]]
        return session.evaluate(case["inputs"], case.get("typed"))
    module_name, _, function_name = case["fn"].rpartition(".")
    return getattr(importlib.import_module(module_name), function_name)(*case["args"])


def run(cases_json):
    return json.dumps([_call(case) for case in json.loads(cases_json)], sort_keys=True)
