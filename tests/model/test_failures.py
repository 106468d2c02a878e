"""Failures, checkpoint modes and recovery: each formula against its source,
and the properties the model must keep (async never pauses longer than
blocking; goodput never exceeds 1 and falls as interruptions rise)."""
import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core import calibration as cal
from lab_core.checkpoint_modes import CHECKPOINT_MODES, mode_costs, snapshot_s, storage_write_s
from lab_core.context import context_for
from lab_core.failures import (daly_interval, goodput, interrupted_share, optimal_interval, planned_stop_share,
                               recompute_per_interruption, time_shares, young_interval)
from lab_core.hardware import nic_bytes_per_s
from lab_core.recovery import comm_init_s, recovery_parts
from labsite.validation import load_facts

FACTS = load_facts()
LLAMA = dict(params=405e9, gpus=16384, gpu="h100_80gb", seq_len=8192, global_batch_tokens=16 * 2 ** 20,
             inter_node_gbps=400)
SETTINGS = dict(max_examples=150, deadline=None)


def figures(**inputs):
    return context_for(Workload(**inputs)).failures


# --- Each formula against its source -----------------------------------------------

def test_table5_causes_add_up_to_the_interruptions_the_rate_is_fitted_to():
    """arXiv:2407.21783 Table 5: the counts by component sum to the 419 of §3.3.4."""
    counts = [count for _, _, count in cal.LLAMA3_INTERRUPTIONS_BY_COMPONENT]
    published = FACTS["run.llama3_405b.interruptions"]["published"]
    assert sum(counts) == cal.LLAMA3_UNEXPECTED_INTERRUPTIONS == published["unexpected"]
    assert [row[2] for row in published["table5"]] == counts
    assert cal.GPU_FAILURES_PER_HOUR * cal.LLAMA3_GPUS * cal.LLAMA3_WINDOW_HOURS == pytest.approx(419)


@pytest.mark.parametrize("key", ["text_405b", "vit_7b"])
def test_snapshot_pause_reproduces_bytecheckpoint_table8(key):
    """arXiv:2407.20143 Table 8: the blocking time of an async save (the fit's two points)."""
    table8 = FACTS["bytecheckpoint.table8"]
    setup = table8["inputs"][key]
    per_gpu = setup["params"] * cal.CHECKPOINT_BYTES_PER_PARAM / setup["gpus"]
    assert snapshot_s(per_gpu) == pytest.approx(table8["published"][key]["blocking_s"], rel=0.01)


def test_storage_write_is_bytes_over_bandwidth_megatron_1t():
    """arXiv:2104.04473 §5.10: 13.8 TB written at 273 GB/s takes about 50 s."""
    sizes = FACTS["ckpt.sizes_and_times"]["published"]["megatron_1T"]
    assert storage_write_s(sizes["size_TB"] * 1e12, sizes["save_GBps"] * 1e9) == pytest.approx(50.5, abs=0.1)


def test_remote_write_of_mt_nlg_is_within_a_fifth_of_gemini():
    """GEMINI §2: MT-NLG's model states take 42 minutes at 20 Gb/s."""
    fact = FACTS["gemini.remote_checkpoint_time"]
    seconds = storage_write_s(fact["inputs"]["params"] * cal.CHECKPOINT_BYTES_PER_PARAM, 20e9 / 8)
    assert seconds / 60 == pytest.approx(fact["published"]["checkpoint_minutes"], rel=0.2)


def test_communicator_setup_grows_linearly_as_megascale_measured():
    """arXiv:2402.15627 §3.5: under 5 s on 2,048 GPUs, under 30 s on more than 10,000 (O(n) barrier)."""
    init = FACTS["megascale.init_time"]["published"]
    assert comm_init_s(2048) == pytest.approx(init["optimized_2048_s"])
    assert comm_init_s(10240) <= init["optimized_over_10000_s"]
    assert comm_init_s(8192) == pytest.approx(2 * comm_init_s(4096))


def test_recovery_is_the_sum_of_its_parts_or_the_fixed_time():
    parts = recovery_parts(16384, 57.9)
    assert parts.total_s == pytest.approx(cal.RECOVERY_DETECTION_S + cal.RECOVERY_JOB_RESTART_S + comm_init_s(16384) + 57.9)
    fixed = recovery_parts(16384, 57.9, fixed_s=600.0)
    assert fixed.fixed and fixed.total_s == 600.0 and fixed.detection_s is None and fixed.load_s is None


def test_old_restart_minutes_mean_a_fixed_recovery():
    """restart_min keeps old links working: a fixed time replacing the four parts."""
    report = evaluate(Workload(restart_min=10, **LLAMA), Parallelism(tp=8, pp=16, dp=128, zero=1)).to_dict()["failures"]
    assert report["recovery_fixed"] is True and report["recovery_s"] == 600.0
    assert report["detection_s"] is None and report["detection_share"] is None
    modelled = evaluate(Workload(**LLAMA), Parallelism(tp=8, pp=16, dp=128, zero=1)).to_dict()["failures"]
    assert modelled["recovery_fixed"] is False
    assert modelled["recovery_s"] == pytest.approx(modelled["detection_s"] + modelled["job_restart_s"]
                                                   + modelled["comm_init_s"] + modelled["checkpoint_load_s"])
    assert Workload(restart_min=0).restart_min is None  # 0 means "model the parts", as for the shape fields


def test_young_and_daly_take_the_pause_of_the_mode():
    """Young (1974), Daly (2006) Eq 37 with delta = the time a checkpoint blocks training."""
    for mode in CHECKPOINT_MODES:
        f = figures(checkpoint_mode=mode, **LLAMA)
        pause = f.mode_costs[mode].stall_s
        assert f.young_s == pytest.approx(math.sqrt(2 * pause * f.mtti_s))
        assert f.daly_s == pytest.approx(daly_interval(pause, f.mtti_s))
    assert figures(checkpoint_mode="async", **LLAMA).daly_s < figures(checkpoint_mode="blocking", **LLAMA).daly_s / 5


def _expected_rollback(interval, pause, background, lag, steps=20000):
    """Mean rollback for a failure uniform in time, by brute force: checkpoint k
    starts at k T, survives from k T + lag; a failure rolls back to the last
    survivor (the first-order model of Young 1974 and Daly 2006)."""
    wait = max(0.0, background - interval)
    period = interval + pause + wait
    start = math.ceil(lag / period) + 2          # far from time 0
    total = 0.0
    for i in range(steps):
        t = (start + (i + 0.5) / steps) * period
        k = math.floor((t - lag) / period)       # the last checkpoint that survived
        total += t - k * period
    return total / steps


@pytest.mark.parametrize("interval,pause,background,lag", [
    (600.0, 58.0, 0.0, 58.0),      # blocking: survives when its write ends
    (600.0, 0.5, 58.0, 58.5),      # async: survives when the background write ends
    (30.0, 0.5, 58.0, 58.5),       # async faster than its write: each save waits
    (100.0, 0.5, 5.8, 0.52),       # in-memory: survives once the peer has its copy
])
def test_lost_work_is_the_mean_rollback(interval, pause, background, lag):
    assert recompute_per_interruption(interval, pause, background, lag) == pytest.approx(
        _expected_rollback(interval, pause, background, lag), rel=1e-3)


def test_shares_sum_to_one_and_match_the_report():
    report = evaluate(Workload(**LLAMA), Parallelism(tp=8, pp=16, dp=128, zero=1)).to_dict()["failures"]
    parts = (report["lost_work_share"] + report["checkpoint_stall_share"] + report["recovery_share"])
    assert report["goodput"] + parts == pytest.approx(1.0)
    assert report["recovery_share"] == pytest.approx(report["detection_share"] + report["job_restart_share"]
                                                     + report["comm_init_share"] + report["checkpoint_load_share"])
    assert report["recovery_share"] == pytest.approx(report["recovery_s"] / report["mean_time_to_interrupt_s"])


def test_the_persist_bound_holds_when_storage_is_slow():
    """An async checkpoint cannot start before the previous write ends: the
    optimum is never below it, and the lab says which bound holds."""
    fast = figures(checkpoint_mode="async", **LLAMA)
    assert fast.interval_bound == "young_daly" and fast.optimal_s == fast.daly_s
    slow = figures(checkpoint_mode="async", checkpoint_storage_gbps=5, **LLAMA)
    assert slow.interval_bound == "persist"
    assert slow.optimal_s == pytest.approx(slow.checkpoint_write_s) and slow.optimal_s > slow.daly_s
    costs = slow.mode_costs["async"]
    below = goodput(0.5 * slow.optimal_s, costs.stall_s, slow.recovery.total_s, slow.mtti_s, costs.background_s,
                    costs.lag_s)
    assert below < slow.goodput_at_optimal
    # Below the bound each checkpoint waits for the previous write.
    shorter = figures(checkpoint_mode="async", checkpoint_storage_gbps=5,
                      checkpoint_interval_min=slow.optimal_s / 120, **LLAMA)
    assert shorter.stall_s == pytest.approx(costs.stall_s + costs.background_s - shorter.interval_s)


def test_the_optimum_is_near_the_best_interval():
    for mode in CHECKPOINT_MODES:
        f = figures(checkpoint_mode=mode, **LLAMA)
        costs = f.mode_costs[mode]
        at = lambda interval: goodput(interval, costs.stall_s, f.recovery.total_s, f.mtti_s,  # noqa: E731
                                      costs.background_s, costs.lag_s)
        best = max(at(f.optimal_s * 1.02 ** k) for k in range(-60, 61))
        assert at(f.optimal_s) == pytest.approx(best, abs=2e-4), mode


def test_in_memory_recovers_from_memory_faster_than_storage():
    """GEMINI §2.2: retrieval from host memory instead of remote storage."""
    f = figures(checkpoint_mode="in_memory", **LLAMA)
    memory, storage = f.mode_costs["in_memory"], f.mode_costs["async"]
    assert f.recovery_source == "memory" and storage.recovery_source == "storage"
    assert memory.load_s < storage.load_s / 10 and memory.lag_s < storage.lag_s
    assert memory.storage_bytes_per_checkpoint == pytest.approx(f.checkpoint_bytes / cal.IN_MEMORY_PERSIST_EVERY)
    nic = nic_bytes_per_s(400)
    assert memory.replicate_s == pytest.approx((cal.IN_MEMORY_COPIES - 1) * f.bytes_per_gpu / nic)


def test_planned_stops_cost_restarts():
    """arXiv:2407.21783 §3.3.4: 47 planned interruptions in 54 days."""
    assert planned_stop_share(47 / (54 * 24), 343.0) == pytest.approx(47 * 343.0 / (54 * 86400))


def test_llama3_effective_training_time_is_within_three_points():
    """arXiv:2407.21783 §3.3.4: "higher than 90% effective training time"."""
    from labsite.validation import llama3_effective_time
    as_run = llama3_effective_time(FACTS)
    assert abs(100 * as_run.effective - 90) <= 3 and as_run.effective > 0.9
    assert llama3_effective_time(FACTS, "async").effective > as_run.effective


def test_megascale_bounds_give_about_ninety_percent():
    """arXiv:2402.15627 §6.3: detection under 10 min, catch-up within 15, over 90%."""
    per_hour = 12288 * cal.GPU_FAILURES_PER_HOUR
    assert 1 - interrupted_share(25 * 60, 3600 / per_hour) == pytest.approx(0.9, abs=0.03)


def test_checkpoint_mode_is_validated():
    with pytest.raises(LabInputError) as err:
        Workload(checkpoint_mode="lazy")
    assert err.value.to_dict()["reason"] == "unknown_choice"


def test_cli_takes_the_checkpoint_mode():
    out = subprocess.run([sys.executable, "-m", "lab_core", "evaluate", "--params", "70e9", "--gpus", "1024",
                          "--tp", "8", "--pp", "4", "--checkpoint-mode", "in_memory", "--restart-min", "3", "--json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    failures = json.loads(out.stdout)["failures"]
    assert failures["checkpoint_mode"] == "in_memory" and failures["recovery_s"] == 180.0


# --- Properties ------------------------------------------------------------------------

@st.composite
def failure_inputs(draw):
    return dict(params=draw(st.floats(125e6, 2e12)), gpus=draw(st.integers(1, 32768)),
                inter_node_gbps=draw(st.floats(25, 3200)),
                checkpoint_interval_min=draw(st.floats(0.1, 1440)),
                checkpoint_storage_gbps=draw(st.floats(0.1, 1e5)), storage_read_gbps=draw(st.floats(0.1, 1e5)),
                gpu_failures_per_hour=draw(st.floats(0, 1e-2)),
                restart_min=draw(st.one_of(st.none(), st.floats(0.01, 1440))))


@settings(**SETTINGS)
@given(failure_inputs())
def test_async_never_pauses_longer_than_blocking(inputs):
    blocking = figures(checkpoint_mode="blocking", **inputs)
    asynchronous = figures(checkpoint_mode="async", **inputs)
    assert asynchronous.stall_s <= blocking.stall_s * (1 + 1e-12)
    assert asynchronous.mode_costs["async"].stall_s <= blocking.mode_costs["blocking"].stall_s
    assert asynchronous.mode_goodput["async"] >= blocking.mode_goodput["blocking"] - 1e-9


@settings(**SETTINGS)
@given(failure_inputs(), st.sampled_from(CHECKPOINT_MODES))
def test_goodput_is_a_share_and_the_parts_sum_to_one(inputs, mode):
    f = figures(checkpoint_mode=mode, **inputs)
    for value in (f.goodput, f.goodput_at_optimal, f.goodput_at_daly, *f.mode_goodput.values()):
        assert 0.0 <= value <= 1.0
    assert f.goodput + f.lost_work_share + f.stall_share + f.recovery_share == pytest.approx(1.0)


@settings(**SETTINGS)
@given(failure_inputs(), st.sampled_from(CHECKPOINT_MODES), st.floats(1.01, 100))
def test_goodput_falls_as_interruptions_rise(inputs, mode, factor):
    # The higher rate is the drawn one itself: (rate / factor) * factor can round above the input's range.
    rate = max(inputs["gpu_failures_per_hour"], 1e-9)
    fewer = figures(checkpoint_mode=mode, **dict(inputs, gpu_failures_per_hour=rate / factor))
    more = figures(checkpoint_mode=mode, **dict(inputs, gpu_failures_per_hour=rate))
    assert more.goodput <= fewer.goodput + 1e-12
    assert more.goodput_at_optimal <= fewer.goodput_at_optimal + 1e-12


def test_shares_without_failures_are_the_pauses_only():
    shares = time_shares(600.0, 6.0, 600.0, None)
    assert shares == pytest.approx((600 / 606, 0.0, 6 / 606, 0.0))
    f = figures(gpu_failures_per_hour=0.0, **LLAMA)
    assert f.mtti_s is None and f.optimal_s is None and f.goodput_at_optimal == 1.0


def test_report_keys_stay_and_new_ones_are_added():
    report = evaluate(Workload(**LLAMA), Parallelism(tp=8, pp=16, dp=128, zero=1)).to_dict()["failures"]
    old = ["interruptions_per_day", "mean_time_to_interrupt_s", "checkpoint_bytes", "checkpoint_write_s",
           "young_interval_s", "daly_interval_s", "interval_s", "lost_work_per_interruption_s",
           "lost_work_per_day_s", "goodput", "goodput_at_daly"]
    assert list(report)[:len(old)] == old
    assert {"checkpoint_mode", "optimal_interval_s", "interval_bound", "lost_work_share", "checkpoint_stall_share",
            "recovery_share", "detection_share", "comm_init_s"} <= set(report)
    assert report["lost_work_per_interruption_s"] == pytest.approx(report["recompute_per_interruption_s"]
                                                                    + report["recovery_s"])


def test_mode_costs_follow_the_modes_definitions():
    costs = {mode: mode_costs(mode, 5.8e12, 16384, 100e9, 100e9, 45e9) for mode in CHECKPOINT_MODES}
    write, snap = 5.8e12 / 100e9, snapshot_s(5.8e12 / 16384)
    assert costs["blocking"].stall_s == pytest.approx(snap + write) and costs["blocking"].background_s == 0
    assert costs["async"].stall_s == pytest.approx(snap) and costs["async"].background_s == pytest.approx(write)
    assert costs["async"].lag_s == pytest.approx(snap + write) == costs["blocking"].lag_s
    assert costs["in_memory"].background_s == pytest.approx(write / cal.IN_MEMORY_PERSIST_EVERY)
    assert costs["in_memory"].bound == "persist" and costs["async"].bound == "persist"
    assert optimal_interval(costs["async"], None) == (None, None)
    assert young_interval(snap, 3600) < young_interval(snap + write, 3600)


def test_the_recovery_constants_are_the_fits_that_tools_reproduce():
    from labtools.fit_calibration import fit_recovery
    overhead, rate, init = fit_recovery()
    assert cal.CHECKPOINT_SNAPSHOT_OVERHEAD_S == pytest.approx(overhead, abs=5e-4)
    assert cal.CHECKPOINT_SNAPSHOT_BYTES_PER_S == pytest.approx(rate, rel=5e-3)
    assert cal.COMM_INIT_S_PER_GPU == init
