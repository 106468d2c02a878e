"""How far the model's throughput was from published runs it was not fitted to, by kind of run.

The lab quotes it beside its own figures ("on 35 published runs like this one ... a median
of 8.6%"), and the "model vs published runs" page lists every kind. A kind of run is a
software stack, a dense or mixture-of-experts model and a GPU generation
(lab_core.hardware.GpuSpec.architecture); a kind with fewer than MIN_RUNS runs is not
quoted, and the lab falls back to the same stack and model kind on any GPU, then to the
stack alone, then to every run. Only out-of-sample speed rows count (kinds prediction and
held_out of content/validation/end_to_end.yaml): the calibrated rows were fitted and
would flatter the model, memory readings are a different quantity.
"""
import functools
import math
import statistics
from dataclasses import dataclass

from lab_view.accuracy import kind_key

from .runs import END_TO_END, MEMORY_METRICS, end_to_end_rows, end_to_end_runs
from .table import OUT_OF_SAMPLE

#: Fewer runs than this say too little about a kind to quote.
MIN_RUNS = 5
#: The share of a kind's runs the quoted bound covers ("nine in ten").
COVERED = 0.9


@dataclass(frozen=True)
class RunKind:
    """One kind of run and how far the model was from its published runs (errors as fractions)."""

    stack: str            # None: any stack
    moe: bool             # None: dense or mixture of experts
    architecture: str     # None: any GPU generation
    runs: int
    median: float         # median |error|
    bound: float          # the least |error| that at least COVERED of the runs are within
    bias: float           # median signed error (+: the model predicts faster than published)

    def to_dict(self):
        return {"stack": self.stack, "moe": self.moe, "architecture": self.architecture, "runs": self.runs,
                "median": self.median, "bound": self.bound, "bias": self.bias}


def kind_of(run):
    """(stack, moe, architecture) of an end-to-end run: lab_view.accuracy.kind_key of the workload
    the lab evaluates for it (its defaults where a row leaves a setting out)."""
    key = kind_key(run.workload().to_dict())
    return key["stack"], key["moe"], key["architecture"]


def _speed_error(run, row):
    """The row's error as a fraction, signed so + means the model predicts a faster run
    (a step time the model puts below the published one is a faster prediction)."""
    error = row.error / 100.0
    return -error if run.group["metric"] == "step_time_s" else error


def run_kinds(runs, rows):
    """Every kind with at least MIN_RUNS out-of-sample speed rows, most specific first
    (stack, model kind and GPU generation; then any GPU; then the stack alone; then every run),
    in a fixed order within each level. runs, rows: end_to_end_runs() and end_to_end_rows(runs)."""
    errors = [(kind_of(run), _speed_error(run, row)) for run, row in zip(runs, rows)
              if row.kind in OUT_OF_SAMPLE and run.group["metric"] not in MEMORY_METRICS]
    levels = (lambda k: k, lambda k: (k[0], k[1], None), lambda k: (k[0], None, None), lambda k: (None, None, None))
    out = []
    for level in levels:
        grouped = {}
        for kind, error in errors:
            grouped.setdefault(level(kind), []).append(error)
        for key in sorted(grouped, key=lambda k: tuple("" if part is None else str(part) for part in k)):
            signed = grouped[key]
            if len(signed) >= MIN_RUNS:
                out.append(_summarise(key, signed))
    return out


def _summarise(key, signed):
    sizes = sorted(abs(e) for e in signed)
    covered = sizes[math.ceil(COVERED * len(sizes)) - 1]
    return RunKind(key[0], key[1], key[2], len(sizes), statistics.median(sizes), covered, statistics.median(signed))



def quoted_run_kinds(path=END_TO_END):
    """run_kinds of the end-to-end runs file, computed once per version of the file
    (every lab page of a build, and the tests, ask for it)."""
    return _run_kinds_of(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=2)
def _run_kinds_of(path, _mtime_ns):
    runs = end_to_end_runs(path)
    return tuple(run_kinds(runs, end_to_end_rows(runs)))
