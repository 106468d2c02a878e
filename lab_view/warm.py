"""The reader's likely next moves, run once ahead while the worker is idle.

Measured in headless Chromium on 2 cores (issue 19): right after the page
loads, the first slider moves took 15-66 ms in the worker (answers on screen
in 20-70 ms) against about 3 ms once some ten moves had run, and waiting did
not warm it (8 s after load the first moves still took 14-44 ms): the browser
compiles the interpreter's WebAssembly for speed only once that code runs, and
the planner's tables for a new workload are built on its first request. So
once the first answer is on screen, the page hands the worker each slider's
positions 1, 2 and 4 stops away (lab.js) and the worker runs those requests as a move would (the
quick answer, then the full search), a slice at a time, and throws the answers
away; any request of the reader's drops the rest (worker.js). The session's
own state (the plan on screen, the last final answer's decisions and the
remembered plans) is put back after every call, so each answer the reader gets
is the one they would get without the warm-up.
"""
import json
import time


class WarmJob:
    """Requests as the page sends them (a JSON list of payloads), each run as a
    move: the quick answer, then the full request in steps."""

    def __init__(self, session, requests_json):
        self.session = session
        try:
            requests = json.loads(requests_json)
        except ValueError:
            requests = []
        self.requests = [r for r in requests if isinstance(r, dict)] if isinstance(requests, list) else []
        self.moves = (self._move(request) for request in self.requests)
        self.current = None
        self.ran = 0

    def _kept(self, call, *args):
        """call(*args) with the session's state put back afterwards."""
        s = self.session
        saved = (s.previous, s.shown, dict(s.plans))
        try:
            return call(*args)
        finally:
            s.previous, s.shown, s.plans = saved

    def _move(self, request):
        self._kept(self.session.handle, json.dumps(dict(request, quick=True)))
        yield
        job = self.session.start(json.dumps(request))
        while self._kept(job.step, 0) is None:
            yield

    def step(self, milliseconds):
        """Work for about `milliseconds`; True once every request has run, else None."""
        deadline = time.perf_counter() + milliseconds / 1000.0
        while True:
            if self.current is None:
                self.current = next(self.moves, None)
                if self.current is None:
                    return True
                self.ran += 1
            try:
                next(self.current)
            except StopIteration:
                self.current = None
            except Exception:  # noqa: BLE001 - a warm-up answer is thrown away; the reader's own request reports it
                self.current = None
            if time.perf_counter() >= deadline:
                return None
