"""The pruned search finds what an exhaustive search over the whole space finds."""
import random

import pytest

from lab_core import Workload
from lab_core.planner.assumptions import TIE_TOLERANCE
from lab_core.planner.search import search, simplicity_key
from planner_brute import brute
from planner_random import random_workload_fields
from lab_core.planner.space import space_for


def _workloads(n, seed):
    """Dense workloads of the six sliders' kind."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        kw = dict(params=float("%.3g" % 10 ** rng.uniform(8.2, 12.2)),
                  gpus=rng.choice([1, 2, 4, 8, 16, 24, 32, 64, 96, 128, 256]),
                  global_batch_tokens=int(2 ** rng.uniform(16, 21)),
                  seq_len=rng.choice([512, 1024, 2048, 4096, 8192]),
                  inter_node_gbps=float("%.3g" % 10 ** rng.uniform(1.4, 3.5)),
                  flash_attention=rng.random() < 0.5,
                  gpu=rng.choice(["a100_80gb", "h100_80gb", "b200_192gb"]))
        w = Workload(**kw)
        if search(w).layouts:
            out.append(kw)
    return out


def _small_workloads(n, seed, gpus, sequences, accept, **draw):
    """n random workloads (planner_random's fields, `draw` its options) on a few GPUs with a batch
    of a few sequences (a choice of `sequences`), whose grids - at most 40, so the exhaustive
    search stays small - pass accept(grids)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        kw = random_workload_fields(rng, gpus, **draw)
        kw["global_batch_tokens"] = kw["seq_len"] * rng.choice(sequences)
        try:
            w = Workload(**kw)
        except Exception:  # noqa: BLE001 - an inconsistent draw: draw again
            continue
        grids = space_for(w).layouts(w.gpus)
        if grids and len(grids) <= 40 and accept(grids):
            out.append(kw)
    return out


def _new_dimension_workloads(n, seed):
    """Small workloads with context parallelism, experts, uneven splits, stacks and fp8."""
    return _small_workloads(n, seed, [2, 4, 8, 16, 32], [4, 8, 16],
                            lambda grids: any(g.cp > 1 or g.ep > 1 or g.first for g in grids),
                            moe_share=0.5, long_share=0.5, max_log_params=11.5)


def _schedule_workloads(n, seed):
    """Small workloads that all run DualPipe or DualPipeV, with a pipeline among their grids and
    batches of 8 to 32 sequences (a pipeline needs 2 pp micro-batches)."""
    return _small_workloads(n, seed, [4, 8, 16], [8, 16, 32], lambda grids: any(g.pp > 1 for g in grids),
                            moe_share=0.3, long_share=0.2, max_log_params=11.0, schedule_share=1.0)


def _module_workloads(n, seed):
    """Small workloads on the modern stack whose selective recompute is Megatron-Core's modules
    (selective then keeps less than none, and the search weighs it)."""
    return _small_workloads(n, seed, [2, 4, 8, 16], [4, 8, 16], lambda grids: True, moe_share=0.5, long_share=0.3,
                            max_log_params=11.5, modules_share=1.0)


# Found by a wider exhaustive comparison when the model had two overlap windows
# (ZeRO-3 with one micro-batch, where full recompute and sequence parallelism
# off were faster); kept now that one shared window rules that out.
REGRESSIONS = [
    dict(params=1174540115.8906226, gpus=96, global_batch_tokens=193080, seq_len=8192,
         inter_node_gbps=39.56477109385798, flash_attention=True, gpu="a100_80gb"),
    # Found by a random exhaustive comparison: without flash attention and dropout selective
    # recompute replayed the dropout's score tensors the forward never wrote and ran slower than
    # full recompute, which the search skips where selective fits (the optimum, ZeRO-3 with full
    # recompute, was 0.1% faster than the plan it found).
    dict(params=1040000000.0, gpus=8, inter_node_gbps=654.0, flash_attention=False, gpu="b200_192gb",
         stack="megatron_lm_2021", dropout=False, seq_len=32768, global_batch_tokens=1048576,
         grad_reduce_overlap=False),
]

NEW_DIMENSIONS = _new_dimension_workloads(16, 11)
# The bidirectional pipeline schedules, on grids with a pipeline.
SCHEDULES = _schedule_workloads(12, 13)
# Megatron-Core's recompute modules.
MODULES = _module_workloads(12, 19)
# Multi-token prediction: a heavier last stage, with pipelines among the grids.
MTP = _small_workloads(10, 29, [4, 8, 16], [8, 16], lambda grids: any(g.pp > 1 for g in grids), moe_share=0.5,
                       long_share=0.2, max_log_params=11.0, mtp_share=1.0)
# The gradient reduction waited for after the backward (Workload.grad_reduce_overlap off): the
# bounds assume it hides, so they stay below the model's figures; the search must still find the best.
GRAD_REDUCE_WAITED = [dict(kw, grad_reduce_overlap=False)
                      for kw in _small_workloads(10, 31, [8, 16, 32], [8, 16, 32], lambda grids: True, moe_share=0.3,
                                                 long_share=0.2, max_log_params=11.0)]


def test_new_dimension_workloads_cover_them():
    grids = [g for kw in NEW_DIMENSIONS for g in space_for(Workload(**kw)).layouts(kw["gpus"])]
    assert any(g.cp > 1 for g in grids) and any(g.ep > 1 for g in grids) and any(g.first for g in grids)
    assert {kw["stack"] for kw in NEW_DIMENSIONS} == {"modern", "torch_native", "megatron_lm_2021"}
    assert {kw["pipeline_schedule"] for kw in SCHEDULES} == {"dualpipe", "dualpipev"} and len(SCHEDULES) == 12
    modules = [Workload(**kw).recompute_modules for kw in MODULES]
    assert len(MODULES) == 12 and sum(m != ("core_attn",) for m in modules) >= 8
    assert {"layernorm", "moe_act", "moe", "mlp"} <= {name for m in modules for name in m}
    assert len(MTP) == 10 and all(kw["mtp_layers"] for kw in MTP) and any("experts" in kw for kw in MTP)


def test_the_module_workloads_recompute_selectively_where_it_wins():
    """Selective recompute of the modules is the exhaustive optimum of some of them: the comparison
    below tests the planner's handling of a selective that keeps less than none where it decides."""
    optima = []
    for kw in MODULES:
        fitting, _, _ = brute(Workload(**kw))
        if fitting:
            optima.append(max(fitting, key=lambda item: item[0])[1].recompute)
    assert "selective" in optima


def test_multi_token_prediction_optima_include_lighter_last_stages():
    """Some of the MTP workloads' optima are pipelined with a split that moves layers off the last
    stage (space.pipeline_splits' variants): the exhaustive comparison tests them where they decide."""
    best = [search(Workload(**kw)).best for kw in MTP]
    assert any(b is not None and b.parallelism.pp > 1 and b.parallelism.first_stage_layers > b.parallelism.last_stage_layers
               for b in best)


def test_the_bidirectional_schedules_search_pipelines_that_win():
    """Some of the schedule workloads' optima are pipelined: the exhaustive comparison
    below tests the schedules' bounds where they decide, not only plans without stages."""
    assert any(search(Workload(**kw)).best.parallelism.pp > 1 for kw in SCHEDULES)


def test_the_waited_reductions_change_some_optima():
    """Turning the overlap off moves some of those workloads' best plans (the comparison below
    then tests the search where the switch decides)."""
    moved = [search(Workload(**kw)).best.parallelism != search(Workload(**dict(kw, grad_reduce_overlap=True))).best.parallelism
             for kw in GRAD_REDUCE_WAITED if search(Workload(**kw)).best is not None]
    assert any(moved)


@pytest.mark.parametrize("kw", REGRESSIONS + _workloads(24, 7) + NEW_DIMENSIONS + SCHEDULES + MODULES + MTP
                         + GRAD_REDUCE_WAITED,
                         ids=lambda kw: "%.3g@%d" % (kw["params"], kw["gpus"]))
def test_pruned_search_matches_exhaustive(kw):
    w = Workload(**kw)
    result = search(w)
    fitting, _, _ = brute(w)
    if not fitting:
        assert result.chosen is None
        return
    best = max(g for g, _, _ in fitting)
    # Same optimum (the pruning never drops the best plan) ...
    assert result.best.score == pytest.approx(best, rel=1e-12)
    # ... and the same tie-break: no plan in the band is simpler than the chosen one.
    band = [par for g, par, _ in fitting if g >= best * (1.0 - TIE_TOLERANCE)]
    simplest = min(simplicity_key(par) for par in band)
    assert simplicity_key(result.chosen.parallelism) == simplest
    assert result.evaluated < len(fitting) or len(fitting) < 20
