"""lab_view.heap: the worker freezes what exists once its session is ready."""
import gc
import json

from lab_view import Session, collect_idle, collect_only_when_idle, freeze_startup_objects
from labsite.catalog import load_catalogs
from labsite.labpage import load_lab_layout, session_config


def _session():
    return Session(session_config(load_lab_layout(), load_catalogs()["en"], {"rules_short": [], "rules_href": ""}))


def test_freezing_moves_the_live_objects_out_of_the_collectors_passes():
    session = _session()
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


# Moves of every kind a reader makes: dense, mixture of experts, long context, one that
# fits nothing, a bad typed value, a bad pin, a comparison, and the open panels' extras.
_DENSE = {"params": 70e9, "gpus": 512, "seq_len": 8192, "global_batch_tokens": 4194304}
_MOE = {"params": 671e9, "gpus": 2048, "experts": 256, "experts_per_token": 8, "expert_ffn_hidden": 2048}
_LONG = {"params": 405e9, "gpus": 16384, "seq_len": 131072, "global_batch_tokens": 16777216}
_REQUESTS = [
    {"inputs": _DENSE, "quick": True}, {"inputs": _DENSE},
    {"inputs": _MOE, "quick": True}, {"inputs": _MOE},
    {"inputs": _LONG, "quick": True}, {"inputs": _LONG},
    {"inputs": {"params": 2e12, "gpus": 1}},
    {"inputs": _DENSE, "typed": {"params": "lots"}},
    {"inputs": _DENSE, "pins": {"tp": 3}},
    {"inputs": _LONG, "compare": {"inputs": _DENSE, "pins": {}}},
    {"kind": "extras", "state": {"inputs": _DENSE, "pins": {"tp": 8}}, "units": "gib", "curves": True,
     "export": "megatron", "pins": True},
]


def test_answers_leave_no_reference_cycles():
    """What the worker's collector setting rests on (heap.collect_only_when_idle):
    reference counting alone frees everything an answer drops."""
    session = _session()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for request in _REQUESTS:
            assert json.loads(session.handle(json.dumps(request)))["kind"] in ("evaluate", "extras")
        gc.collect()
        left = sorted({type(o).__name__ for o in gc.garbage})
        assert not gc.garbage, f"{len(gc.garbage)} objects in reference cycles: {left}"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_the_idle_pass_frees_the_cycles_left_and_freezes_the_rest():
    session = _session()
    freeze_startup_objects()
    collect_only_when_idle()
    try:
        assert not gc.isenabled()
        frozen = gc.get_freeze_count()
        # The DeepSpeed configuration is JSON with indent: the standard library's
        # pure-Python encoder leaves its closures in a cycle on each call.
        extras = {"kind": "extras", "state": {"inputs": _DENSE, "pins": {}}, "export": "deepspeed"}
        assert json.loads(session.handle(json.dumps(extras)))["export"]
        assert collect_idle() > 0
        assert gc.get_freeze_count() > frozen
        assert collect_idle() == 0 and not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
