"""Slider stops: the "nice" values a log slider snaps to, with their labels.

Readers drag through round numbers (1.3B, 1,024 GPUs); an exact value can
still be typed. Labels are formatted at build time by lab_view, per language,
so the page's script never formats a number itself.
"""
import math

from lab_core.inputs import SPEC_BY_NAME
from lab_view import format_quantity

from .errors import BuildError

# Mantissas of an E12-like series, good to two significant figures.
_E_SERIES = (1.0, 1.2, 1.3, 1.5, 1.7, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0)


def _series_e12(low, high):
    values = []
    for exponent in range(int(math.floor(math.log10(low))), int(math.ceil(math.log10(high))) + 1):
        for mantissa in _E_SERIES:
            value = float(f"{mantissa}e{exponent}")
            if low <= value <= high:
                values.append(value)
    return values


def _series_pow2x3(low, high):
    values = set()
    power = 1
    while power <= high:
        for value in (power, 3 * power // 2 if power >= 2 else None):
            if value and low <= value <= high:
                values.add(value)
        power *= 2
    return sorted(values)


def _series_pow2(low, high):
    values, power = [], 1
    while power <= high:
        if power >= low:
            values.append(power)
        power *= 2
    return values


SERIES = {"e12": _series_e12, "pow2x3": _series_pow2x3, "pow2": _series_pow2}


def slider_stops(name, series):
    """Sorted stop values for input ``name``: the series plus min, max, default."""
    spec = SPEC_BY_NAME.get(name)
    if spec is None:
        raise BuildError("content/lab.yaml", f"slider {name!r} is not a lab_core input")
    if isinstance(series, list):
        outside = [v for v in series if not spec.minimum <= v <= spec.maximum]
        if outside:
            raise BuildError("content/lab.yaml", f"slider {name!r}: stops {outside} outside {spec.minimum:g} … {spec.maximum:g}")
        values = set(series)
    elif series in SERIES:
        values = set(SERIES[series](spec.minimum, spec.maximum))
    else:
        raise BuildError("content/lab.yaml", f"slider {name!r}: unknown series {series!r} (allowed: a list of values or {', '.join(SERIES)})")
    values.update((spec.minimum, spec.maximum, spec.default))
    if spec.integer or all(float(v) == int(v) for v in values):
        values = {int(v) for v in values}
    return sorted(values)


def nearest_stop(stops, value):
    """Index of the stop closest to ``value`` on a log scale."""
    target = math.log(value)
    return min(range(len(stops)), key=lambda i: abs(math.log(stops[i]) - target))


def slider_config(slider, catalog):
    stops = slider_stops(slider["name"], slider["series"])
    labels = [format_quantity(v, slider["kind"], catalog["units"]) for v in stops]
    return {"name": slider["name"], "kind": slider["kind"], "stops": stops, "labels": labels}
