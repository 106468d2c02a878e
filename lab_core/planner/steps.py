"""Work in steps: a long computation written as a generator that yields
between units of work and returns its result, so a caller can run it a slice
at a time (the browser's worker refines a plan between the reader's moves and
drops it when the reader moves again) or all at once (finish).

A steps generator yields None only; its result is the generator's return value.
"""


def finish(steps):
    """Run a steps generator to its end and return its result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
