"""lab_view.heap: the worker freezes what exists once its session is ready."""
import gc
import json

from lab_view import Session, freeze_startup_objects
from labsite.catalog import load_catalogs
from labsite.labpage import load_lab_layout, session_config


def test_freezing_moves_the_live_objects_out_of_the_collectors_passes():
    session = Session(session_config(load_lab_layout(), load_catalogs()["en"], {"rules_short": [], "rules_href": ""}))
    gc.unfreeze()
    gc.collect()
    tracked_before = len(gc.get_objects())
    try:
        frozen = freeze_startup_objects()
        assert frozen >= 0.9 * tracked_before
        # Frozen objects can still be freed by reference counting (a frame or
        # a cached value dropped right after the freeze), never added to.
        assert gc.get_freeze_count() <= frozen
        assert len(gc.get_objects()) <= 0.1 * tracked_before
        # Answers still come (reference counting frees what a request drops).
        answer = json.loads(session.handle(json.dumps({"inputs": {"params": 1.3e9, "gpus": 8}})))
        assert answer["ok"] is True
    finally:
        gc.unfreeze()
