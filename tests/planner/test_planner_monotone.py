"""The best plan never gets worse when the hardware or the software gets better.

A change that can only shorten or hold every plan's step (a faster GPU that outclasses
the old one, a faster fabric, an overlap turned on) or raise its goodput (fewer failures,
faster checkpoint storage and loaders) must never lower the search's best score: each old
plan is still there, at least as good. A fall means evaluate() made some plan worse, or the
search's pruning lost the best one. The plan-level form of these checks lives in
tests/model (test_gpu_dominance.py, test_grad_reduce_overlap.py); this one holds the
search to them over 40 random workloads (dense and MoE, long sequences, every stack)."""
import dataclasses
import random

import pytest

from lab_core import LabInputError
from lab_core.inputs import SPEC_BY_NAME
from lab_core.planner.search import search
from planner_random import random_workload

FASTEST_FABRIC = SPEC_BY_NAME["inter_node_gbps"].highest
# Every resource a step uses is at least as good on the second (peaks, HBM, NVLink).
UPGRADES = {"a100_80gb": "h100_80gb", "h100_80gb": "b200_192gb", "h800_80gb": "h200_141gb"}
BETTER = {
    "gpu": lambda w: {"gpu": UPGRADES[w.gpu]} if w.gpu in UPGRADES else None,
    "fabric x2": lambda w: {"inter_node_gbps": 2.0 * w.inter_node_gbps} if 2.0 * w.inter_node_gbps <= FASTEST_FABRIC
                           else None,
    "failures / 2": lambda w: {"gpu_failures_per_hour": w.gpu_failures_per_hour / 2.0},
    "checkpoint storage x2": lambda w: {"checkpoint_storage_gbps": 2.0 * w.checkpoint_storage_gbps},
    "loaders x2": lambda w: {"loader_tokens_per_s_per_node": 2.0 * w.loader_tokens_per_s_per_node},
}
OVERLAPS = ("tp_comm_overlap", "grad_reduce_overlap", "moe_comm_overlap")


def _cases(n, seed):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        workload, _ = random_workload(rng, [8, 16, 64], mtp_share=0.1, schedule_share=0.1, modules_share=0.1)
        for name, better in BETTER.items():
            fields = better(workload)
            if fields is not None:
                out.append(pytest.param(workload, fields, id=f"{i}-{name}"))
        for overlap in OVERLAPS:
            if overlap == "moe_comm_overlap" and not workload.experts:
                continue
            off = dataclasses.replace(workload, **{overlap: False})
            out.append(pytest.param(off, {overlap: True}, id=f"{i}-{overlap}"))
    return out


def _best(workload):
    try:
        return search(workload).best
    except LabInputError:
        return None


@pytest.mark.parametrize("workload,better", _cases(40, 2026))
def test_a_better_setting_never_lowers_the_best_plans_score(workload, better):
    before = _best(workload)
    if before is None:
        return
    after = _best(dataclasses.replace(workload, **better))
    assert after is not None
    assert after.score >= before.score * (1.0 - 1e-9), (better, before.parallelism, after.parallelism)
