"""The sanity workloads of the planner issue, and the published layouts."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.planner import recommend
from lab_core.planner.assumptions import MEMORY_SAFETY_MARGIN, TIE_TOLERANCE
from planner_published import PUBLISHED


def test_small_model_one_gpu_is_single_gpu():
    plan = recommend(Workload(params=1.3e9, gpus=1))
    assert plan.fits and plan.stage == "single_gpu"
    assert plan.parallelism.tp == plan.parallelism.pp == plan.parallelism.dp == 1


def test_small_model_64_gpus_is_data_parallel():
    plan = recommend(Workload(params=1.3e9, gpus=64))
    assert plan.fits and plan.stage == "data_parallel"
    assert (plan.parallelism.tp, plan.parallelism.pp, plan.parallelism.dp) == (1, 1, 64)


def test_13b_on_64_gpus_shards_or_splits_never_plain_dp():
    plan = recommend(Workload(params=13e9, gpus=64))
    par = plan.parallelism
    assert plan.fits
    assert plan.stage in ("zero_sharded", "tensor_pipeline", "full_3d")
    assert par.zero >= 1 or par.tp > 1 or par.pp > 1
    # Plain data parallelism (ZeRO-0 replicas) cannot hold 13B x 16 bytes.
    plain = evaluate(Workload(params=13e9, gpus=64),
                     Parallelism(tp=1, pp=1, dp=64, recompute="full", micro_batch=1))
    assert plain.memory_bytes > plain.device_bytes


def test_175b_on_1024_gpus_splits_the_model_inside_nodes():
    w = Workload(params=175e9, gpus=1024, global_batch_tokens=1536 * 2048)
    plan = recommend(w)
    par = plan.parallelism
    assert plan.fits
    assert plan.stage in ("tensor_pipeline", "full_3d")
    assert 1 < par.tp <= w.gpus_per_node
    assert par.tp * par.pp > 1
    parallelism = plan.decisions[0]
    assert parallelism["reason"] == "weights_exceed_gpu_split_model"
    assert parallelism["numbers"]["weights_bytes_total"] > parallelism["numbers"]["device_bytes"]


def test_405b_on_16k_gpus_is_at_scale_near_young_daly():
    w = Workload(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16 * 2 ** 20,
                 inter_node_gbps=400, checkpoint_interval_min=2, checkpoint_mode="in_memory")
    plan = recommend(w)
    assert plan.fits and plan.stage == "at_scale"
    ck = plan.checkpoint
    assert ck["interruptions_per_day"] > 5  # Llama 3: 419 in 54 days
    # The recommended interval is Daly's for the snapshot pause; the reader's
    # 2 min is near it and moving to it gains little.
    assert ck["interval_bound"] == "young_daly"
    assert 0.5 < ck["interval_s"] / ck["optimal_interval_s"] < 2.0
    assert 0.0 <= ck["goodput_gain"] < 0.01
    decision = plan.decisions[3]
    # ... and the decision says why: blocking writes would lose far more.
    assert (decision["option"], decision["reason"]) == ("keep_interval", "snapshot_beats_blocking")
    assert ck["goodput_at_optimal"] - ck["blocking_goodput"] > 0.05


def test_405b_async_at_its_optimum_is_told_in_memory_recovers_faster():
    """At 16,384 GPUs each restart reads the 5.8 TB checkpoint back at 100 GB/s
    and loses the work of its background write; peers' memory avoids both."""
    w = Workload(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16 * 2 ** 20,
                 inter_node_gbps=400, checkpoint_interval_min=2)
    plan = recommend(w)
    ck, decision = plan.checkpoint, plan.decisions[3]
    assert ck["mode"] == "async" and ck["best_mode"] == "in_memory"
    assert (decision["option"], decision["reason"]) == ("use_in_memory", "memory_recovery_faster")
    assert ck["mode_gain"] >= 0.01 and ck["mode_gain"] > ck["goodput_gain"]


def test_405b_recommended_interval_is_young_daly():
    w = Workload(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16 * 2 ** 20,
                 inter_node_gbps=400)
    plan = recommend(w)
    ck = plan.checkpoint
    assert plan.stage == "at_scale"
    assert ck["optimal_interval_s"] == pytest.approx(ck["young_interval_s"], rel=0.05)
    # The reader's default hour is over three times Daly's optimum: shorten it.
    assert ck["interval_s"] > 3 * ck["optimal_interval_s"]
    assert plan.decisions[3]["option"] == "shorten_interval"
    assert ck["goodput_at_optimal"] > ck["goodput"]


def test_checkpoint_interval_far_from_optimum_is_flagged():
    w = Workload(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16 * 2 ** 20,
                 inter_node_gbps=400, checkpoint_interval_min=120)
    plan = recommend(w)
    assert plan.decisions[3]["option"] == "shorten_interval"
    assert plan.checkpoint["goodput_gain"] > 0.01
    assert plan.checkpoint["time_saved_s"] > 0


def test_nothing_fits_says_so_with_overflow_and_min_gpus():
    w = Workload(params=1e12, gpus=8)
    plan = recommend(w)
    assert not plan.fits
    nf = plan.no_fit
    assert nf["overflow_bytes"] > 0 and nf["overflow_ratio"] > 1
    assert nf["min_gpus"] > 8
    lay = nf["min_gpus_layout"]
    assert lay["tp"] * lay["cp"] * lay["pp"] * lay["dp"] == nf["min_gpus"]
    # The smallest count really fits, and nothing is recommended there that overflows.
    bigger = recommend(Workload(params=1e12, gpus=nf["min_gpus"]))
    assert bigger.fits
    assert plan.meters["memory"]["level"] == "critical"


@pytest.mark.parametrize("name,workload,layout", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_published_layout_fits_and_plan_is_at_least_as_good(name, workload, layout):
    w = Workload(**workload)
    published = evaluate(w, Parallelism(**layout))
    assert published.memory_bytes <= published.device_bytes * (1.0 - MEMORY_SAFETY_MARGIN)
    published_goodput = published.tokens_per_s * published.goodput
    plan = recommend(w)
    assert plan.fits
    # The optimum the search found is at least the published layout's ...
    assert plan.search["best_goodput_tokens_per_s"] >= published_goodput * (1.0 - 1e-12)
    # ... and the (simpler-on-near-ties) recommendation is within the tie band of it.
    assert plan.goodput_tokens_per_s >= published_goodput * (1.0 - TIE_TOLERANCE)


@pytest.mark.parametrize("gpus", [1, 8, 64, 1024, 16384])
def test_stage_never_goes_backwards_as_params_grow(gpus):
    from lab_core.planner import STAGES
    ranks = []
    params = 125e6
    while params <= 2e12:
        plan = recommend(Workload(params=params, gpus=gpus))
        ranks.append((STAGES.index(plan.stage), params, plan.stage))
        params *= 1.5
    for (r0, p0, s0), (r1, p1, s1) in zip(ranks, ranks[1:]):
        assert r1 >= r0, (gpus, p0, s0, p1, s1)
