"""What a reader types into one of the lab's boxes, read in that box's unit.

A box accepts what it displays ("30 min", "400 Gb/s", "30 分钟", "2 h",
"1.3B", "8K") and a sign, so "-5" reaches the range check and is reported as
out of range rather than as "not a number". Unit words come from the
catalog (``unit_words``: a list of spellings per unit); the scale of each
unit relative to the input's own unit is fixed here.
"""
import re

from .quantities import QuantityError, parse_quantity

# Input kind -> {unit: scale to the input's unit}. Units not listed for a kind
# are not accepted for it (so "GB/s" is refused for a Gb/s box).
UNIT_SCALES = {
    "minutes": {"seconds": 1.0 / 60.0, "minutes": 1.0, "hours": 60.0, "days": 1440.0},
    "gbps": {"mbps": 1e-3, "gbps": 1.0, "tbps": 1e3},
    "gb_per_s": {"mb_per_s": 1e-3, "gb_per_s": 1.0, "tb_per_s": 1e3},
}

_SPLIT = re.compile(r"^\s*([+-]?)\s*(.*?)\s*$")


def _unit_of(text, kind, unit_words):
    """(number text, scale) when ``text`` ends with a unit word of ``kind``."""
    lowered = text.lower()
    best = None
    for unit, scale in UNIT_SCALES.get(kind, {}).items():
        for word in unit_words.get(unit, ()):
            if lowered.endswith(word.lower()) and (best is None or len(word) > len(best[0])):
                best = (word, scale)
    if best is None:
        return text, 1.0
    return text[: len(text) - len(best[0])].strip(), best[1]


def parse_typed(text, kind, unit_words):
    """The number ``text`` means in the unit of an input of ``kind``; QuantityError if none."""
    sign, body = _SPLIT.match(str(text)).groups()
    number, scale = _unit_of(body, kind, unit_words)
    if not number or number[0] in "+-":
        raise QuantityError(text)
    try:
        value = parse_quantity(number, binary=kind == "tokens") * scale
    except QuantityError as err:
        raise QuantityError(text, err.reason) from None
    value = -value if sign == "-" else value
    if value == int(value) and abs(value) < 2**53:
        return int(value)
    return value
