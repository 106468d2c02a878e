"""The one exception type the model raises for bad input."""


class LabInputError(ValueError):
    """An input is missing, of the wrong type, out of range or inconsistent.

    Carries machine-readable parts so a page can render the message in the
    reader's language: ``field`` (input name), ``value`` (what was given),
    ``allowed`` (human-readable allowed range or set) and ``reason`` (a stable
    id such as ``out_of_range``, ``not_a_number``, ``unknown_field``).
    An input that does not fit the others (reason ``inconsistent``) also carries
    ``numbers``: the other inputs' values its allowed range comes from, which a
    page words in the reader's language (e.g. ``{"experts": 256}`` for a group
    count that must divide them).
    """

    def __init__(self, field, value, allowed, reason="out_of_range", detail="", numbers=None):
        self.field = field
        self.value = value
        self.allowed = allowed
        self.reason = reason
        self.detail = detail
        self.numbers = dict(numbers or {})
        text = f"{field}: {value!r} is not allowed ({reason}); allowed: {allowed}"
        if detail:
            text += f" — {detail}"
        super().__init__(text)

    def to_dict(self):
        return {
            "field": self.field,
            "value": self.value if isinstance(self.value, (int, float, str, bool)) or self.value is None else repr(self.value),
            "allowed": self.allowed,
            "reason": self.reason,
            "detail": self.detail,
            "numbers": dict(self.numbers),
        }
