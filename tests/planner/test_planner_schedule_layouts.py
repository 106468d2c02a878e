"""Under DualPipe and DualPipeV a grid whose replica batch leaves no micro-batch count the
schedule can run (at least 2 pp of them, an even number for DualPipe) is no layout at all
(planner/space.py Space.schedule_runs): the planner uses the GPUs of a layout that can run,
and never fails for want of one. Workloads from a random sweep that once raised
AttributeError in recommend()."""
import pytest

from lab_core import Workload, evaluate
from lab_core.errors import LabInputError
from lab_core.parallelism import schedule_allows
from lab_core.planner import recommend
from lab_core.planner.space import divisors, space_for

# 11.1B on 16 A100: 263 sequences (a prime), so a pipeline would run 1 or 263 micro-batches,
# and DualPipe needs an even count: only one 8-GPU node (TP 8, no pipeline) can run it.
PRIME_BATCH = dict(params=11.1e9, gpus=16, pipeline_schedule="dualpipe", seq_len=2048, global_batch_tokens=539177,
                   gpu="a100_80gb")
# A mixture of experts on 96 B200 with 126 layers and 314 sequences (2 x 157).
MOE_96 = dict(params=79.4e9, layers=126, experts=16, experts_per_token=1, shared_experts=1, gpus=96,
              global_batch_tokens=2572804, seq_len=8192, gpu="b200_192gb", precision="fp8",
              pipeline_schedule="dualpipe", flash_attention=False, inter_node_gbps=31.5, dropout=False)
# 1.5B on 256 B200 with DualPipeV and 16 sequences.
SMALL_BATCH = dict(params=1.5e9, gpus=256, global_batch_tokens=131072, seq_len=8192, gpu="b200_192gb",
                   pipeline_schedule="dualpipev", experts=8, dense_layers=1, mtp_layers=1, stack="torch_native",
                   inter_node_gbps=219.0)


def _runs(schedule, batch, par):
    replica = batch // par.dp
    return par.pp == 1 or any(schedule_allows(schedule, par.pp, replica // b) for b in divisors(replica))


@pytest.mark.parametrize("kw", [PRIME_BATCH, MOE_96, SMALL_BATCH])
def test_the_planner_answers_with_a_layout_the_schedule_runs(kw):
    w = Workload(**kw)
    for budget in (None, 1, 24):
        plan = recommend(w, budget=budget)
        par = plan.parallelism
        assert _runs(w.pipeline_schedule, w.batch_sequences, par)
        evaluate(Workload(**dict(kw, gpus=plan.gpus_used)), par)  # a layout lab_core accepts
        assert plan.gpus_used <= w.gpus


def test_a_prime_batch_under_dualpipe_runs_on_one_node_without_a_pipeline():
    plan = recommend(Workload(**PRIME_BATCH))
    assert plan.gpus_used == 8 and plan.parallelism.pp == 1 and plan.parallelism.tp == 8


def test_grids_the_schedule_cannot_run_are_not_layouts():
    w = Workload(**PRIME_BATCH)
    space = space_for(w)
    assert space.layouts(16) == []
    assert space.largest_usable(16) == 8
    # The same workload under 1F1B keeps its pipelined 16-GPU layouts.
    assert space_for(Workload(**dict(PRIME_BATCH, pipeline_schedule="1f1b"))).layouts(16)


def test_a_pin_whose_full_gpu_count_cannot_run_uses_fewer_gpus():
    """CP 2 on all 256 GPUs with 16 sequences needs a pipeline DualPipeV cannot fill: the pinned plan
    leaves GPUs idle, as an unpinned one does, instead of failing."""
    w = Workload(**SMALL_BATCH)
    plan = recommend(w, pins={"cp": 2})
    assert plan.fits and plan.parallelism.cp == 2 and plan.gpus_used < w.gpus
    assert _runs(w.pipeline_schedule, w.batch_sequences, plan.parallelism)
    # A pipeline of 2 on 4 replicas runs 4 micro-batches each, the 2 pp DualPipeV needs.
    piped = recommend(w, pins={"cp": 2, "pp": 2}).parallelism
    assert piped.pp == 2 and _runs(w.pipeline_schedule, w.batch_sequences, piped)


def test_a_pinned_layout_the_schedule_cannot_run_is_refused():
    """Pinned DP 16 leaves one sequence per replica: no pipeline DualPipeV can fill."""
    with pytest.raises(LabInputError) as err:
        recommend(Workload(**SMALL_BATCH), pins={"dp": 16, "pp": 2})
    assert err.value.field in ("dp", "pp") and err.value.reason == "inconsistent"
