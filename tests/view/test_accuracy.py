"""The lab's sentence on how far off to expect its figures (lab_view.accuracy): which kind
of run it quotes, and what it says in both languages."""
import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from lab_view.accuracy import LEANING, accuracy_text, run_kind

_KINDS = [
    {"stack": "modern", "moe": False, "architecture": "hopper", "runs": 35, "median": 0.086, "bound": 0.145,
     "bias": -0.052},
    {"stack": "modern", "moe": None, "architecture": None, "runs": 54, "median": 0.09, "bound": 0.18, "bias": 0.031},
    {"stack": None, "moe": None, "architecture": None, "runs": 126, "median": 0.051, "bound": 0.156, "bias": 0.0},
]


def _workload(**changes):
    return dict({"stack": "modern", "gpu": "h100_80gb", "experts": 0}, **changes)


@pytest.mark.parametrize("changes, runs", [
    ({}, 35),                                   # the most specific kind that matches
    ({"gpu": "h200_141gb"}, 35),                # same generation
    ({"gpu": "b200_192gb"}, 54),                # no Blackwell kind: the stack on any GPU
    ({"experts": 8}, 54),                       # a mixture of experts is not the dense kind
    ({"stack": "torch_native"}, 126),           # no kind of its stack: every run
])
def test_the_most_specific_matching_kind(changes, runs):
    assert run_kind(_KINDS, _workload(**changes))["runs"] == runs


def test_no_kind_matches():
    assert run_kind(_KINDS[:1], _workload(stack="torch_native")) is None


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_sentence(lang):
    catalog = dict(load_catalogs()[lang], run_kinds=_KINDS)
    texts = catalog["lab"]["accuracy"]
    pessimistic = accuracy_text(_workload(), catalog)
    assert "35" in pessimistic and "8.6%" in pessimistic and "14.5%" in pessimistic
    assert texts["stacks"]["modern"] in pessimistic and texts["architectures"]["hopper"] in pessimistic
    assert texts["slower"].format(bias="5.2%") in pessimistic
    optimistic = accuracy_text(_workload(experts=8), catalog)
    assert texts["faster"].format(bias="3.1%") in optimistic and texts["moe"] not in optimistic
    # A leaning below LEANING is not called one; no kind at all says so.
    neutral = accuracy_text(_workload(stack="torch_native"), catalog)
    assert texts["any_stack"] in neutral and texts["slower"].split("{")[0] not in neutral
    assert texts["faster"].split("{")[0] not in neutral
    assert accuracy_text(_workload(stack="torch_native"), dict(catalog, run_kinds=_KINDS[:1])) == texts["none"]


def test_a_leaning_just_below_the_threshold_is_not_mentioned():
    catalog = dict(load_catalogs()["en"], run_kinds=[dict(_KINDS[2], bias=-0.99 * LEANING)])
    assert "pessimistic" not in accuracy_text(_workload(), catalog)


def test_without_the_builds_list_there_is_nothing_to_quote():
    assert accuracy_text(_workload(), load_catalogs()["en"]) == ""
