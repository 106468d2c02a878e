"""export(plan, workload, fmt, texts): the launch configuration of a plan.

Formats (FORMATS): ``megatron`` (Megatron-LM / Megatron-Core command-line
flags), ``torchtitan`` (a TOML job file), ``deepspeed`` (a JSON config) and
``json`` (the plan itself: workload, parallelism, predicted figures). Every
value comes from the plan and its workload (export.facts); keys come from the
framework versions in export.frameworks. ``texts`` is the ``export`` section
of a language's catalog (content/i18n/<lang>/export.yaml): the files' comments
name the framework version and what the plan assumed that the file cannot
express, in that language. Returns an Export: ``text`` (the file), ``notes``
(the ids of what could not be expressed), ``format``, ``filename``.
"""
import json

from ..errors import LabInputError
from . import deepspeed, megatron, torchtitan
from .facts import LaunchFacts
from .frameworks import FRAMEWORKS
from .notes import Notes, architecture_notes, header_lines

FORMATS = ("megatron", "torchtitan", "deepspeed", "json")
# Notes that mean the framework will not start the job as written (the lab's export panel warns of them).
REFUSALS = frozenset(("torchtitan_too_few_micro_batches", "torchtitan_no_pipelining", "torchtitan_empty_stage",
                      "torchtitan_flex_context_parallel"))
FILENAMES = {"megatron": "launch_megatron.sh", "torchtitan": "job.toml", "deepspeed": "ds_config.json",
             "json": "plan.json"}
_RENDERERS = {"megatron": megatron.render, "torchtitan": torchtitan.render, "deepspeed": deepspeed.render}

class Export:
    """``refused``: the notes (REFUSALS) that mean the framework will not start the job as written."""

    __slots__ = ("format", "text", "notes", "filename", "refused")

    def __init__(self, fmt, text, notes):
        self.format, self.text, self.notes, self.filename = fmt, text, notes.ids(), FILENAMES[fmt]
        self.refused = [note for note in self.notes if note in REFUSALS]

    def to_dict(self):
        return {"format": self.format, "text": self.text, "notes": list(self.notes), "filename": self.filename,
                "refused": list(self.refused)}


def _plan_json(f, texts):
    notes = Notes()
    architecture_notes(f, notes)
    report = f.report
    document = {
        "comment": header_lines(texts, None, f, notes),
        "workload": f.workload.to_dict(),
        "parallelism": f.par.to_dict(),
        "predicted": {"step_s": report.step_s, "memory_bytes": report.memory_bytes, "mfu": report.mfu,
                      "tokens_per_s": report.tokens_per_s, "train_time_s": report.train_time_s,
                      "gpu_hours": report.gpu_hours, "fits": report.fits if f.fits is None else f.fits},
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n", notes


def export(plan, workload, fmt, texts):
    """The launch configuration of ``plan`` (a Plan, Report or Parallelism) for ``workload``."""
    if fmt not in FORMATS:
        raise LabInputError("format", fmt, ", ".join(FORMATS), "unknown_choice")
    facts = LaunchFacts(plan, workload)
    if fmt == "json":
        text, notes = _plan_json(facts, texts)
    else:
        text, notes = _RENDERERS[fmt](facts, texts, FRAMEWORKS[fmt])
    return Export(fmt, text, notes)


__all__ = ["export", "Export", "FORMATS", "FRAMEWORKS", "REFUSALS"]
