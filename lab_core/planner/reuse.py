"""What one recommend() call can reuse from the ones before it (the lab calls
it on every slider move, and readers move back and forth).

- Plans by workload and pins: the same inputs give the same Plan (recommend
  is deterministic), so a revisited state is answered from the cache.
- Searches by everything but the checkpoint interval: the interval changes
  only the failure model's goodput, one factor shared by every plan
  (search.Candidate.score = tokens/s x goodput), so the ranking, the chosen
  plan, the best plan of each shape and the closest plan stay the same; only
  their failure figures change (report.refailed).
- The smallest GPU count that fits, by everything but the GPU count, the
  inter-node bandwidth and the checkpoint interval: it compares memory floors
  (nofit.smallest_fitting), which none of those change, so dragging the GPU
  slider over counts where nothing fits asks it once.
The caches keep the most recent entries (REUSE_KEPT).
"""
from ..records import record_to_dict
from ..report import refailed
from .search import Candidate, SearchResult

# Entries each cache keeps (an LRU): a few hundred slider positions.
REUSE_KEPT = 256


class _Recent:
    """A small least-recently-used map."""

    __slots__ = ("items", "kept")

    def __init__(self, kept):
        self.items = {}
        self.kept = kept

    def get(self, key):
        value = self.items.pop(key, None)
        if value is not None:
            self.items[key] = value
        return value

    def put(self, key, value):
        self.items.pop(key, None)
        if len(self.items) >= self.kept:
            del self.items[next(iter(self.items))]
        self.items[key] = value


PLANS = _Recent(REUSE_KEPT)
SEARCHES = _Recent(REUSE_KEPT)
SMALLEST_FITTING = _Recent(REUSE_KEPT)

# Inputs that change no memory floor (see SMALLEST_FITTING above).
_NOT_MEMORY = ("gpus", "inter_node_gbps", "checkpoint_interval_min")


def clear():
    """Forget every reused plan and search (benchmarks time fresh searches)."""
    PLANS.items.clear()
    SEARCHES.items.clear()
    SMALLEST_FITTING.items.clear()


def known_smallest_fitting(workload, pins):
    """(found,) if smallest_fitting_steps ran for these memory-relevant inputs, else None."""
    return SMALLEST_FITTING.get(workload_key(workload, pins, _NOT_MEMORY))


def smallest_fitting_steps(workload, pins, steps):
    """The result of `steps` (nofit.smallest_fitting_steps for `workload` and
    `pins`), run once per memory-relevant inputs; a steps generator itself."""
    key = workload_key(workload, pins, _NOT_MEMORY)
    found = SMALLEST_FITTING.get(key)
    if found is None:
        result = yield from steps()
        found = (result,)  # a tuple, so that "nothing fits anywhere" (None) is remembered too
        SMALLEST_FITTING.put(key, found)
    return found[0]


def workload_key(workload, pins, without=()):
    """A hashable key of a workload's fields (less `without`) and the pins (a dict)."""
    fields = record_to_dict(workload)  # its own values: hashable (to_dict's are JSON's)
    return (tuple(sorted((k, v) for k, v in fields.items() if k not in without)),
            None if not pins else tuple(sorted((k, repr(v)) for k, v in pins.items())))


def search_key(workload, pins):
    return workload_key(workload, pins, ("checkpoint_interval_min",))


def retarget(result, workload):
    """`result` (a SearchResult of the same workload but its checkpoint
    interval) for `workload`: the same plans, with its failure figures."""
    from ..context import context_for
    from .assumptions import MEMORY_SAFETY_MARGIN

    ctx = context_for(workload)
    usable = ctx.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
    goodput = ctx.failures.goodput
    fresh = {}

    def again(cand):
        if cand is None:
            return None
        found = fresh.get(cand.parallelism)
        if found is None:
            found = fresh[cand.parallelism] = Candidate(cand.parallelism, refailed(cand.report, ctx),
                                                        goodput, usable, 0.0)
            # The shape is the search's (it depends on memory only).
            found.stage = cand.stage
        return found

    out = SearchResult()
    out.workload = workload
    out.gpus_used = result.gpus_used
    out.usable_bytes = result.usable_bytes
    out.layouts = result.layouts
    out.chosen = again(result.chosen)
    out.best = again(result.best)
    out.closest = again(result.closest)
    out.stage_best = {stage: again(cand) for stage, cand in result.stage_best.items()}
    out.evaluated = 0  # nothing is evaluated again (report.refailed)
    out.considered = 0
    out.complete = True
    return out
