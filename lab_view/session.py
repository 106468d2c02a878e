"""One reader's lab session: inputs in, formatted view out (JSON strings).

The browser worker creates one Session with the page's catalog and calls
``handle`` for every slider move; the build calls the same code to precompute
the first paint. JSON strings cross the JS/Python boundary so no proxy objects
leak and CPython and Pyodide see identical data.
"""
import json

import lab_core

from .quantities import QuantityError, parse_quantity
from .view import render_error, render_result


class Session:
    def __init__(self, config):
        """``config``: ``{"catalog": {...}, "kinds": {input name: quantity kind}}``."""
        if isinstance(config, str):
            config = json.loads(config)
        self.catalog = config["catalog"]
        self.kinds = config["kinds"]

    def evaluate(self, inputs, typed=None):
        """Return ``{"ok", "inputs", "view", ...}`` for numeric ``inputs`` plus ``typed`` text."""
        merged = dict(inputs)
        for name, text in (typed or {}).items():
            try:
                merged[name] = parse_quantity(text)
            except QuantityError:
                error = {"field": name, "value": text, "reason": "not_a_number"}
                return {"ok": False, "inputs": inputs, "error": render_error(error, self.catalog, self.kinds)}
        result = lab_core.compute(merged)
        if not result["ok"]:
            return {"ok": False, "inputs": inputs, "error": render_error(result["error"], self.catalog, self.kinds)}
        return {"ok": True, "inputs": merged, "view": render_result(result, self.catalog, self.kinds)}

    def handle(self, request_json):
        request = json.loads(request_json)
        return json.dumps(self.evaluate(request.get("inputs", {}), request.get("typed")), sort_keys=True)

