"""Human quantities: parse what readers type ("1.3B", "4M", "8K", "1,024") and
format numbers the way the lab displays them. Kinds are the ``kind`` values of
the lab's slider table (``count``, ``tokens``, ``params``, ``gbps``, ``minutes``,
``bytes``)."""
import math
import re

SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_NUMBER = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBgGtT]?)$")
# Where commas may stand: between groups of three digits of the whole part ("1,024", "70,000,000,000").
_GROUPED = re.compile(r"^[0-9]{1,3}(?:,[0-9]{3})+(?![0-9,])")


class QuantityError(ValueError):
    """Text that is not a number the lab understands; ``text`` is kept verbatim.
    ``reason``: "not_a_number", or "comma_grouping" for a comma that does not group
    thousands ("1,5B" is 1.5B where the comma marks decimals, 15B where it is dropped)."""

    def __init__(self, text, reason="not_a_number"):
        self.text = text
        self.reason = reason
        super().__init__(f"not a number: {text!r}")


BINARY_SUFFIXES = {"k": 1024.0, "m": 1048576.0}


def parse_quantity(text, binary=False):
    """Parse ``"1.3B"``, ``"1.3e9"``, ``"175 B"``, ``"1_000"``, ``"1,024"``, ``"8K"``.

    Thousands separators (``,`` and ``_``) are dropped; a comma must group the
    whole part's digits by three, so a decimal comma ("1,5B") is refused
    (QuantityError "comma_grouping") rather than read as 15B; one optional suffix
    K/M/B(G)/T scales by 10^3/6/9/12 — or, with ``binary`` (token counts:
    sequence lengths, batch sizes), K and M by 2^10 and 2^20, so "8K" is the
    8,192 the lab displays as "8K". Anything else raises QuantityError.
    """
    if isinstance(text, bool):
        raise QuantityError(text)
    if isinstance(text, (int, float)):
        if not math.isfinite(text):
            raise QuantityError(text)
        return text
    cleaned = str(text).strip().replace("_", "")
    if "," in cleaned:
        if not _GROUPED.match(cleaned):
            raise QuantityError(text, "comma_grouping")
        cleaned = cleaned.replace(",", "")
    match = _NUMBER.match(cleaned)
    if not match:
        raise QuantityError(text)
    suffix = match.group(2).lower()
    scale = BINARY_SUFFIXES[suffix] if binary and suffix in BINARY_SUFFIXES else SUFFIXES.get(suffix, 1.0)
    value = float(match.group(1)) * scale
    if not math.isfinite(value):  # "1e310" overflows to infinity: not a number the lab can use
        raise QuantityError(text)
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


# Percentages are written to 3 significant figures down to this one; a smaller
# non-zero share reads "<0.1%", never "0%": a meter that says "0% of wall time
# lost" beside a count of interruptions reads as a contradiction. Below
# ROUNDING_NOISE_PERCENT a share is floating-point residue of a zero (a
# difference of equal sums) and reads "0%".
SMALLEST_PERCENT = 0.1
ROUNDING_NOISE_PERCENT = 1e-9


def _percent_number(percent):
    """The number of a percentage: 3 significant figures, "<0.1" for a smaller share
    than SMALLEST_PERCENT that is not zero (signed the same way), "0" for zero."""
    if abs(percent) < ROUNDING_NOISE_PERCENT:
        return "0"
    if abs(percent) < SMALLEST_PERCENT:
        return ("<" if percent > 0 else ">-") + _significant(SMALLEST_PERCENT, 1)
    return _significant(percent, 3)


def _grouped(value):
    return f"{int(round(value)):,}"


def format_scaled(value, digits=3):
    """``1.3e9`` → ``"1.3B"``, ``4194304`` → ``"4.19M"``: SI-like suffixes K/M/B/T."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= scale:
            return _significant(value / scale, digits) + suffix
    return _significant(value, digits)


def _duration(value):
    """Seconds → (kind, amount) in the largest unit that keeps the number >= 1."""
    for kind, scale in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if value >= scale:
            return kind, value / scale
    if value >= 1.0:
        return "seconds", value
    return "milliseconds", value * 1e3


def _bytes(value):
    """The unit is chosen on the magnitude, so a (never intended) negative
    amount would still read in sensible units rather than as millions of kB."""
    for kind, scale in (("bytes_tb", 1e12), ("bytes_gb", 1e9), ("bytes_mb", 1e6)):
        if abs(value) >= scale:
            return kind, value / scale
    return "bytes_kb", value / 1e3


def _binary_bytes(value):
    """Like _bytes, in powers of 1024 (KiB, MiB, GiB, TiB: IEC 80000-13)."""
    for kind, scale in (("tib", 1099511627776.0), ("gib", 1073741824.0), ("mib", 1048576.0)):
        if abs(value) >= scale:
            return kind, value / scale
    return "kib", value / 1024.0


#: How memory is written: decimal gigabytes (the default) or binary gibibytes.
BYTE_UNITS = ("gb", "gib")


def byte_units(units, choice):
    """``units`` for the reader's choice of memory unit (BYTE_UNITS): "gib" marks
    them so that amounts of kind ``bytes`` are written in KiB/MiB/GiB/TiB.
    Rates (bytes/s) stay decimal, as storage and networks quote them."""
    if choice not in BYTE_UNITS:
        raise QuantityError(choice)
    return dict(units, binary_bytes=True) if choice == "gib" else units


def format_tokens(value):
    """Token counts the way engineers write them: binary multiples as ``8K``,
    ``4M``, ``128K`` (8,192 / 4,194,304 / 131,072); other counts below a
    million in full (``8,000``), larger ones decimal (``300B``)."""
    if value >= 1024 and value == int(value) and int(value) % 1024 == 0:
        for suffix, scale in (("M", 1048576), ("K", 1024)):
            amount = value / scale
            if 1 <= amount < 10000 and amount * 10 == int(amount * 10):
                return f"{amount:,.1f}".rstrip("0").rstrip(".") + suffix
    if value < 1e6:
        return _grouped(value) if value == int(value) else _significant(value, 3)
    return format_scaled(value)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_scientific(value, digits=3):
    """``1.973e-05`` → ``"1.97 × 10⁻⁵"``."""
    if value == 0:
        return "0"
    exponent = int(math.floor(math.log10(abs(value))))
    mantissa = _significant(value / 10.0**exponent, digits)
    if mantissa == "10":
        mantissa, exponent = "1", exponent + 1
    return f"{mantissa} × 10{str(exponent).translate(_SUPERSCRIPT)}"


# format_quantity's answers: a slider move changes one input, and the view
# writes some sixty numbers per answer, most of them the same as the last
# answer's (the inputs, the limits, the unchanged figures).
_FORMATTED = {}
_FORMATTED_KEPT = 4096


def format_quantity(value, kind, units):
    """Format ``value`` of a ``kind``; ``units`` maps unit kinds to patterns with ``{n}``.
    (_format_quantity's text, remembered for the same value, kind and units.)"""
    key = (value, type(value), kind, id(units))
    found = _FORMATTED.get(key)
    if found is not None and found[0] is units:
        return found[1]
    text = _format_quantity(value, kind, units)
    if len(_FORMATTED) >= _FORMATTED_KEPT:
        _FORMATTED.clear()
    _FORMATTED[key] = (units, text)  # holding `units` keeps its id from being reused
    return text


def _format_quantity(value, kind, units):
    """Format ``value`` of a ``kind``; ``units`` maps unit kinds to patterns with ``{n}``.

    Kinds: ``count`` (1,024), ``params``/``tokens`` (1.3B), ``bytes`` (auto GB/TB;
    decimal units, 1 GB = 1e9 bytes, or GiB/TiB with byte_units(units, "gib")), ``bytes_gb``, ``duration`` (seconds in,
    auto unit out), ``days``/``hours``/``minutes``/``seconds``, ``percent``
    (a ratio in, ``%`` out), ``flops`` (FLOP/s in, TFLOP/s out), ``gbps``,
    ``per_day``, ``plain``.
    """
    if kind == "count":
        return units["count"].format(n=_grouped(value))
    if kind == "params":
        return units[kind].format(n=format_scaled(value))
    if kind == "tokens":
        return units[kind].format(n=format_tokens(value))
    if kind == "bytes":
        kind, value = _binary_bytes(value) if units.get("binary_bytes") else _bytes(value)
        return units[kind].format(n=_significant(value, 3))
    if kind == "bytes_gb":
        return units[kind].format(n=_significant(value / 1e9, 3))
    if kind == "duration":
        kind, value = _duration(value)
    if kind == "percent":
        return units["percent"].format(n=_percent_number(value * 100.0))
    if kind == "tokens_per_s":
        return units[kind].format(n=format_scaled(value))
    if kind == "bytes_per_s":
        byte_kind, amount = _bytes(value)
        return units[kind].format(n=units[byte_kind].format(n=_significant(amount, 3)))
    if kind == "sci":
        return units["plain"].format(n=format_scientific(value))
    if kind == "flops":
        return units["flops"].format(n=_significant(value / 1e12, 3))
    number = _significant(value, 3) if abs(value) < 1000 else _grouped(value)
    return units[kind].format(n=number)
