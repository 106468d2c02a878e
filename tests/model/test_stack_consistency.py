"""The 2021 stack never hides traffic the modern stack exposes: for the same
plan, context-parallel exchange, expert all-to-all and ZeRO-3 traffic of the
2021 stack cost at least as much time as the modern stack's. (Before, the
2021 stack charged CP rings less than the modern one and gathered only a
mixture-of-experts layer's dense part under ZeRO-3, so the lab showed the
2021 stack faster on the 128K and MoE cards.)"""
import pytest

from lab_core import Workload, evaluate
from lab_core.context import context_for
from lab_core.gpu_memory import largest_layer_params
from lab_core.planner import recommend
from lab_core.sync import zero3_times
from labsite.scenarios import load_scenario

# Each card's plan under either stack, evaluated under both.
CARDS = ("llama3-405b-128k", "qwen3-235b-moe", "deepseek-v3")


def _workload(card, stack):
    """The card's workload on `stack` with that stack's own defaults: a card's tensor-parallel
    overlap setting (tp_comm_overlap) and recompute modules (Megatron-Core's) describe its run's
    software, which the comparison replaces."""
    fields = dict(load_scenario(card).workload, stack=stack)
    fields.pop("tp_comm_overlap", None)
    fields.pop("recompute_modules", None)
    return Workload(**fields)


def _cases():
    for card in CARDS:
        for planned in ("modern", "megatron_lm_2021"):
            yield card, planned


@pytest.mark.parametrize("card,planned", list(_cases()))
def test_the_2021_stack_exposes_at_least_what_the_modern_stack_does(card, planned):
    plan = recommend(_workload(card, planned)).parallelism
    modern, legacy = (evaluate(_workload(card, stack), plan).to_dict()["time"]
                      for stack in ("modern", "megatron_lm_2021"))
    for key in ("cp_comm_s", "ep_comm_s", "zero_comm_s"):
        assert legacy[key] >= modern[key] - 1e-12, key
    assert legacy["step_s"] >= modern["step_s"]


def test_the_2021_stack_exposes_the_whole_context_parallel_exchange():
    w = _workload("llama3-405b-128k", "megatron_lm_2021")
    t = evaluate(w, recommend(w).parallelism).to_dict()["time"]
    assert t["cp_comm_total_s"] > 0.0 and t["cp_comm_s"] == pytest.approx(t["cp_comm_total_s"])


def test_legacy_zero3_gathers_the_experts_a_gpu_holds():
    ctx = context_for(_workload("qwen3-235b-moe", "megatron_lm_2021"))
    dense = zero3_times(ctx, 1, 8, 32, 128)   # every expert on its own rank: the largest layer is the dense part
    whole = zero3_times(ctx, 1, 8, 32, 1)     # one rank holds every expert of the layer
    assert whole.layer_gather > 10 * dense.layer_gather
    assert largest_layer_params(ctx.shape, 1, 1) > 10 * ctx.shape.layer_params
