"""A validated scenario: plain data the pages render and the lab opens."""
from dataclasses import dataclass, field
from urllib.parse import urlencode

from lab_core import Parallelism, Workload


def _query_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    if value is None:
        return "0"
    return str(value)


@dataclass(frozen=True)
class Scenario:
    """One scenario file, validated.

    ``workload`` holds only the inputs the file gives, already numbers (never
    strings); ``Workload(**workload)`` fills the documented defaults.
    ``parallelism`` is the full pinned layout (``Parallelism.to_dict()``) or
    None. Texts are ``{"en": ..., "zh": ...}`` plain text (escape on render).
    """

    id: str
    path: str
    title: dict
    summary: dict
    narrative: dict
    workload: dict
    parallelism: dict = None
    source: dict = None
    published: tuple = ()
    notes: dict = None
    tags: tuple = ()
    extra: dict = field(default_factory=dict)

    def workload_object(self):
        return Workload(**self.workload)

    def parallelism_object(self):
        return None if self.parallelism is None else Parallelism(**self.parallelism)

    def lab_query(self):
        """URL query that opens the lab at this workload (parameters named like the inputs)."""
        return urlencode([(name, _query_value(value)) for name, value in self.workload.items()])

    def text(self, name, lang):
        value = getattr(self, name)
        return None if value is None else value[lang]

    def to_dict(self):
        return {
            "id": self.id,
            "title": dict(self.title),
            "summary": dict(self.summary),
            "narrative": dict(self.narrative),
            "workload": dict(self.workload),
            "parallelism": None if self.parallelism is None else dict(self.parallelism),
            "source": None if self.source is None else dict(self.source),
            "published": [dict(p) for p in self.published],
            "notes": None if self.notes is None else dict(self.notes),
            "tags": list(self.tags),
        }
