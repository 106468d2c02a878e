"""The planner's bounds: memory is evaluate()'s figure exactly, and the step-time
bound (bounds.StepBound) never exceeds evaluate()'s step time, for plans with
context and expert parallelism, uneven pipeline splits, every stack and fp8, every
pipeline schedule, Megatron-Core's selective recompute modules and multi-token prediction."""
import dataclasses
import random

import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.planner import bounds, search
from lab_core.planner.bounds import SharedFloor, StepBound, plan_memory, shared_floor_applies, sync_floor
from lab_core.planner.space import Grid, space_for
from planner_random import random_plan, random_workload


def _plans(seed, n, schedule_share=0.0, modules_share=0.0, mtp_share=0.0):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        w, _ = random_workload(rng, [1, 8, 16, 64, 128, 512, 1024], schedule_share=schedule_share,
                               modules_share=modules_share, mtp_share=mtp_share)
        par = random_plan(rng, w)
        if par is not None:
            out.append((w, par))
    return out


# The bidirectional pipeline schedules (DualPipe, DualPipeV): their own plans, pipelined ones kept.
SCHEDULE_PLANS = [(w, par) for w, par in _plans(12, 400, schedule_share=1.0) if par.pp > 1][:120]
# Megatron-Core's recompute modules: their selective plans.
MODULE_PLANS = [(w, par) for w, par in _plans(19, 300, modules_share=1.0) if par.recompute == "selective"][:60]
# Multi-token prediction: the last stage's extra layers, output passes and projections; pipelined plans first.
MTP_PLANS = sorted(_plans(23, 200, mtp_share=1.0), key=lambda item: item[1].pp == 1)[:80]
# The gradient reduction waited for after the backward (Workload.grad_reduce_overlap off), data-parallel plans.
GRAD_WAITED_PLANS = [(dataclasses.replace(w, grad_reduce_overlap=False), par) for w, par in _plans(37, 200)
                     if par.dp > 1][:60]
PLANS = _plans(4, 300) + SCHEDULE_PLANS + MODULE_PLANS + MTP_PLANS + GRAD_WAITED_PLANS
# Plans whose grids have a shared floor (flash attention): 160 of 1F1B's and the bidirectional schedules'.
SHARED_PLANS = ([(w, par) for w, par in PLANS[:300] if shared_floor_applies(context_for(w))][:160]
                + [(w, par) for w, par in SCHEDULE_PLANS if shared_floor_applies(context_for(w))]
                + [(w, par) for w, par in MODULE_PLANS if shared_floor_applies(context_for(w))]
                + [(w, par) for w, par in MTP_PLANS if shared_floor_applies(context_for(w))]
                + [(w, par) for w, par in GRAD_WAITED_PLANS if shared_floor_applies(context_for(w))])


def test_random_plans_cover_the_new_dimensions():
    pars = [par for _, par in PLANS]
    assert any(p.cp > 1 for p in pars) and any(p.ep > 1 for p in pars)
    assert any(p.first_stage_layers for p in pars)
    assert {w.stack for w, _ in PLANS} == {"modern", "torch_native", "megatron_lm_2021"}
    assert any(w.precision == "fp8" for w, _ in PLANS)
    assert {w.pipeline_schedule for w, _ in PLANS} == {"1f1b", "dualpipe", "dualpipev"}
    assert len(SCHEDULE_PLANS) >= 60
    assert len(MTP_PLANS) == 80 and all(p.pp > 1 for _, p in MTP_PLANS)
    assert len(GRAD_WAITED_PLANS) == 60 and not any(w.grad_reduce_overlap for w, _ in GRAD_WAITED_PLANS)
    assert any(w.shape.experts is not None for w, _ in MTP_PLANS) and any(p.first_stage_layers for _, p in MTP_PLANS)


@pytest.mark.parametrize("w,par", PLANS)
def test_memory_is_exact_and_step_bound_never_exceeds_evaluate(w, par):
    wctx = context_for(w)
    grid = Grid.of(par)
    probe = evaluate(w, Parallelism(zero=1 if grid.shards else 0, sequence_parallel=par.tp > 1,
                                    **grid.parallelism_fields()))
    bound = StepBound(wctx, grid, probe)
    report = evaluate(w, par)
    memory = plan_memory(wctx, grid, par.zero, par.recompute, par.micro_batch, par.interleave,
                         par.sequence_parallel)
    assert memory == pytest.approx(report.memory_bytes, rel=1e-12)
    lower = bound.step(par.micro_batch, par.interleave, par.zero, par.recompute, par.sequence_parallel or par.tp == 1)
    assert lower <= report.step_s * (1 + 1e-12)
    every_zero = bound.step(par.micro_batch, par.interleave, None, par.recompute,
                            par.sequence_parallel or par.tp == 1)
    assert every_zero <= lower * (1 + 1e-12)
    # A row's floor before its bound (search._Layout): below every plan at this interleaving or less.
    assert bound.row_floor(par.micro_batch, par.interleave) <= every_zero


@pytest.mark.parametrize("w,par", SHARED_PLANS)
def test_shared_floor_never_exceeds_evaluate(w, par):
    """The floor built for another grid with the same tp, cp and ep (flash attention; dense,
    mixture-of-experts and mixed layers)."""
    wctx = context_for(w)
    grid = Grid.of(par)
    others = [g for g in space_for(w).layouts(w.gpus) if (g.tp, g.cp, g.ep) == (grid.tp, grid.cp, grid.ep)]
    reference = others[(par.micro_batch + par.interleave) % len(others)]
    shared = SharedFloor(wctx, reference)
    mode = "full" if par.recompute == "full" else "none"
    step = evaluate(w, par).step_s
    assert shared.floor(wctx, grid, par.micro_batch, mode) <= step * (1 + 1e-12)
    assert shared.least(wctx, grid, [(par.micro_batch, par.interleave)], mode) <= step * (1 + 1e-12)
    # Bounded with its own class of ZeRO stage (search._grid_floor) and its own recompute.
    row = [(par.micro_batch, par.interleave, par.recompute)]
    assert shared.least(wctx, grid, row, zero3=par.zero == 3) <= step * (1 + 1e-12)


@pytest.mark.parametrize("w,par", SHARED_PLANS)
def test_first_grid_floors_never_exceed_evaluate(w, par):
    """The floors a grid waits with before any memory search (search.py): the sketch (every
    rate at the whole batch's size, the least bubble, the least optimizer step and sync) below
    every plan of the grid; the floor at its largest size (its busy time there, the least
    bubble, full recompute when the leanest plan of the grid needs it, the same optimizer
    step and sync) below every plan of the grid that fits (the candidates), and in the second
    pass below every one that recomputes fully."""
    wctx = context_for(w)
    grid = Grid.of(par)
    run = search._Search(w, None)
    report = evaluate(w, par)
    choices = search.Choices(wctx, None)
    sizes = choices.micro_batches(wctx.batch_sequences // grid.dp)
    shared = SharedFloor(wctx, grid)
    assert search._sketch(wctx, grid, choices, shared, sizes) <= report.step_s * (1 + 1e-12)
    if par.recompute == "full":  # the second pass's sketch
        assert search._sketch(wctx, grid, choices, shared, sizes, "full") <= report.step_s * (1 + 1e-12)
    if report.memory_bytes > run.usable:
        return
    assert search._at_largest(run, grid, choices, shared, sizes) <= report.step_s * (1 + 1e-12)
    if par.recompute == "full":
        assert search._at_largest(run, grid, choices, shared, sizes, "full") <= report.step_s * (1 + 1e-12)


def test_first_grid_floor_counts_the_bubble_forced_recompute_and_sync():
    """The first floor is not the bare busy time: a deep pipeline over few sequences per replica
    pays its bubble, a grid whose leanest plan must recompute fully pays the replay, and one
    whose replicas each hold half of 405B parameters (TP 8, no pipeline) pays the contention
    of their gradient sync, half as much again as its busy time."""
    w = Workload(params=405e9, layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=79872,
                 vocab=128256, gpu="h100_80gb", gpus=2048, seq_len=32768, global_batch_tokens=4194304)
    deep = Grid(2, 1, 64, 16, 1, 1, 1)
    run, choices, sizes, shared = _first_floor_parts(w, deep)
    busy = shared.floor(run.ctx, deep, sizes[-1], "none")
    assert search._at_largest(run, deep, choices, shared, sizes) > 10 * busy
    flat = Grid(8, 2, 1, 128, 1, 0, 0)
    run, choices, sizes, shared = _first_floor_parts(w, flat)
    assert search._least_recompute(run, flat, choices) == "full"
    sync = sync_floor(run.ctx, flat)
    assert sync > 0.4 * shared.floor(run.ctx, flat, sizes[-1], "full")
    assert search._at_largest(run, flat, choices, shared, sizes) == shared.floor(run.ctx, flat, sizes[-1], "full") + sync
    assert search._sketch(run.ctx, flat, choices, shared, sizes) > sync


@pytest.mark.parametrize("w", [
    Workload(params=405e9, gpus=2048, gpu="h100_80gb", seq_len=32768, global_batch_tokens=4194304),
    Workload(params=141e9, layers=56, hidden=6144, heads=48, kv_heads=8, ffn_hidden=24576, vocab=32768, experts=8,
             experts_per_token=2, expert_ffn_hidden=24576, gpus=128, seq_len=16384, global_batch_tokens=16777216),
    Workload(params=70e9, gpus=512, stack="torch_native", seq_len=32768, global_batch_tokens=4194304),
    Workload(params=175e9, gpus=1024, stack="megatron_lm_2021", seq_len=32768, global_batch_tokens=4194304),
])
def test_grids_that_differ_only_in_cp_share_their_sync_and_optimizer(w):
    """bounds._weights_key: a grid's sync floor, ZeRO-3 traffic, experts' sync and optimizer
    step depend on dp x cp, not on its split into dp and cp, so the grids of one GPU count
    that differ only in cp share them; each one computed afresh equals the shared figure."""
    wctx = context_for(w)
    groups = {}
    for grid in space_for(w).layouts(w.gpus):
        groups.setdefault(bounds._weights_key(grid), []).append(grid)
    shared = [grids for grids in groups.values() if len({g.cp for g in grids}) > 1]
    assert shared
    for grids in shared:
        figures = []
        for grid in grids:
            bounds._REMEMBERED[0] = None  # computed afresh for this grid
            below, fsdp = bounds._sync_parts(wctx, grid)
            figures.append((sync_floor(wctx, grid), below, fsdp.total if fsdp is not None else None,
                            bounds._expert_sync_s(wctx, grid), bounds._optimizer_s(wctx, grid, 1)))
        assert all(figure == figures[0] for figure in figures), grids


def _first_floor_parts(w, grid):
    """A search of w, its choices, the grid's micro-batch sizes and its SharedFloor."""
    run = search._Search(w, None)
    choices = search.Choices(run.ctx, None)
    return run, choices, choices.micro_batches(run.ctx.batch_sequences // grid.dp), SharedFloor(run.ctx, grid)


def test_sketch_counts_the_context_parallel_exchange():
    """The sketch counts a replica's share of the per-micro-batch exchange: for 32-way context
    parallelism at 8K tokens (256 tokens per GPU, the ring's sends exposed) it is within 10% of
    the floor at the grid's own largest micro-batch (without the exchange it was a fifth of it)."""
    w = Workload(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16777216,
                 inter_node_gbps=400)
    grid = Grid(1, 32, 16, 32, 1, 0, 0)
    run, choices, sizes, shared = _first_floor_parts(w, grid)
    assert search._least_recompute(run, grid, choices) == "none"
    sketch = search._sketch(run.ctx, grid, choices, shared, sizes)
    assert 0.9 * search._at_largest(run, grid, choices, shared, sizes) < sketch


@pytest.mark.parametrize("seed", range(6))
def test_row_modes_by_binary_search_are_each_micro_batch_least_mode(seed):
    """search._row_modes finds each recompute mode's last fitting micro-batch by a binary
    search (memory grows with the micro-batch): the same modes as asking each size."""
    rng = random.Random(seed)
    checked = 0
    while checked < 40:
        w, _ = random_workload(rng, [1, 8, 16, 64, 128, 512, 1024])
        run = search._Search(w, None)
        choices = search.Choices(run.ctx, None)
        for grid in space_for(w).layouts(w.gpus)[:12]:
            largest = search._largest_micro_batch(run, grid, choices)
            if largest is None:
                continue
            sizes = [b for b in choices.micro_batches(run.ctx.batch_sequences // grid.dp) if b <= largest]
            state = search.stage_state_bytes(run.ctx, grid, choices.zeros(grid)[-1])
            expected = [search._least_mode(run, grid, choices, state, b, 1) for b in sizes]
            assert search._row_modes(run, grid, choices, sizes) == expected
            checked += 1


SLOW_FABRIC = Workload(params=645e6, gpus=4096, gpu="h200_141gb", seq_len=8192, global_batch_tokens=67108864,
                       inter_node_gbps=27.4)


def _slow_fabric_rows():
    """Plans of a small model on a slow fabric, where the gradient sync outlasts a micro-batch's compute."""
    wctx = context_for(SLOW_FABRIC)
    out = []
    for grid in space_for(SLOW_FABRIC).layouts(SLOW_FABRIC.gpus)[::3]:
        replica = wctx.batch_sequences // grid.dp
        for zero in (1, 3):
            for b in sorted({1, replica}):
                out.append((grid, Parallelism(zero=zero, recompute="none", sequence_parallel=grid.tp > 1, micro_batch=b,
                                              interleave=1, **grid.parallelism_fields())))
    return wctx, out


def test_shared_floor_by_zero_class_counts_the_sync_its_windows_cannot_hold():
    """SharedFloor.least by class of ZeRO stage adds what the modern stack's windows leave
    exposed (the compute of one micro-batch hides the sync): still below evaluate() for ZeRO-1
    and ZeRO-3 plans, and for some of them well above the floor that counts only the
    contention share of the sync (the bound used to rule out none of these grids)."""
    wctx, plans = _slow_fabric_rows()
    tighter = 0
    for grid, par in plans:
        shared = SharedFloor(wctx, grid)
        step = evaluate(SLOW_FABRIC, par).step_s
        bound = shared.least(wctx, grid, [(par.micro_batch, 1)], zero3=par.zero == 3)
        assert bound <= step * (1 + 1e-12)
        tighter += bound > 1.2 * shared.least(wctx, grid, [(par.micro_batch, 1)])
    assert len(plans) >= 40 and tighter >= len(plans) // 4


@pytest.mark.parametrize("seed", range(3))
def test_a_rows_bound_by_class_of_zero_stage_never_exceeds_its_plans(seed):
    """search._Layout bounds a micro-batch row by the lesser of ZeRO-3 at the row's least
    recompute and the most sharded stage below it at that stage's own: below every plan of
    the row the search can evaluate (the least recompute that fits at its stage)."""
    rng = random.Random(seed)
    checked = 0
    while checked < 40:
        w, _ = random_workload(rng, [8, 64, 512])
        run = search._Search(w, None)
        ctx = run.ctx
        choices = search.Choices(ctx, None)
        for grid in space_for(w).layouts(w.gpus)[:6]:
            largest = search._largest_micro_batch(run, grid, choices)
            if largest is None:
                continue
            lay = search._Layout(run, grid, run.bound(grid), choices, search.shape_classes(grid), largest)
            for row in list(lay.rows):
                row_bound, b, vs = lay._bounded(row)[:3]
                for v in vs:
                    for zero in choices.zeros(grid):
                        state = search.stage_state_bytes(ctx, grid, zero)
                        mode = search._least_mode(run, grid, choices, state, b, v)
                        if mode is None:
                            continue
                        par = search.make_parallelism(grid, zero, mode, choices.sp(grid), b, v)
                        assert row_bound <= evaluate(w, par).step_s * (1 + 1e-12)
                        checked += 1


def test_zero3_bounds_count_the_experts_sync():
    """At ZeRO-3 on the modern stack the routed experts still sync once per step behind one
    micro-batch (sync.modern_sync): StepBound and SharedFloor's ZeRO-3 class count it.
    DeepSeek-V3 on 2,048 H800, TP 2 x DP 1,024, full recompute: both within 20% of the
    model's step (without it the bound at EP 8, micro-batch 15 was 0.76 of it), never above.
    At EP 64 the all-to-alls cross the NICs the gathers take, so the gathers cannot hide behind
    them (step_time.layer_windows) while the bound's window still counts the busy time they
    wait for: 0.81 at micro-batch 1, the loosest; 0.92 to 0.99 elsewhere."""
    w = Workload(params=671e9, layers=61, hidden=7168, heads=128, kv_heads=128, head_dim=192, v_head_dim=128,
                 q_lora_rank=1536, kv_lora_rank=512, moe_dispatcher="per_node", ffn_hidden=27648, vocab=129280,
                 experts=256, experts_per_token=8, expert_ffn_hidden=3072, shared_experts=1, dense_layers=3,
                 gpus=2048, global_batch_tokens=62914560, seq_len=4096, gpu="h800_80gb", inter_node_gbps=400,
                 precision="fp8", dropout=False)
    run = search._Search(w, None)
    ctx = run.ctx
    for ep in (8, 16, 64):
        grid = Grid(2, 1, 1, 1024, ep, 0, 0)
        for b in (1, 15):
            step = evaluate(w, search.make_parallelism(grid, 3, "full", True, b, 1)).step_s
            for bound in (run.bound(grid).step(b, 1, 3, "full", True),
                          SharedFloor(ctx, grid).least(ctx, grid, [(b, 1)], "full", zero3=True)):
                assert 0.8 * step < bound <= step * (1 + 1e-12)


def test_floors_count_the_pipeline_sends_over_a_slow_fabric():
    """A small model over 16,384 GPUs on 27.4 Gb/s per GPU: pipeline stages are tp x dp ranks
    apart (step_time.pipeline_link_rate), so every send crosses the fabric and outweighs the
    stage's compute. The first floors and the rows' bound count the steady slots' and the fill
    and drain's sends (SharedFloor.sends_at), stay below every plan of the grid, and are
    above what the busy time alone gives."""
    w = Workload(params=645e6, gpus=16384, gpu="h200_141gb", seq_len=8192, global_batch_tokens=2 ** 26,
                 inter_node_gbps=27.4)
    wctx = context_for(w)
    grid = next(g for g in space_for(w).layouts(w.gpus) if (g.tp, g.cp, g.pp) == (2, 1, 8))
    run = search._Search(w, None)
    choices = search.Choices(wctx, None)
    sequences = wctx.batch_sequences // grid.dp
    sizes = choices.micro_batches(sequences)
    shared = SharedFloor(wctx, grid)
    busy_only = shared.floor(wctx, grid, sizes[-1], optimizer=False) * search._least_bubble(wctx, grid, choices, sizes)
    sends = sequences / sizes[-1] * shared.sends_at(wctx, grid, sizes[-1]) + 7 * shared.sends_at(wctx, grid, sizes[0])
    assert sends > 2 * busy_only
    at_largest = search._at_largest(run, grid, choices, shared, sizes)
    assert at_largest >= sends + shared.optimizer_s(wctx, grid) + sync_floor(wctx, grid)
    steps = [evaluate(w, Parallelism(tp=2, pp=8, dp=grid.dp, zero=1, sequence_parallel=True, micro_batch=b,
                                     interleave=v, first_stage_layers=grid.first, last_stage_layers=grid.last)).step_s
             for b in sizes for v in choices.interleaves(grid, wctx.layers, sequences // b)]
    rows = search._interleave_rows(wctx, grid, choices, sizes[-1])
    assert steps and max(at_largest, search._sketch(wctx, grid, choices, shared, sizes),
                         shared.least(wctx, grid, rows)) <= min(steps) * (1 + 1e-12)
