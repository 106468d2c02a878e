"""Links that open the lab at a workload: ``lab/?params=13000000000&gpus=256``.

One form, read and written by the page's script too (docs/assets/lab/lab.js:
``urlFor`` writes it, ``parseValue`` reads it): booleans as ``true``/``false``,
whole numbers without a decimal point, other numbers as the language prints
them, a list (the recompute modules) as its items joined by commas (String() of
a JavaScript array), and an absent value (None, "derive it from params") as an
empty string.
"""
from urllib.parse import urlencode


def query_value(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def lab_query(inputs):
    """``name=value&…`` for workload inputs (names as in lab_core.inputs), in their order."""
    return urlencode([(name, query_value(value)) for name, value in inputs.items()])


def lab_url(lab_link, inputs):
    """The lab page's link (``ctx.link("lab/")``) with the inputs in its query."""
    return f"{lab_link}?{lab_query(inputs)}"
