"""What every chapter's numbers share: the Chapter record, the registry, and
the running examples and helpers more than one chapter uses.

A chapter module registers its function with ``@chapter("<id>")`` (the id of
its content/tutorial/<slug>.yaml); ``chapter_data(id)`` runs it once per
process. The only numbers typed here are inputs (model sizes, GPU counts,
layouts) — the outputs are all lab_core's.
"""
from dataclasses import dataclass, field
from functools import cache

import lab_core
from lab_core import calibration as cal
from lab_core.hardware import GPU_PRESETS
from lab_core.inputs import SPEC_BY_NAME

from ..registry import registrar

GB = 1e9


@dataclass
class Chapter:
    """``values``: ``{placeholder: (value, kind)}`` (kinds as in lab_view.quantities,
    plus ``text`` and ``case``); ``workload``: the lab inputs of the chapter's
    running example; ``charts``: chart specs for labsite.charts; ``figures``:
    ``{name: params}`` a chapter's ``figure: {params: {from: name}}`` may read."""
    values: dict
    workload: dict
    charts: list = field(default_factory=list)
    figures: dict = field(default_factory=dict)


CHAPTERS = {}


#: ``@chapter("<id>")``: register the function that computes chapter ``<id>``'s numbers.
chapter = registrar(CHAPTERS, "tutorial chapter")


@cache
def chapter_data(chapter_id):
    """A chapter's values, workload and charts (lab_core's numbers: computed once per process)."""
    return CHAPTERS[chapter_id]()


def evaluate(workload, **layout):
    """(Workload, Report) of ``workload`` (lab inputs) laid out as ``layout`` (Parallelism fields)."""
    w = lab_core.Workload(**workload)
    return w, lab_core.evaluate(w, lab_core.Parallelism(**layout))


def default(name):
    """The lab's default for input ``name``."""
    return SPEC_BY_NAME[name].default


# Chapters 1 and 3 follow the ZeRO paper's accounting (arXiv:1910.02054 Sec 3.1):
# 16-bit gradients, 16 bytes of state per parameter.
ZERO_STATE_BYTES = 16

# GPT-3 175B (its scenario file) on 1,024 GPUs, as in arXiv:2104.04473 Table 1 /
# arXiv:2205.05198 Table 3.
GPT3_GPUS = 1024
GPT3_LAYOUT = dict(tp=8, pp=8, dp=16, recompute="selective", sequence_parallel=True, micro_batch=1)


def rates(gpu="a100_80gb", gbps=200.0):
    """(GEMM FLOP/s, HBM B/s, NVLink bus B/s, NIC B/s) the model uses for ``gpu``."""
    dev = GPU_PRESETS[gpu]
    return (dev.peak_flops * cal.GEMM_EFFICIENCY[gpu], dev.hbm_bytes_per_s * cal.HBM_EFFICIENCY,
            dev.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION[gpu], gbps * 1e9 / 8.0 * cal.INTER_NODE_EFFICIENCY)


class Case:
    """A conclusion chosen by a computed number: ``key`` is one of ``options``,
    whose words live in the chapter file's ``cases``."""

    __slots__ = ("key", "options")

    def __init__(self, key, options):
        if key not in options:
            raise ValueError(f"case {key!r} is not one of {options}")
        self.key, self.options = key, tuple(options)

    def __eq__(self, other):
        return isinstance(other, Case) and (self.key, self.options) == (other.key, other.options)

    def __repr__(self):
        return f"Case({self.key!r}, {self.options!r})"


def layout_text(p):
    """A plan's GPU grid as the chapters print it, "TP 8 × CP 2 × PP 16 × DP 64" (context
    parallelism only when used), as a "text" value: a planner's plan may use it, and
    TP × PP × DP alone would then leave GPUs out."""
    return f"TP {p.tp}" + (f" × CP {p.cp}" if p.cp > 1 else "") + f" × PP {p.pp} × DP {p.dp:,}", "text"


def case(key, *options):
    """A ``(Case, "case")`` value: ``values["verdict"] = case("hidden" if … else "exposed", "hidden", "exposed")``."""
    return Case(key, options), "case"


def exercise(chapter_id, exercise_id):
    """The lab state an exercise's link opens (labsite.exercises.ExerciseState):
    ``.workload``, ``.plan``, ``.report``, ``.layout`` — what its answer is computed from."""
    from ..exercises import exercise_state
    return exercise_state(chapter_id, exercise_id)
