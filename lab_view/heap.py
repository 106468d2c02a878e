"""The worker's cycle collector, kept out of a slider move's answer.

CPython's cycle collector walks the container objects it tracks; a pass over
the old objects visits all of them. In the lab's worker most of those are made
at start and live as long as the worker: the standard library, lab_core and
lab_view, the catalogs and the session's tables (about 24,000 objects in
Pyodide 314). Measured over the bench's 432 slider moves in Pyodide under
Node, the collector paused a request for up to 55-76 ms, and a quick answer
for up to 21 ms (issue 19: one frame is 16.7 ms). Moving the objects that
exist once the session is ready into the permanent generation (gc.freeze,
Python 3.7+) leaves the collector only what the moves make and the planner's
caches hold; its longest pause in the same run fell to about 7 ms.
"""
import gc


def freeze_startup_objects():
    """Collect what start-up left over, then freeze every object still alive:
    the collector no longer walks them (reference counting still frees any
    that are dropped). Called once by the worker after the Session is made."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
