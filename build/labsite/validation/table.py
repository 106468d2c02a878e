"""A row of the validation table: the lab's figure next to a published one,
with the tolerance the row must meet.

Kinds (what a row tests):

- ``formula``: the model implements the published formula; a check of the code.
- ``calibrated``: the model's constants were fitted to this figure (in-sample).
- ``prediction``: the figure was not used to build the model (out of sample).
- ``held_out``: a prediction kept away from the people changing the model
  until their change was done, then evaluated once (out of sample twice over).
"""
import math
from dataclasses import dataclass, field

KINDS = ("formula", "calibrated", "prediction", "held_out")
#: The kinds that test the model (out of sample).
OUT_OF_SAMPLE = ("prediction", "held_out")
#: Lines of the page's summary (and of ``make validation``'s): each kind, the
#: Megatron-style end-to-end runs, the predicted end-to-end throughputs on today's
#: stacks, every row.
SUMMARY_LINES = KINDS + ("megatron", "modern", "all")
#: A prediction that misses by more than this (percent) is highlighted on the page.
MISS_PERCENT = 10.0


def error_percent(predicted, published):
    if published == 0:
        return 0.0 if predicted == 0 else math.inf
    return 100.0 * (predicted - published) / published


@dataclass(frozen=True)
class Tolerance:
    """How far a prediction may be from the published figure: ``value`` in the
    figure's unit (``relative=False``) or as a fraction of it."""

    value: float
    relative: bool = True

    def allows(self, predicted, published):
        # The 1e-9 slack absorbs float rounding of exact formula checks.
        slack = 1e-9 * max(1.0, abs(published))
        limit = self.value * abs(published) if self.relative else self.value
        return abs(predicted - published) <= limit + slack

    def __str__(self):
        return f"±{self.value * 100:g}%" if self.relative else f"±{self.value:g}"


def rel(fraction):
    return Tolerance(fraction, relative=True)


def absolute(amount):
    return Tolerance(amount, relative=False)


@dataclass(frozen=True)
class PageEntry:
    """How the "model vs published runs" page shows a row (catalog keys under
    ``validation.``); rows without one are printed and tested, not shown."""

    group: str            # validation.groups.<group>
    source: str           # citation text (paper id + table), shown as is
    url: str
    quantity: str         # validation.quantities.<quantity>
    unit: str             # validation.units.<unit>
    note: str = ""        # validation.notes.<note>, may be empty
    label: dict = field(default_factory=dict)   # values for the quantity label
    note_text: dict = None                       # {en, zh} note from a scenario file
    variants: dict = field(default_factory=dict)  # error (percent) of the row re-run with a group's variant settings


@dataclass(frozen=True)
class Row:
    """One published figure and the lab's value for it."""

    fact: str             # where the figure comes from: a published.yaml fact id, an end-to-end group id or a scenario id
    what: str             # the quantity in words (make validation)
    predicted: float
    published: float
    tolerance: Tolerance
    kind: str             # formula | calibrated | prediction | held_out
    page: PageEntry = None
    megatron: bool = False    # a Megatron-style end-to-end run (the summary's Megatron line)
    modern: bool = False      # an end-to-end throughput on today's stacks (with kind prediction: the modern line)

    @property
    def error(self):
        return error_percent(self.predicted, self.published)

    def within(self):
        return self.tolerance.allows(self.predicted, self.published)


def summary(rows):
    """Mean |error| (percent) and row count per summary line; ``misses``:
    out-of-sample rows (predictions and held-out rows) beyond MISS_PERCENT, out of all of them."""
    out = {}
    for line in SUMMARY_LINES:
        chosen = [abs(r.error) for r in rows
                  if line == "all" or r.kind == line or (line == "megatron" and r.megatron)
                  or (line == "modern" and r.modern and r.kind == "prediction")]
        out[line] = (sum(chosen) / len(chosen), len(chosen)) if chosen else (0.0, 0)
    predictions = [r for r in rows if r.kind in OUT_OF_SAMPLE]
    out["misses"] = (len([r for r in predictions if abs(r.error) > MISS_PERCENT]), len(predictions))
    return out
