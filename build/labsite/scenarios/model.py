"""A validated scenario: plain data the pages render and the lab opens."""
from dataclasses import dataclass, field

from lab_core import Parallelism, Workload


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
