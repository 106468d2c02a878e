"""A plan that recomputes fully recomputes only the fewest layers of each chunk that fit
(planner/trim.py), unless the reader pins the count (recompute_layers)."""
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from lab_core import Workload, evaluate
from lab_core.context import context_for
from lab_core.errors import LabInputError
from lab_core.parallelism import check_layout
from lab_core.partial_recompute import largest_chunk
from lab_core.planner import recommend
from lab_core.planner.assumptions import MEMORY_SAFETY_MARGIN
from lab_core.planner.search import search

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Workloads whose searched plan recomputes fully and fits (long sequences, large models on few GPUs);
# the last two of bench/planner_cases.py's need every layer recomputed.
FULL_RECOMPUTE = [
    dict(params=70e9, gpus=64, global_batch_tokens=4 * 2 ** 20, seq_len=32768, gpu="h100_80gb"),
    dict(params=42e9, gpus=61, global_batch_tokens=262144, seq_len=65536, inter_node_gbps=316.0,
         checkpoint_interval_min=3.63, gpu="h100_80gb"),
    dict(params=2.97e9, gpus=14, global_batch_tokens=4194304, seq_len=32768, inter_node_gbps=1810.0,
         checkpoint_interval_min=13.5),
    dict(params=748e9, gpus=751, global_batch_tokens=33554432, seq_len=65536, inter_node_gbps=43.4,
         checkpoint_interval_min=30.7),
    dict(params=2.04e9, gpus=13, global_batch_tokens=2097152, seq_len=65536, inter_node_gbps=332.0,
         checkpoint_interval_min=2.65, gpu="h100_80gb"),
]


def _usable(workload):
    return context_for(workload).device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)


def _searched(workload):
    """The search's own plan on the GPUs recommend() uses, and that Workload."""
    used = replace(workload, gpus=recommend(workload).gpus_used)
    return search(used).chosen.parallelism, used


def _chunk(workload, par):
    layout = check_layout(workload, par)
    return largest_chunk(layout.first_layers, layout.middle_layers, layout.last_layers, par.interleave)


@pytest.mark.parametrize("kw", FULL_RECOMPUTE)
def test_a_fully_recomputing_plan_keeps_the_fewest_layers_that_fit(kw):
    searched, w = _searched(Workload(**kw))
    assert searched.recompute == "full" and searched.recompute_layers == 0
    plan = recommend(w)
    par, usable = plan.parallelism, _usable(w)
    chunk = _chunk(w, searched)
    assert replace(par, recompute_layers=0) == searched
    assert plan.fits and plan.report.memory_bytes <= usable
    if par.recompute_layers == 0:
        # Every layer is needed: one fewer does not fit.
        assert evaluate(w, replace(searched, recompute_layers=chunk - 1)).memory_bytes > usable
        return
    assert 1 <= par.recompute_layers < chunk
    assert plan.report.step_s < evaluate(w, searched).step_s
    if par.recompute_layers > 1:
        assert evaluate(w, replace(par, recompute_layers=par.recompute_layers - 1)).memory_bytes > usable


def test_the_trim_keeps_layers_where_memory_allows():
    """The first three keep some layers whole; the last two need every layer recomputed."""
    trimmed = [recommend(Workload(**kw)).parallelism.recompute_layers for kw in FULL_RECOMPUTE]
    assert [n > 0 for n in trimmed] == [True, True, True, False, False], trimmed


def test_plans_that_do_not_recompute_fully_are_left_alone():
    w = Workload(params=175e9, gpus=1024, global_batch_tokens=1536 * 2048, seq_len=2048)
    plan = recommend(w)
    assert plan.parallelism.recompute != "full" and plan.parallelism.recompute_layers == 0


def test_a_pinned_zero_keeps_every_layer_recomputed():
    searched, w = _searched(Workload(**FULL_RECOMPUTE[0]))
    plan = recommend(w, pins={"recompute_layers": 0})
    assert plan.parallelism == searched
    assert plan.pins == {"recompute_layers": 0}


def test_a_pinned_count_is_the_plans_own_and_pins_full_recompute():
    w = Workload(**FULL_RECOMPUTE[0])
    plan = recommend(w, pins={"recompute_layers": 2})
    assert plan.parallelism.recompute == "full" and plan.parallelism.recompute_layers == 2
    assert plan.pins == {"recompute": "full", "recompute_layers": 2}
    report = evaluate(w, plan.parallelism)
    assert plan.report.step_s == report.step_s
    # Fewer layers than fit: the plan says it does not fit, with the pinned count.
    assert not plan.fits or plan.report.memory_bytes <= _usable(w)


def test_where_nothing_fits_the_closest_plan_keeps_the_pinned_count():
    """Nothing fits even with every layer recomputed: the closest plan shown is the reader's, with
    their pinned count, not the search's every-layer plan (a random sweep of pins found the plan
    and its pins disagreeing, 2026-12); its memory is the pinned count's."""
    w = Workload(params=88.2e9, gpus=8, seq_len=2048, gpu="b200_192gb", global_batch_tokens=2097152)
    every = recommend(w, pins={"tp": 1, "zero": 1})
    pinned = recommend(w, pins={"tp": 1, "zero": 1, "recompute_layers": 1})
    assert not every.fits and not pinned.fits and every.parallelism.recompute_layers == 0
    assert pinned.parallelism == replace(every.parallelism, recompute_layers=1)
    assert pinned.pins["recompute_layers"] == 1
    assert pinned.no_fit["memory_bytes"] == evaluate(w, pinned.parallelism).memory_bytes > every.no_fit["memory_bytes"]


def test_pinned_counts_that_cannot_be_name_what_can():
    w = Workload(**dict(FULL_RECOMPUTE[0], params=70e9, layers=80, hidden=8192, heads=64, kv_heads=8,
                        ffn_hidden=43008, vocab=128256))
    with pytest.raises(LabInputError) as err:
        recommend(w, pins={"recompute_layers": 3, "recompute": "selective"})
    assert err.value.field == "recompute_layers" and err.value.allowed == "0"
    with pytest.raises(LabInputError) as err:
        recommend(w, pins={"recompute_layers": 81})
    assert err.value.field == "recompute_layers" and "80" in err.value.allowed
    # More than the chosen layout's chunk: the error names the chunk.
    with pytest.raises(LabInputError) as err:
        recommend(w, pins={"recompute_layers": 80, "pp": 4, "interleave": 1})
    assert err.value.field == "recompute_layers" and err.value.allowed == "0 to 20"
    with pytest.raises(LabInputError) as err:
        recommend(w, pins={"recompute_layers": "two"})
    assert err.value.field == "recompute_layers" and err.value.reason == "not_a_number"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_decision_says_how_many_layers_and_what_every_layer_would_cost(lang):
    from labsite.catalog import load_catalogs
    from lab_view.view import decision_items
    catalog = load_catalogs()[lang]
    w = Workload(**FULL_RECOMPUTE[0])
    plan = recommend(w).to_dict()
    n, chunk = plan["parallelism"]["recompute_layers"], None
    decision = next(d for d in plan["decisions"] if d["id"] == "activation_memory")
    assert decision["option"] == decision["reason"] == "partial_recompute"
    chunk = decision["numbers"]["chunk_layers"]
    assert decision["numbers"]["full_recompute_step_s"] > plan["report"]["time"]["step_s"]
    item = next(i for i in decision_items(plan, catalog) if i["id"] == "activation_memory")
    assert f"{n}" in item["choice"] and f"{chunk}" in item["choice"]
    assert "--recompute-method block" in item["why"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_pinned_count_too_small_to_fit_says_how_many_would(lang):
    """The search's plan fits with every layer recomputed; pinned to fewer layers than fit it overflows,
    and the answer names the fewest that fit on that layout (the unpinned plan's own count)."""
    w = Workload(**FULL_RECOMPUTE[1])
    fewest = recommend(w).parallelism.recompute_layers
    assert fewest > 1
    plan = recommend(w, pins={"recompute_layers": 1})
    assert not plan.fits and plan.parallelism.recompute_layers == 1
    assert plan.no_fit["fewest_recompute_layers"] == fewest
    assert plan.no_fit["overflow_bytes"] > 0
    kw = FULL_RECOMPUTE[1]
    out = subprocess.run([sys.executable, "-m", "lab_core", "plan", "--params", str(kw["params"]), "--gpus",
                          str(kw["gpus"]), "--gpu", kw["gpu"], "--seq-len", str(kw["seq_len"]),
                          "--global-batch-tokens", str(kw["global_batch_tokens"]), "--inter-node-gbps",
                          str(kw["inter_node_gbps"]), "--checkpoint-interval-min", str(kw["checkpoint_interval_min"]),
                          "--pin", "recompute_layers=1", "--lang", lang], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "recompute" in line.lower() or "重算" in line)
    assert f"{fewest}" in line, out.stdout
