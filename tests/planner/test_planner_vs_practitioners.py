"""The planner never loses, by the lab's own model, to the layout practitioners ran
for the same workload (issue 14/15): the published runs of scenarios/, Llama 3
405B with its 126 layers and uneven 7/7 split, a long-context run that needs
context parallelism and a mixture of experts that needs expert parallelism."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.planner import recommend
from lab_core.planner.assumptions import TIE_TOLERANCE
from labsite.scenarios import load_scenarios

# Llama 3 405B (arXiv:2407.21783 Sec 3.3.2, Table 4): 126 layers, 16,384 H100s,
# 2,048 sequences of 8,192 tokens, no dropout, the modern stack.
LLAMA3 = dict(params=405e9, gpus=16384, gpu="h100_80gb", global_batch_tokens=2048 * 8192, seq_len=8192,
              layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=79872, vocab=128256, dropout=False,
              inter_node_gbps=400, state_bytes_per_param=18, training_tokens=15.6e12)
LLAMA3_LAYOUT = dict(tp=8, pp=16, dp=128, sequence_parallel=True, micro_batch=1, interleave=8,
                     first_stage_layers=7, last_stage_layers=7)
# DeepSeek-V3 on 2,048 H800s (content/validation/end_to_end.yaml, group deepseek_v3), tokens
# crossing nodes once per target node (arXiv:2412.19437 Sec 3.2.2).
DEEPSEEK_V3 = dict(params=671e9, moe_dispatcher="per_node", layers=61, hidden=7168, heads=128, kv_heads=128,
                   head_dim=192, v_head_dim=128, q_lora_rank=1536, kv_lora_rank=512, ffn_hidden=27648, vocab=129280, experts=256, experts_per_token=8, expert_ffn_hidden=3072,
                   shared_experts=1, dense_layers=3, gpus=2048,
                   global_batch_tokens=15360 * 4096, seq_len=4096, gpu="h800_80gb", inter_node_gbps=400,
                   precision="fp8", dropout=False,
                   # It recomputes its norms, latent up-projections and SwiGLU outputs (Sec 3.2.3, 3.3.2).
                   recompute_modules=("layernorm", "mla_up_proj", "moe_act"))


def _goodput(workload, par):
    goodput = context_for(workload).failures.goodput
    return evaluate(workload, par).tokens_per_s * (goodput if goodput > 0.0 else 1.0)


def _published():
    out = [(s.id, s.workload_object(), Parallelism(**s.parallelism)) for s in load_scenarios() if s.published]
    w = Workload(**LLAMA3)
    out += [("llama3-405b-126-layers-zero%d" % z, w, Parallelism(zero=z, **LLAMA3_LAYOUT)) for z in (1, 2)]
    return out


GRID_FIELDS = ("tp", "cp", "pp", "dp", "ep", "first_stage_layers", "last_stage_layers")


@pytest.mark.parametrize("name,workload,par", _published(), ids=lambda x: x if isinstance(x, str) else "")
def test_plan_is_at_least_as_good_as_the_published_layout(name, workload, par):
    plan = recommend(workload)
    assert plan.fits and plan.gpus_used == workload.gpus
    usable = plan.usable_bytes
    theirs = evaluate(workload, par)
    if theirs.memory_bytes <= usable:
        assert plan.goodput_tokens_per_s >= _goodput(workload, par) * (1.0 - 1e-12), name
    # Their grid with the rest searched (pins): the best of it that fits never beats the plan.
    on_their_grid = recommend(workload, {field: getattr(par, field) for field in GRID_FIELDS})
    assert on_their_grid.fits, name
    assert plan.goodput_tokens_per_s >= on_their_grid.goodput_tokens_per_s * (1.0 - 1e-12), name


def test_published_runs_include_gpt3_bloom_and_llama3():
    assert {"gpt3-175b-ptdp", "bloom-176b", "llama3-405b"} <= {name for name, _, _ in _published()}


def test_long_context_llama3_uses_context_parallelism():
    w = Workload(**dict(LLAMA3, seq_len=131072, global_batch_tokens=128 * 131072))
    plan = recommend(w)
    assert plan.fits and plan.parallelism.cp > 1
    # Llama 3's own 128K layout (Table 4: TP 8, CP 16, PP 16, DP 4).
    theirs = Parallelism(tp=8, cp=16, pp=16, dp=8, zero=1, sequence_parallel=True, first_stage_layers=7,
                         last_stage_layers=7)
    assert plan.goodput_tokens_per_s >= _goodput(w, theirs)


@pytest.mark.parametrize("dispatcher", ["per_node", "all_to_all"])
def test_mixture_of_experts_uses_expert_parallelism(dispatcher):
    w = Workload(**dict(DEEPSEEK_V3, moe_dispatcher=dispatcher))
    plan = recommend(w)
    assert plan.fits and plan.parallelism.ep > 1
    # DeepSeek-V3's own layout (arXiv:2412.19437 Sec 3.2): PP 16 (2 layers first, 3 last), EP 64, ZeRO-1,
    # with its selective recompute.
    theirs = Parallelism(pp=16, dp=128, ep=64, zero=1, recompute="selective", first_stage_layers=2,
                         last_stage_layers=3)
    assert plan.goodput_tokens_per_s >= _goodput(w, theirs)
    # Their grid is one the planner searches: pinned to it, it finds their layout or a better one.
    pinned = recommend(w, {"tp": 1, "pp": 16, "ep": 64, "first_stage_layers": 2, "last_stage_layers": 3})
    assert pinned.fits and pinned.goodput_tokens_per_s >= _goodput(w, theirs) * (1.0 - 1e-12)


def test_plan_dict_carries_context_and_expert_parallelism():
    out = recommend(Workload(**DEEPSEEK_V3)).to_dict()
    par = out["parallelism"]
    assert {"cp", "ep", "first_stage_layers", "last_stage_layers"} <= set(par)
    assert par["tp"] * par["cp"] * par["pp"] * par["dp"] == out["gpus"]["used"]


def test_multi_token_prediction_is_planned_at_least_as_well_as_megatron_bridge_lays_it():
    """Megatron-Bridge's DeepSeek-V3 recipe on 1,024 H100s (content/validation/end_to_end.yaml, group
    moe_mbridge_h100): its multi-token-prediction module on the last stage, which its layout
    "Et|(tt|)*30mL" lightens (7 layers on the first rank, 6 and the module on the last). The planner
    searches such splits (space.pipeline_splits), so it never loses to it, pinned to its grid or not."""
    w = Workload(**dict(DEEPSEEK_V3, gpus=1024, gpu="h100_80gb", global_batch_tokens=8192 * 4096, mtp_layers=1,
                        recompute_modules=("mla_up_proj", "mlp")))
    theirs = Parallelism(tp=2, pp=8, dp=64, ep=64, zero=1, recompute="selective", sequence_parallel=True,
                         interleave=4, first_stage_layers=7, last_stage_layers=6)
    assert evaluate(w, theirs).memory_bytes <= recommend(w).usable_bytes
    plan = recommend(w)
    assert plan.fits and plan.goodput_tokens_per_s >= _goodput(w, theirs) * (1.0 - 1e-12)
    # On their grid the search's best beats theirs; the plan it picks is the simplest within the tie band
    # (here ZeRO-0 instead of their ZeRO-1).
    pinned = recommend(w, {"tp": 2, "pp": 8, "ep": 64, "first_stage_layers": 7, "last_stage_layers": 6})
    assert pinned.fits and pinned.search["best_goodput_tokens_per_s"] >= _goodput(w, theirs) * (1.0 - 1e-12)
    assert pinned.goodput_tokens_per_s >= _goodput(w, theirs) * (1.0 - TIE_TOLERANCE)
    # The module makes the last stage the heavier end: an even-ended split of the same grid is slower.
    heavier = Parallelism(**dict(theirs.to_dict(), first_stage_layers=5, last_stage_layers=8))
    assert _goodput(w, heavier) < _goodput(w, theirs)
