"""One validation error: ``file:line: field: what is wrong (allowed: …)``."""
import difflib
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    field: str
    message: str
    allowed: str = ""

    def __str__(self):
        text = f"{self.file}:{self.line}: {self.field}: {self.message}"
        if self.allowed:
            text += f" (allowed: {self.allowed})"
        return text


def did_you_mean(word, choices):
    """`` (did you mean 'x'?)`` for the closest choice, or an empty string."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    if not close:
        close = [c for c in map(str, choices) if c.lower() == word.lower() or c.startswith(word.lower())][:1]
    return f" (did you mean {close[0]!r}?)" if close else ""


def listing(choices):
    return ", ".join(str(c) for c in choices)
