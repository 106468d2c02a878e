"""Middle pipeline stages that hold some of a mixture-of-experts model's leading dense layers
(gpu_memory.stages). Until 2026-12 only the second stage was costed as "the" middle stage; when
the dense layers spill past the first stage (an uneven split with a short first stage) that is
the lightest middle stage in time, and the lab put a layout at 112% MFU (found by a random sweep
of layouts: 44 layers on 16 stages of 1 / 3 x 14 / 1, three dense layers)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab_core import Parallelism, Workload, evaluate
from lab_core.gpu_memory import stages
from lab_core.partial_recompute import model_recomputed_layers


def _layer_list(pp, first, middle, last, dense):
    """Each stage's (dense, MoE) layers, stage by stage."""
    sizes = [first] + [middle] * (pp - 2) + [last]
    out, start = [], 0
    for size in sizes:
        held = max(0, min(dense - start, size))
        out.append((held, size - held))
        start += size
    return out


@settings(max_examples=200, deadline=None)
@given(pp=st.integers(3, 32), first=st.integers(1, 6), middle=st.integers(1, 6), last=st.integers(1, 6),
       dense_share=st.floats(0.0, 0.99))
def test_the_stage_kinds_cover_every_stage_and_the_heaviest_middle_one(pp, first, middle, last, dense_share):
    total = first + (pp - 2) * middle + last
    dense = int(dense_share * total)
    kinds = stages(pp, first, middle, last, dense)
    assert sum(k.copies for k in kinds) == pp
    real = _layer_list(pp, first, middle, last, dense)
    # Every kind is some stage's layers, and the stage with the most expert layers among the
    # middle ones is a kind (the heaviest in time when expert layers are).
    middles = [k for k in kinds if k.kind == "middle"]
    assert all((k.dense, k.moe) in real[1:-1] for k in middles)
    assert max(k.moe for k in middles) == max(moe for _, moe in real[1:-1])
    # Copies add up to the model's layers of each kind.
    assert sum(k.copies * k.dense for k in kinds) == dense
    assert sum(k.copies * k.moe for k in kinds) == total - dense


def test_a_dense_model_keeps_one_middle_kind():
    assert [(k.kind, k.copies) for k in stages(16, 1, 3, 1)] == [("first", 1), ("middle", 14), ("last", 1)]


def test_a_short_first_stage_costs_the_middle_stages_without_dense_layers():
    def step(layers, first):
        w = Workload(params=144e9, layers=layers, hidden=5120, gpus=128, global_batch_tokens=128 * 732, seq_len=732,
                     experts=16, experts_per_token=8, dense_layers=3)
        par = Parallelism(tp=8, pp=16, dp=1, ep=8, recompute="selective", sequence_parallel=True,
                          first_stage_layers=first, last_stage_layers=first)
        return evaluate(w, par)
    even, uneven = step(48, 0), step(44, 1)  # both: middle stages of three expert layers
    assert uneven.bottleneck_stage == "middle" and uneven.mfu_causal < 1.0
    assert uneven.forward_s == pytest.approx(even.forward_s, rel=0.05)


def test_partial_recompute_counts_each_run_of_middle_stages():
    par = Parallelism(tp=1, pp=16, dp=1, recompute="full", recompute_layers=1, first_stage_layers=1,
                      last_stage_layers=1)
    kinds = stages(16, 1, 3, 1, 3)
    # One layer of each stage: the first's dense one, the second's first (dense), then 13 expert ones and the last's.
    assert model_recomputed_layers(kinds, par) == (2, 14)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), log_params=st.floats(min_value=23.0, max_value=27.0), experts=st.sampled_from([8, 16, 64]),
       per_token=st.sampled_from([1, 2, 8]), dense_layers=st.integers(0, 4),
       gpus=st.sampled_from([16, 32, 64, 128]), seq_exp=st.integers(9, 13))
def test_no_layout_of_the_planners_space_passes_peak(data, log_params, experts, per_token, dense_layers, gpus,
                                                      seq_exp):
    """Over the layouts the planner weighs (uneven splits included), a mixture of experts with
    leading dense layers never computes faster than the GPU's peak, counted as its kernels run."""
    from lab_core import LabInputError
    from lab_core.planner.space import space_for
    import math
    seq = 2 ** seq_exp
    try:
        w = Workload(params=math.exp(log_params), experts=experts, experts_per_token=min(per_token, experts),
                     dense_layers=dense_layers, gpus=gpus, seq_len=seq, global_batch_tokens=256 * seq)
    except LabInputError:
        return
    grids = space_for(w).layouts(gpus)
    if not grids:
        return
    g = data.draw(st.sampled_from(grids))
    par = Parallelism(tp=g.tp, cp=g.cp, pp=g.pp, dp=g.dp, ep=g.ep, first_stage_layers=g.first,
                      last_stage_layers=g.last, recompute=data.draw(st.sampled_from(["none", "selective", "full"])),
                      sequence_parallel=g.tp > 1)
    try:
        report = evaluate(w, par)
    except LabInputError:
        return
    assert 0.0 < report.mfu_causal < 1.0
