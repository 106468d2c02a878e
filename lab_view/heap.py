"""The worker's cycle collector, kept out of a slider move's answer.

CPython's cycle collector walks the container objects it tracks; a pass over
the old objects visits all of them. In the lab's worker most of those are made
at start and live as long as the worker: the standard library, lab_core and
lab_view, the catalogs and the session's tables (about 24,000 objects in
Pyodide 314). Measured over the bench's 432 slider moves (864 requests) in
Pyodide under Node: with every fitting plan of each kept search held, the
collector paused a request for up to 55-76 ms (a quick answer for up to 21 ms;
one frame is 16.7 ms, issue 19); with kept searches holding only what
recommend() reads, up to 23-29 ms; with the start-up objects moved into the
permanent generation as well (gc.freeze, Python 3.7+), up to 5-7 ms. The
price: more, shorter passes, about 170 ms of collector time over the run
instead of about 95. In the browser bench's 108 moves the two settings were
within run-to-run noise (slider -> answer p95 13.5-15.7 ms either way).

Answers make no reference cycles (tests/view/test_heap.py checks it), so
reference counting frees all they drop and the collector's automatic passes
only cost time: passes over the objects a search keeps while it runs, 2-4 ms
for the young generation and 12 ms for the old one in CPython, fell inside
first answers and refine slices (CPython replay of the bench's 180 moves twice:
first answer max 11.9 -> 6 ms, longest refine slice 16 -> 4-8 ms without them).
The worker therefore turns them off (collect_only_when_idle) and runs one pass
itself once no request has come for a while (collect_idle), which also frees
the few cycles the standard library makes (json.dumps with indent, used by the
launch configurations' JSON). A cycle whose objects were alive at a pass, so
frozen by it, would be kept for the worker's lifetime: the no-cycles test is
what keeps that from happening.
"""
import gc


def freeze_startup_objects():
    """Collect what start-up left over, then freeze every object still alive:
    the collector no longer walks them (reference counting still frees any
    that are dropped). Called once by the worker after the Session is made."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def collect_only_when_idle():
    """No automatic collector passes from now on: the worker calls collect_idle()
    when it has nothing to do."""
    gc.disable()


def collect_idle():
    """One collector pass, then everything still alive is frozen, so the next pass
    walks only what came after (CPython replay: median 0.07 ms, max 3 ms).
    Returns the number of unreachable objects found."""
    found = gc.collect()
    gc.freeze()
    return found
