"""A small TOML writer: tables of strings, integers, floats, booleans and (nested) arrays of them.

The standard library reads TOML (tomllib) but does not write it; the
torchtitan export needs only this subset (TOML v1.0.0: basic strings with
escapes, decimal integers, floats, true/false, arrays, [table] headers with
dotted keys). tests/export parse every export back with tomllib.
"""
import math

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(text):
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def value(item):
    """One TOML value."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        if not math.isfinite(item):
            raise ValueError(f"TOML export: {item!r} is not a finite number")
        return repr(item)
    if isinstance(item, str):
        return _string(item)
    if isinstance(item, (list, tuple)):
        return "[" + ", ".join(value(element) for element in item) + "]"
    raise ValueError(f"TOML export: cannot write {type(item).__name__}")


def _pair(key, item):
    """key = value; an array of arrays one inner array per line (TOML arrays may span lines)."""
    if isinstance(item, (list, tuple)) and item and all(isinstance(element, (list, tuple)) for element in item):
        return f"{key} = [\n" + "".join(f"    {value(element)},\n" for element in item) + "]"
    return f"{key} = {value(item)}"


def tables(sections, comments=None):
    """``sections``: [(table name, [(key, value)])]; ``comments``: {table name: [line]} written above it."""
    blocks = []
    for name, pairs in sections:
        lines = [f"# {line}" for line in (comments or {}).get(name, ())]
        lines.append(f"[{name}]")
        lines += [_pair(key, item) for key, item in pairs]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
