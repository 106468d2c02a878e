"""The bidirectional pipeline schedules (Workload.pipeline_schedule): DeepSeek-V3's DualPipe and
the V-shaped DualPipeV against 1F1B - their bubble (arXiv:2412.19437 Table 2; the
deepseek-ai/DualPipe README's table), their weight copies and in-flight micro-batches, the rules
they run by, and the planner's and the page's view of them."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.gpu_memory import stage_memories
from lab_core.parallelism import check_layout, schedule_allows
from lab_core.pipeline import bubble_time, in_flight_chunks, least_drain_slots, weight_copies
from lab_core.planner import recommend
from lab_core.planner.pins import parse_pins
from lab_core.planner.space import space_for
from lab_core.planner.bounds import StepBound
from lab_core.planner.space import Grid
from lab_core.step_time import micro_batch_times, output_layer_times, stage_micro_batch_times
from labsite.catalog import LANGUAGES, load_catalogs
from lab_view import Session
from labsite.labpage import default_inputs, load_lab_layout
from labsite.pages.lab import runtime_session_config
from labsite.pages.rules import load_rules

# Llama 3 70B's shape on 512 H100s, 8 pipeline stages of 10 layers, 32 micro-batches a step.
SHAPE = dict(layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=43008, vocab=128256, gpu="h100_80gb", gpus=512,
             seq_len=8192, global_batch_tokens=1024 * 8192, inter_node_gbps=400, dropout=False)
PLAN = Parallelism(tp=8, pp=8, dp=8, zero=1, sequence_parallel=True, micro_batch=4)


def _run(schedule, par=PLAN, **changes):
    w = Workload(**dict(SHAPE, pipeline_schedule=schedule, **changes))
    return w, evaluate(w, par)


def test_the_bubbles_are_the_papers_formulas():
    """1F1B (p - 1)(F + B); DualPipe (p/2 - 1)(F&B + B - 3W); DualPipeV the same over 2 p half chunks."""
    F, B, W = 1.0, 2.0, 0.6
    assert bubble_time(8, 1, F + B) == pytest.approx(7 * (F + B))
    assert bubble_time(8, 2, F + B) == pytest.approx(7 * (F + B) / 2)
    assert bubble_time(8, 1, F + B, "dualpipe", B, W) == pytest.approx(3 * (F + B + B - 3 * W))
    # DualPipeV: PP = 2 p = 16 stages of half a GPU's layers, (16/2 - 1)(F&B + B - 3W) of half chunks.
    assert bubble_time(8, 1, F + B, "dualpipev", B, W) == pytest.approx(7 * (F / 2 + B / 2 + B / 2 - 1.5 * W))
    # Two stages of DualPipe leave no bubble; one stage is no pipeline, whatever the schedule.
    assert bubble_time(2, 1, F + B, "dualpipe", B, W) == 0.0
    assert bubble_time(1, 1, F + B, "dualpipe", B, W) == bubble_time(1, 1, F + B, "dualpipev", B, W) == 0.0


@settings(max_examples=300, deadline=None)
@given(p=st.integers(1, 64), f=st.floats(0.01, 10.0), b_over_f=st.floats(1.0, 4.0), w_share=st.floats(0.0, 1.0),
       extra=st.floats(0.0, 5.0), schedule=st.sampled_from(("dualpipe", "dualpipev")))
def test_the_planners_least_drain_never_exceeds_the_bubble(p, f, b_over_f, w_share, extra, schedule):
    """pipeline.least_drain_slots bounds the bubble from below for any W <= F with 2 W <= B
    (the model's W is the forward GEMMs' time) and any communication in the slot."""
    w = w_share * f
    backward = max(2.0 * w, b_over_f * f)
    slot = f + backward + extra
    assert least_drain_slots(p, 1, schedule) * slot <= bubble_time(p, 1, slot, schedule, backward, w) * (1 + 1e-12)


def test_the_weight_gradient_is_the_forward_gemms_below_forward_and_half_the_backward():
    w = Workload(**dict(SHAPE, pipeline_schedule="dualpipe"))
    mb = micro_batch_times(context_for(w), PLAN, check_layout(w, PLAN))
    assert 0.0 < mb.weight_grad <= mb.forward and 2.0 * mb.weight_grad <= mb.backward + mb.recompute


# Found by a sweep of the planner's bounds: a small MoE model of 126 layers on 64 DualPipe stages, the
# last stage one layer and the output layer, whose loss (the fp32 logits' traffic) was counted in its W.
OUTPUT_HEAVY = dict(params=817e6, gpus=64, global_batch_tokens=496611, seq_len=2048, inter_node_gbps=357.0,
                    gpu="h100_80gb", layers=126, experts=16, experts_per_token=4, shared_experts=1,
                    stack="megatron_lm_2021", pipeline_schedule="dualpipe", dropout=True)
OUTPUT_HEAVY_PLAN = Parallelism(pp=64, micro_batch=1, first_stage_layers=1, last_stage_layers=1)


@pytest.mark.parametrize("mtp", (0, 1))
def test_the_output_layers_weight_gradient_is_its_gemm_not_its_loss(mtp):
    w = Workload(**dict(OUTPUT_HEAVY, mtp_layers=mtp))
    ctx = context_for(w)
    bottleneck, every = stage_micro_batch_times(ctx, OUTPUT_HEAVY_PLAN, check_layout(w, OUTPUT_HEAVY_PLAN))
    assert bottleneck.stage == "last"
    for mb in every:
        assert 0.0 < mb.weight_grad <= mb.forward and 2.0 * mb.weight_grad <= mb.backward + mb.recompute
    # The output layer's forward is its GEMM and the logits' traffic, its backward two GEMMs and the
    # traffic: its W is the one GEMM, backward less forward (with a module, its passes and projection).
    forward, backward = output_layer_times(ctx, 1, 1, 1)
    assert backward - forward < forward
    if not mtp:
        per_layer = every[1].weight_grad / every[1].layers
        assert bottleneck.weight_grad == pytest.approx(bottleneck.layers * per_layer + backward - forward, rel=1e-12)


def test_the_planners_bound_stays_below_a_dualpipe_step_the_output_layer_paces():
    w = Workload(**OUTPUT_HEAVY)
    grid = Grid.of(OUTPUT_HEAVY_PLAN)
    probe = evaluate(w, Parallelism(**grid.parallelism_fields()))
    bound = StepBound(context_for(w), grid, probe)
    assert bound.step(1, 1, 0, "none", True) <= evaluate(w, OUTPUT_HEAVY_PLAN).step_s


def _steady(r):
    """The m steady slots of a step: all of it but the bubble, the data-parallel sync and the optimizer."""
    return r.step_s - r.pipeline_bubble_s - r.dp_comm_s - r.zero_comm_s - r.optimizer_s


def test_the_bidirectional_schedules_shrink_the_bubble_and_keep_the_steady_slots():
    _, plain = _run("1f1b")
    for schedule in ("dualpipe", "dualpipev"):
        w, r = _run(schedule)
        assert r.pipeline_bubble_s < plain.pipeline_bubble_s / 2.0
        assert _steady(r) == pytest.approx(_steady(plain), rel=1e-9)
        mb = micro_batch_times(context_for(w), PLAN, check_layout(w, PLAN))
        slot = mb.busy + mb.p2p
        assert r.pipeline_bubble_s == pytest.approx(
            bubble_time(8, 1, slot, schedule, mb.backward + mb.recompute, mb.weight_grad))
        assert r.bubble_fraction == pytest.approx(r.pipeline_bubble_s / (r.micro_batches * slot))
    assert plain.bubble_fraction == pytest.approx(7 / 32)


def test_dualpipe_holds_two_copies_of_the_weights_and_one_more_micro_batch():
    _, plain = _run("1f1b")
    _, dual = _run("dualpipe")
    _, v_shaped = _run("dualpipev")
    assert dual.activations_bytes > v_shaped.activations_bytes > plain.activations_bytes
    # Both copies' gradients are synced: twice the data-parallel traffic.
    assert dual.dp_comm_total_s == pytest.approx(2.0 * plain.dp_comm_total_s, rel=0.05)
    stages = {schedule: {mem.stage: mem for mem, _ in stage_memories(context_for(w), PLAN, check_layout(w, PLAN))}
              for schedule in ("1f1b", "dualpipe", "dualpipev")
              for w in [Workload(**dict(SHAPE, pipeline_schedule=schedule))]}
    for kind, mem in stages["1f1b"].items():
        for part in ("weights", "gradients", "optimizer"):
            assert getattr(stages["dualpipe"][kind], part) == pytest.approx(2.0 * getattr(mem, part))
            assert getattr(stages["dualpipev"][kind], part) == pytest.approx(getattr(mem, part))
    assert (weight_copies(8, "dualpipe"), weight_copies(1, "dualpipe"), weight_copies(8, "dualpipev")) == (2, 1, 1)
    # Every GPU holds p + 1 micro-batches (DualPipeV 2 p + 1 half chunks), 1F1B's first stage p.
    assert [in_flight_chunks(8, 0, 32, s) for s in ("1f1b", "dualpipe", "dualpipev")] == [8, 9.0, 8.5]
    assert in_flight_chunks(8, 3, 32, "dualpipe") == 9.0 and in_flight_chunks(8, 0, 6, "dualpipe") == 6.0


def test_without_a_pipeline_every_schedule_is_1f1b():
    par = Parallelism(tp=8, pp=1, dp=64, zero=1, sequence_parallel=True, micro_batch=2)
    reports = [_run(s, par)[1] for s in ("1f1b", "dualpipe", "dualpipev")]
    assert len({(r.step_s, r.memory_bytes, r.bubble_fraction) for r in reports}) == 1


@pytest.mark.parametrize("schedule, par, field", [
    ("dualpipe", Parallelism(tp=8, pp=8, dp=8, zero=1, sequence_parallel=True, micro_batch=4, interleave=2),
     "interleave"),
    ("dualpipev", Parallelism(tp=8, pp=8, dp=8, zero=1, sequence_parallel=True, micro_batch=4, interleave=2),
     "interleave"),
    # 80 layers over 5 stages; an odd pipeline cannot pair its stages.
    ("dualpipe", Parallelism(tp=8, pp=5, dp=8, zero=1, sequence_parallel=True, micro_batch=4), "pp"),
    # 8 micro-batches for 8 stages: fewer than 2 pp.
    ("dualpipe", Parallelism(tp=8, pp=8, dp=8, zero=1, sequence_parallel=True, micro_batch=16), "micro_batch"),
    ("dualpipev", Parallelism(tp=8, pp=8, dp=8, zero=1, sequence_parallel=True, micro_batch=16), "micro_batch"),
])
def test_what_the_schedules_cannot_run_is_an_input_error_naming_the_field(schedule, par, field):
    w = Workload(**dict(SHAPE, gpus=par.model_parallel * par.dp, pipeline_schedule=schedule))
    with pytest.raises(LabInputError) as err:
        evaluate(w, par)
    assert err.value.field == field and err.value.reason == "inconsistent"
    assert str(2 * par.pp) in str(err.value) or field != "micro_batch"


def test_dualpipe_needs_an_even_number_of_micro_batches_and_dualpipev_does_not():
    # 1,000 sequences over 8 replicas: 125 micro-batches of one.
    par = Parallelism(tp=8, pp=8, dp=8, zero=1, sequence_parallel=True, micro_batch=1)
    changes = dict(global_batch_tokens=1000 * 8192)
    with pytest.raises(LabInputError):
        _run("dualpipe", par, **changes)
    assert _run("dualpipev", par, **changes)[1].micro_batches == 125
    assert not schedule_allows("dualpipe", 8, 125) and schedule_allows("dualpipev", 8, 125)
    assert schedule_allows("dualpipe", 1, 3) and not schedule_allows("dualpipe", 8, 14)


def test_the_planner_runs_the_workloads_schedule_and_never_interleaves_it():
    for schedule in ("dualpipe", "dualpipev"):
        w = Workload(**dict(SHAPE, pipeline_schedule=schedule))
        plan = recommend(w)
        par = plan.parallelism
        assert plan.fits and par.interleave == 1
        check_layout(w, par)  # a plan the schedule runs
        if par.pp > 1:
            assert plan.report.micro_batches >= 2 * par.pp
    with pytest.raises(LabInputError) as err:
        w = Workload(**dict(SHAPE, pipeline_schedule="dualpipe"))
        parse_pins(w, {"pp": 8, "interleave": 2}, space_for(w))
    assert err.value.field == "interleave"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_says_which_schedule_it_drew(lang):
    catalog = load_catalogs()[lang]
    session = Session(runtime_session_config(load_lab_layout(), catalog, lang, load_rules()))
    inputs = dict(default_inputs(), params=70e9, gpus=512, gpu="h100_80gb", global_batch_tokens=1024 * 8192,
                  seq_len=8192, pipeline_schedule="dualpipe")
    result = session.evaluate(inputs, pins={"pp": "8", "tp": "8"})
    assert result["ok"], result
    caption = result["view"]["schedule"]["caption"]
    # The schedule by name, its bubble and plain 1F1B's for the same stages and micro-batches (the drawing's).
    assert "DualPipe" in caption and "1F1B" in caption and caption.count("%") >= 2
