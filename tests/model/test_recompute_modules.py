"""Megatron-Core's selective recompute modules (lab_core.recompute_modules) and the
attention's own widths in the activation count (activations.attention_units, latent_units):
each module's saving against its source's tensors, the h-wide shape unchanged to the bit,
the replay it costs, what the planner and the exports make of it."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core.activations import attention_units, latent_units, module_savings, output_units, per_layer_bytes
from lab_core.attention import AttentionShape, standard
from lab_core.calibration import GATED_MLP_INNER_SHARE
from lab_core.context import context_for
from lab_core.planner import recommend
from lab_core.planner.search import recompute_modes
from lab_core.presets import preset_inputs
from lab_core.recompute_modules import DEFAULT_RECOMPUTE_MODULES, RECOMPUTE_MODULES, canonical

DEEPSEEK_V3 = dict(preset_inputs("deepseek-v3"), gpus=2048, gpu="h800_80gb", global_batch_tokens=62914560,
                   seq_len=4096, precision="fp8", dropout=False, moe_dispatcher="per_node")
# DeepSeek-V3's published layout (arXiv:2412.19437 Sec 3.2).
LAYOUT = dict(tp=1, pp=16, dp=128, ep=64, zero=1, first_stage_layers=2, last_stage_layers=3)
# MLA of DeepSeek-V3: 128 heads of 192 (queries, keys) and 128 (values), latents 1,536 and 512.
MLA = AttentionShape(128 * 192, 128 * 128, 1.0, 1536, 512)


def test_the_h_wide_shape_keeps_korthikantis_count_to_the_bit():
    for args in [(2048, 1, 12288, 96, 8, True), (4096, 2, 8192, 64, 4, False), (8192, 1, 4096, 32, 1, False)]:
        s, b, h, a, t, sp = args
        for r in (1.0, 0.125):
            for fp8 in (False, True):
                for recompute in ("none", "selective", "full"):
                    plain = per_layer_bytes(s, b, h, a, t, sp, recompute, True, 3.5 * h, r, False, fp8)
                    assert per_layer_bytes(s, b, h, a, t, sp, recompute, True, 3.5 * h, r, False, fp8,
                                           attention=standard(h, r)) == plain


def test_attention_units_follow_the_heads_widths():
    # Qwen3-235B: 64 query heads of 128 on a 4,096 hidden size, 4 key/value heads.
    qwen3 = AttentionShape(64 * 128, 64 * 128, 4 / 64)
    assert attention_units(qwen3, 4096) == pytest.approx(2 * (1 + 1 / 16) * 16384 / 4096)
    assert attention_units(qwen3, 4096) == pytest.approx(2 * attention_units(None, 4096, 1 / 16))
    # DeepSeek-V3: queries and keys 24,576 wide, values and the core output 16,384.
    assert attention_units(MLA, 7168) == pytest.approx(2 * (24576 + 24576 + 16384 + 16384) / 7168)
    assert output_units(MLA, 7168) == pytest.approx(2 * 16384 / 7168)
    # Its latents: each norm's input (2 bytes) and output (the up-projection's input, 1 byte in FP8).
    assert latent_units(MLA, 7168) == pytest.approx(4 * 2048 / 7168)
    assert latent_units(MLA, 7168, fp8_inputs=True) == pytest.approx(3 * 2048 / 7168)
    assert latent_units(standard(7168), 7168) == 0.0


S, B, H = 4096, 1, 7168
SBH = float(S * B * H)


@pytest.mark.parametrize("t, sp, fp8", [(1, False, False), (2, True, False), (8, False, True), (4, True, True)])
def test_each_module_drops_its_own_tensors(t, sp, fp8):
    value = 1.0 if fp8 else 2.0
    replicated, sharded = SBH / (t if sp else 1), SBH / t
    mlp_units = 3.0 if fp8 else 4.0
    f, routed, shared, copies = 3.5 * H, 8 * 3072.0, 3072.0, 12345.0

    def saved(*modules, **widths):
        return module_savings(S, B, H, t, sp, modules, MLA, fp8, **widths)

    # The two norms' outputs, the next GEMMs' inputs.
    assert saved("layernorm", mlp_width=f) == pytest.approx(2 * value * replicated)
    # The expanded queries, keys and values (not the core's output).
    assert saved("mla_up_proj") == pytest.approx(2 * (24576 + 24576 + 16384) / H * sharded)
    # The routed experts' activation output: a gated MLP's inner size, 2/3 of the lab's width.
    assert saved("moe_act", routed_width=routed, shared_width=shared) == pytest.approx(
        value * GATED_MLP_INNER_SHARE * routed / H * sharded)
    assert saved("shared_experts", routed_width=routed, shared_width=shared) == pytest.approx(
        mlp_units * shared / H * sharded)
    # Whole modules keep their input in 16 bits where its GEMM kept it in FP8.
    assert saved("mlp", mlp_width=f) == pytest.approx(mlp_units * f / H * sharded - (2 - value) * replicated)
    assert saved("moe", routed_width=routed, shared_width=shared, dispatched=copies) == pytest.approx(
        mlp_units * (routed + shared) / H * sharded + copies - (2 - value) * replicated)
    # The layer's own modules only: an MoE module in a dense layer, mlp in an MoE layer, drop nothing.
    assert saved("moe_act", "moe", "shared_experts", mlp_width=f) == 0.0
    assert saved("mlp", routed_width=routed, shared_width=shared) == 0.0
    # With its MLP checkpointed whole, layernorm drops only the attention's norm output.
    assert saved("layernorm", "mlp", mlp_width=f) == pytest.approx(saved("mlp", mlp_width=f) + value * replicated)
    assert module_savings(S, B, H, t, sp, ("mla_up_proj",), standard(H), fp8) == 0.0


def test_names_are_read_in_any_form_and_kept_in_megatrons_order():
    assert canonical("moe_act, layernorm") == ("layernorm", "moe_act")
    assert canonical(["mla_up_proj", "core_attn", "mla_up_proj"]) == ("core_attn", "mla_up_proj")
    assert canonical("mlp；moe".replace("；", ";")) == ("mlp", "moe")
    assert canonical("") == ()
    with pytest.raises(LabInputError) as err:
        canonical("layernorm, attn")
    assert err.value.field == "recompute_modules" and err.value.value == "attn"
    assert err.value.reason == "unknown_choice" and all(name in err.value.allowed for name in RECOMPUTE_MODULES)
    with pytest.raises(LabInputError) as err:
        Workload(recompute_modules=3)
    assert err.value.reason == "not_a_list"


@pytest.mark.parametrize("inputs, modules, rule", [
    ({"params": 7e9}, ("moe_act",), "needs_experts"),
    ({"params": 7e9}, ("moe",), "needs_experts"),
    ({"params": 7e9}, ("mla_up_proj",), "needs_mla"),
    (dict(DEEPSEEK_V3, shared_experts=0), ("shared_experts",), "needs_shared"),
    (dict(DEEPSEEK_V3, dense_layers=0), ("mlp",), "needs_dense"),
    (dict(DEEPSEEK_V3, stack="torch_native"), ("layernorm",), "stack"),
    (dict(DEEPSEEK_V3, stack="megatron_lm_2021"), ("mla_up_proj",), "stack"),
])
def test_a_module_the_model_or_stack_lacks_is_refused(inputs, modules, rule):
    with pytest.raises(LabInputError) as err:
        Workload(**dict(inputs, recompute_modules=modules))
    assert err.value.field == "recompute_modules" and err.value.reason == "inconsistent"
    assert err.value.numbers["rule"] == rule
    # The default (the attention core) is every stack's and every model's.
    Workload(**dict(inputs, recompute_modules=DEFAULT_RECOMPUTE_MODULES))


def _run(modules, recompute="selective", **changes):
    w = Workload(**dict(DEEPSEEK_V3, recompute_modules=modules, **changes))
    return evaluate(w, Parallelism(recompute=recompute, **LAYOUT))


def test_deepseek_v3s_own_recompute_fits_its_published_layout():
    """The expanded latent attention keeps 128 heads' queries, keys and values: without the paper's
    recompute (Sec 3.2.3, 3.3.2) its layout does not fit an 80 GB H800; with it, it does."""
    assert not _run(DEFAULT_RECOMPUTE_MODULES, "none").fits
    ours = _run(("layernorm", "mla_up_proj", "moe_act"))
    assert ours.fits
    plain = _run(DEFAULT_RECOMPUTE_MODULES, "none")
    assert ours.activations_bytes < 0.6 * plain.activations_bytes
    # The replay costs time: the up-projection GEMMs and the element-wise norms and activation.
    assert plain.step_s < ours.step_s < 1.05 * plain.step_s
    assert ours.recompute_s > plain.recompute_s
    assert ours.hardware_flops_per_step > plain.hardware_flops_per_step


def test_the_moe_module_replays_the_all_to_alls():
    plain = _run(("moe_act",))
    whole = _run(("moe",))
    assert whole.ep_comm_total_s == pytest.approx(1.5 * plain.ep_comm_total_s)
    assert whole.activations_bytes < plain.activations_bytes


MODULE_SETS = st.sets(st.sampled_from(RECOMPUTE_MODULES)).map(lambda chosen: tuple(chosen))
SHRINKING = ("core_attn", "layernorm", "mla_up_proj", "moe_act", "shared_experts")


@settings(max_examples=60, deadline=None)
@given(modules=MODULE_SETS, added=st.sampled_from(RECOMPUTE_MODULES), tp=st.sampled_from((1, 2, 8)),
       fp8=st.booleans(), flash=st.booleans())
def test_one_more_module_never_shortens_the_step_nor_keeps_more(modules, added, tp, fp8, flash):
    """Recomputing one more module never makes a step faster; one that discards its output (or
    drops a part, shared_experts) never keeps more. mlp and moe keep their 16-bit input, which
    under FP8 can outweigh a thin per-GPU MLP (activations.module_savings), so they are not bound."""
    changes = dict(precision="fp8" if fp8 else "bf16", flash_attention=flash, seq_len=2048)
    layout = dict(LAYOUT, tp=tp, dp=128 // tp)
    w_before = Workload(**dict(DEEPSEEK_V3, recompute_modules=modules, **changes))
    w_after = Workload(**dict(DEEPSEEK_V3, recompute_modules=tuple(set(modules) | {added}), **changes))
    par = Parallelism(recompute="selective", sequence_parallel=tp > 1, **layout)
    before, after = evaluate(w_before, par), evaluate(w_after, par)
    assert after.step_s >= before.step_s * (1.0 - 1e-12)
    if added in SHRINKING:
        assert after.activations_bytes <= before.activations_bytes * (1.0 + 1e-12)


def test_the_planner_searches_selective_when_the_modules_keep_less():
    flash = context_for(Workload(**DEEPSEEK_V3))
    assert "selective" not in recompute_modes(flash.flash, flash.selective_differs)
    ctx = context_for(Workload(**dict(DEEPSEEK_V3, recompute_modules=("mla_up_proj",))))
    assert "selective" in recompute_modes(ctx.flash, ctx.selective_differs)
    # Pinned to DeepSeek-V3's grid with no recompute module, full recompute is what fits; with the
    # paper's modules the planner finds selective recompute, faster.
    pins = {"tp": 1, "pp": 16, "ep": 64, "first_stage_layers": 2, "last_stage_layers": 3}
    plain = recommend(Workload(**DEEPSEEK_V3), pins)
    ours = recommend(Workload(**dict(DEEPSEEK_V3, recompute_modules=("layernorm", "mla_up_proj", "moe_act"))), pins)
    assert ours.fits and ours.parallelism.recompute == "selective"
    assert plain.parallelism.recompute == "full"
    assert ours.goodput_tokens_per_s > plain.goodput_tokens_per_s
