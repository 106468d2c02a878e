"""Issue 15's memory properties, over random workloads and layouts: expert parallelism never
raises a GPU's expert memory, and context parallelism never raises a GPU's activations."""
import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.gpu_memory import model_stages, stage_params
from lab_core.parallelism import check_layout


def _report(w, **par):
    try:
        return evaluate(w, Parallelism(**par))
    except LabInputError:
        return None


@settings(max_examples=150, deadline=None)
@given(log_params=st.floats(math.log(5e9), math.log(7e11)), experts=st.sampled_from([8, 16, 64, 256]),
       per_token=st.sampled_from([1, 2, 8]), dense_layers=st.integers(0, 3), tp=st.sampled_from([1, 2, 4, 8]),
       pp=st.sampled_from([1, 2, 4]), dp=st.sampled_from([1, 2, 4, 8, 16]), zero=st.integers(0, 3),
       recompute=st.sampled_from(["none", "selective", "full"]), ep_log=st.integers(0, 5))
def test_more_expert_parallelism_never_raises_a_gpus_expert_memory(log_params, experts, per_token, dense_layers, tp,
                                                                   pp, dp, zero, recompute, ep_log):
    """Doubling EP (folded into the same TP x CP x DP ranks) never raises the expert parameters a GPU
    of any stage holds, nor the most loaded GPU's training state."""
    try:
        w = Workload(params=math.exp(log_params), experts=experts, experts_per_token=min(per_token, experts),
                     dense_layers=dense_layers, gpus=tp * pp * dp, seq_len=4096, global_batch_tokens=64 * 4096)
    except LabInputError:
        return
    ep = 2 ** ep_log
    common = dict(tp=tp, pp=pp, dp=dp, zero=zero, recompute=recompute, sequence_parallel=tp > 1)
    fewer, more = _report(w, ep=ep, **common), _report(w, ep=2 * ep, **common)
    assume(fewer is not None and more is not None)
    ctx = context_for(w)

    def expert_per_stage(par_ep):
        layout = check_layout(w, Parallelism(ep=par_ep, **common))
        return [stage_params(ctx, tp, stage, pp, par_ep)[1]
                for stage in model_stages(ctx, pp, layout.first_layers, layout.middle_layers, layout.last_layers)]
    assert all(b <= a for a, b in zip(expert_per_stage(ep), expert_per_stage(2 * ep)))
    state = lambda r: r.weights_bytes + r.gradients_bytes + r.optimizer_bytes  # noqa: E731
    assert state(more) <= state(fewer) * (1 + 1e-12)


@settings(max_examples=80, deadline=None)
@given(log_params=st.floats(math.log(1e9), math.log(4e11)), log_seq=st.integers(12, 17),
       tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]), dp=st.sampled_from([1, 2, 4]),
       cp_log=st.integers(0, 3), recompute=st.sampled_from(["none", "selective", "full"]),
       all_gather=st.booleans(), moe=st.booleans())
def test_more_context_parallelism_never_raises_a_gpus_activations(log_params, log_seq, tp, pp, dp, cp_log, recompute,
                                                                   all_gather, moe):
    """Doubling CP (on twice the GPUs, the same TP, PP and DP) never raises the most loaded GPU's
    activations, ring or all-gather exchange alike."""
    seq, cp = 2 ** log_seq, 2 ** cp_log
    extra = dict(experts=8, experts_per_token=2) if moe else {}
    def workload(c):
        return Workload(params=math.exp(log_params), gpus=tp * pp * dp * c, seq_len=seq,
                        global_batch_tokens=4 * dp * seq, cp_all_gather=all_gather, **extra)
    try:
        fewer_w, more_w = workload(cp), workload(2 * cp)
    except LabInputError:
        return
    common = dict(tp=tp, pp=pp, dp=dp, recompute=recompute, sequence_parallel=tp > 1, zero=1)
    fewer, more = _report(fewer_w, cp=cp, **common), _report(more_w, cp=2 * cp, **common)
    assume(fewer is not None and more is not None)
    assert more.activations_bytes <= fewer.activations_bytes * (1 + 1e-12)
