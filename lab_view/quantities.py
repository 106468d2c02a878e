"""Human quantities: parse what readers type ("1.3B", "4M", "8K", "1,024") and
format numbers the way the lab displays them. Kinds are the ``kind`` values of
the lab's slider table (``count``, ``tokens``, ``params``, ``gbps``, ``minutes``,
``bytes``)."""
import math
import re

SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_NUMBER = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBgGtT]?)$")


class QuantityError(ValueError):
    """Text that is not a number the lab understands; ``text`` is kept verbatim."""

    def __init__(self, text):
        self.text = text
        super().__init__(f"not a number: {text!r}")


def parse_quantity(text):
    """Parse ``"1.3B"``, ``"1.3e9"``, ``"175 B"``, ``"1_000"``, ``"1,024"``, ``"8K"``.

    Thousands separators (``,`` and ``_``) are dropped; one optional suffix
    K/M/B(G)/T scales by 10^3/6/9/12. Anything else raises QuantityError.
    """
    if isinstance(text, bool):
        raise QuantityError(text)
    if isinstance(text, (int, float)):
        if not math.isfinite(text):
            raise QuantityError(text)
        return text
    cleaned = str(text).strip().replace(",", "").replace("_", "")
    match = _NUMBER.match(cleaned)
    if not match:
        raise QuantityError(text)
    value = float(match.group(1)) * SUFFIXES.get(match.group(2).lower(), 1.0)
    if value == int(value) and abs(value) < 2**53:
        return int(value)
    return value


def _significant(value, digits):
    """Round to ``digits`` significant figures and drop a trailing ``.0``."""
    if value == 0:
        return "0"
    rounded = round(value, digits - 1 - int(math.floor(math.log10(abs(value)))))
    if rounded == int(rounded):
        return str(int(rounded))
    return f"{rounded:.{max(0, digits - 1 - int(math.floor(math.log10(abs(rounded)))))}f}".rstrip("0").rstrip(".")


def _grouped(value):
    return f"{int(round(value)):,}"


def format_scaled(value, digits=3):
    """``1.3e9`` → ``"1.3B"``, ``4194304`` → ``"4.19M"``: SI-like suffixes K/M/B/T."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= scale:
            return _significant(value / scale, digits) + suffix
    return _significant(value, digits)


def format_quantity(value, kind, units):
    """Format ``value`` of a slider ``kind``; ``units`` maps kind → pattern with ``{n}``."""
    if kind == "count":
        number = _grouped(value)
    elif kind in ("params", "tokens"):
        number = format_scaled(value)
    elif kind == "bytes_gb":
        number = _significant(value / 1e9, 3) if value >= 1e8 else _significant(value / 1e9, 2)
    else:
        number = _significant(value, 3) if value < 1000 else _grouped(value)
    return units[kind].format(n=number)
