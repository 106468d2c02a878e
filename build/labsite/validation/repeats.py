"""Runs published more than once: the same workload and layout (every setting the
lab evaluates: model shape, GPUs, network, batch, precision, stack options and
the plan) in two releases of one framework's table or in two sources. Their
published figures disagree with each other; how much is a floor under what any
one set of constants can do against all of them, so the validation page says it.
Memory readings are left out (one run's two memory columns are not two runs)."""
from dataclasses import dataclass
from statistics import median

from lab_core.records import record_to_dict

from .runs import MEMORY_METRICS


@dataclass
class RepeatedRun:
    """One workload published `len(runs)` times."""
    runs: list

    @property
    def low(self):
        return min(run.published for run in self.runs)

    @property
    def high(self):
        return max(run.published for run in self.runs)

    @property
    def spread_percent(self):
        """How much the highest figure is above the lowest, in percent of the lowest."""
        return (self.high / self.low - 1.0) * 100.0

    @property
    def spec(self):
        return self.runs[0].spec

    @property
    def groups(self):
        """The groups (end_to_end.yaml ids) that publish it, in file order, each once."""
        return list(dict.fromkeys(run.group["id"] for run in self.runs))


def _run_key(run):
    """What makes two rows the same run: the Workload and Parallelism the lab evaluates
    (defaults filled in, so a row that spells one out matches one that leaves it), and the
    metric, so only like figures compare. The model's name and the source are not in it."""
    return (tuple(record_to_dict(run.workload()).items()), tuple(run.parallelism().to_dict().items()),
            run.group["metric"])


def repeated_runs(runs):
    """[RepeatedRun] of the runs whose workload and layout appear more than once,
    largest spread first (then in file order)."""
    by_key = {}
    for run in runs:
        if run.group["metric"] not in MEMORY_METRICS:
            by_key.setdefault(_run_key(run), []).append(run)
    repeats = [RepeatedRun(same) for same in by_key.values() if len(same) > 1]
    return sorted(repeats, key=lambda repeat: -repeat.spread_percent)


def spread_summary(repeats):
    """(median, largest) spread in percent over the repeated runs; None when there are none."""
    if not repeats:
        return None
    spreads = [repeat.spread_percent for repeat in repeats]
    return median(spreads), max(spreads)
