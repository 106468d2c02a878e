"""lab_view.warm: the worker runs the reader's likely next moves ahead, once,
without changing any answer the reader then gets."""
import json

from lab_view import Session
from labsite.catalog import load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config


def _session():
    session = Session(session_config(load_lab_layout(), load_catalogs()["en"], {"rules_short": [], "rules_href": ""}))
    session.handle(json.dumps({"inputs": default_inputs()}))
    return session


def _run(job):
    slices = 0
    while job.step(2) is None:
        slices += 1
        assert slices < 10_000
    return slices


def _moves():
    base = default_inputs()
    return [{"inputs": dict(base, gpus=base["gpus"] * 2)}, {"inputs": dict(base, params=base["params"] * 2)},
            {"inputs": dict(base, seq_len=base["seq_len"] * 2)}]


def test_the_moves_run_in_slices_and_leave_the_sessions_state_as_it_was():
    session = _session()
    before = (session.previous, session.shown, dict(session.plans))
    job = session.warm(json.dumps(_moves()))
    assert _run(job) >= 1
    assert job.ran == 3
    assert (session.previous, session.shown, dict(session.plans)) == before


def test_the_next_answers_are_those_of_a_session_that_did_not_warm_up():
    warmed, plain = _session(), _session()
    _run(warmed.warm(json.dumps(_moves())))
    for move in _moves() + [{"inputs": dict(default_inputs(), gpus=default_inputs()["gpus"] * 4)}]:
        assert json.loads(warmed.handle(json.dumps(move))) == json.loads(plain.handle(json.dumps(move)))


def test_bad_requests_are_skipped_not_raised():
    session = _session()
    job = session.warm(json.dumps([{"inputs": {"gpus": -3}}, "not a request", {"inputs": {"params": "x"}}]))
    _run(job)
    assert job.ran == 2
    assert session.warm("not json").step(2) is True
