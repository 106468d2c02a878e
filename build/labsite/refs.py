"""Resolve ``"package.module:NAME.key.attr"`` references into lab_core values,
so data files name the constant the model uses instead of repeating it."""
import importlib

from .errors import BuildError


def resolve(reference, where):
    module_name, _, path = reference.partition(":")
    try:
        value = importlib.import_module(module_name)
    except ImportError:
        raise BuildError(where, f"unknown module in reference {reference!r}") from None
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif hasattr(value, part):
            value = getattr(value, part)
        else:
            raise BuildError(where, f"reference {reference!r}: nothing named {part!r}")
    return value
