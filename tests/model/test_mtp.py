"""Multi-token prediction (Workload.mtp_layers; arXiv:2412.19437 Sec 2.2, Megatron-Core's
--mtp-num-layers): each module is a layer of the last layer's kind, a 2h x h projection with
its norms and one more pass through the shared output layer, on the stage with the output
layer. Its parameters, FLOPs (against Megatron-Core's count), stages, memory and time."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab_core import LabInputError, Parallelism, Workload, evaluate
from lab_core.context import context_for
from lab_core.flops import layer_forward_flops, logits_forward_flops, moe_layer_forward_flops, shape_model_flops
from lab_core.gpu_memory import model_stages, stage_loss_bytes, stage_memories, stages
from lab_core.parallelism import check_layout, stage_split
from lab_core.presets import preset_inputs
from lab_core.shape import mtp_module_extra_params
from lab_core.step_time import output_layer_times

DEEPSEEK_V3 = dict(preset_inputs("deepseek-v3"), gpus=2048, gpu="h800_80gb", global_batch_tokens=62914560,
                   precision="fp8", moe_dispatcher="per_node")
# Megatron-Bridge's DeepSeek-V3 layout for 16 stages: 4 layers first, 4 on each between, 1 and the module last.
LAYOUT = dict(tp=1, pp=16, dp=128, ep=64, zero=1, first_stage_layers=4, last_stage_layers=1)
LLAMA = dict(preset_inputs("llama3-8b"), gpus=64, global_batch_tokens=4 * 2 ** 20)


def _without(kw):
    return Workload(**dict(kw, mtp_layers=0))


def test_the_deepseek_v3_preset_has_its_one_module():
    assert Workload(**DEEPSEEK_V3).shape.mtp_layers == 1
    assert Workload(**LLAMA).shape.mtp_layers == 0


def test_a_module_adds_a_layer_of_the_last_kind_and_its_projection():
    for kw in (DEEPSEEK_V3, dict(LLAMA, mtp_layers=2)):
        with_mtp, without = Workload(**kw).shape, _without(kw).shape
        n = with_mtp.mtp_layers
        layer = with_mtp.layer_params if with_mtp.experts is None else with_mtp.moe_layer_params
        extra = n * (layer + 2.0 * with_mtp.hidden ** 2 + 3.0 * with_mtp.hidden)
        assert with_mtp.params - without.params == pytest.approx(extra, rel=1e-12)
    # DeepSeek-V3's module: about 11.7B parameters (its released checkpoint: 671B + 14B with the copies of
    # the embedding and the output head the module's checkpoint file carries, 0.93B each).
    delta = Workload(**DEEPSEEK_V3).shape.params - _without(DEEPSEEK_V3).shape.params
    assert 11.3e9 < delta < 12.2e9


def test_model_flops_add_what_megatron_core_counts():
    """megatron/training/training.py num_floating_point_operations: the module's layer as one
    more layer of the last layer's kind, its norms and projection, and one more logit pass."""
    for kw in (DEEPSEEK_V3, dict(LLAMA, mtp_layers=1)):
        w = Workload(**kw)
        shape, B, s = w.shape, w.batch_sequences, w.seq_len
        if shape.experts is None:
            layer = sum(layer_forward_flops(B, s, shape.hidden, shape.ffn_hidden, shape.kv_ratio, shape.attention))
        else:
            layer = sum(moe_layer_forward_flops(B, s, shape.hidden, shape.kv_ratio, shape.experts, shape.attention))
        module = layer + logits_forward_flops(B, s, shape.hidden, shape.vocab) \
            + 2.0 * B * s * (2.0 * shape.hidden ** 2 + 3.0 * shape.hidden)
        added = shape_model_flops(B, s, shape) - shape_model_flops(B, s, _without(kw).shape)
        assert added == pytest.approx(3.0 * module, rel=1e-9)


@pytest.mark.parametrize("pp", [1, 2, 4])
def test_the_modules_sit_on_the_stage_with_the_output_layer(pp):
    kinds = stages(pp, 8, 8, 8, None, mtp=2)
    last = kinds[-1]
    assert last.output and last.mtp == 2 and last.outputs == 3
    assert last.layers == 10 and last.dense == 10  # a dense model's modules are dense
    assert all(k.mtp == 0 and k.outputs == 0 for k in kinds[:-1])
    moe = stages(pp, 8, 8, 8, 1, mtp=1)[-1]
    assert moe.moe == moe.layers - moe.dense and moe.layers == 9 and moe.dense == (1 if pp == 1 else 0)


def test_the_last_stage_holds_the_projection_and_a_copy_of_the_embedding():
    w, w0 = Workload(**DEEPSEEK_V3), _without(DEEPSEEK_V3)
    par = Parallelism(**LAYOUT)
    layout = stage_split(w.shape.layers, par)
    ctx, ctx0 = context_for(w), context_for(w0)
    with_mtp = {m.stage: params for m, params in stage_memories(ctx, par, check_layout(w, par))}
    without = {m.stage: params for m, params in stage_memories(ctx0, par, check_layout(w0, par))}
    shape = w.shape
    extra_shared = shape.moe_layer_shared_params + mtp_module_extra_params(shape.hidden) + shape.vocab * shape.hidden
    assert with_mtp["last"][0] - without["last"][0] == pytest.approx(extra_shared, rel=1e-12)
    assert with_mtp["last"][1] - without["last"][1] == pytest.approx(shape.experts.routed_params / 64, rel=1e-12)
    assert with_mtp["first"] == without["first"] and with_mtp["middle"] == without["middle"]
    last = model_stages(ctx, 16, *layout)[-1]
    last0 = model_stages(ctx0, 16, *layout)[-1]
    assert stage_loss_bytes(ctx, 1, 1, last, 1) == 2 * stage_loss_bytes(ctx0, 1, 1, last0, 1)


def test_the_output_stage_runs_the_output_layer_once_per_module_more():
    ctx, ctx0 = context_for(Workload(**DEEPSEEK_V3)), context_for(_without(DEEPSEEK_V3))
    forward, backward = output_layer_times(ctx, 1, 1, 1)
    forward0, backward0 = output_layer_times(ctx0, 1, 1, 1)
    projection = forward - 2.0 * forward0
    assert projection > 0.0 and backward - 2.0 * backward0 == pytest.approx(2.0 * projection, rel=1e-9)
    # The projection, 2h x h, is a small GEMM beside the 129,280-wide output layer.
    assert projection < 0.2 * forward0


def test_with_the_module_the_published_layout_moves_layers_off_the_last_stage():
    """With two layers first and three last the last stage, with the module and two passes through
    the output layer, is the slowest by far; Megatron-Bridge's split (4 first, 1 last) is not."""
    w = Workload(**DEEPSEEK_V3)
    heavy = evaluate(w, Parallelism(**dict(LAYOUT, first_stage_layers=2, last_stage_layers=3)))
    light = evaluate(w, Parallelism(**LAYOUT))
    assert heavy.bottleneck_stage == "last" and light.tokens_per_s > 1.3 * heavy.tokens_per_s


@settings(max_examples=40, deadline=None)
@given(mtp=st.integers(0, 3), pp=st.sampled_from([1, 2, 4]), tp=st.sampled_from([1, 2]),
       recompute=st.sampled_from(["none", "selective", "full"]))
def test_more_modules_never_shorten_a_step_nor_lighten_the_last_stage(mtp, pp, tp, recompute):
    kw = dict(LLAMA, gpus=64)
    par = Parallelism(tp=tp, pp=pp, dp=64 // (tp * pp), zero=1, recompute=recompute)
    fewer = evaluate(Workload(**dict(kw, mtp_layers=mtp)), par)
    more = evaluate(Workload(**dict(kw, mtp_layers=mtp + 1)), par)
    assert more.step_s >= fewer.step_s
    assert more.model_flops_per_step > fewer.model_flops_per_step
    assert more.memory_bytes >= fewer.memory_bytes


def test_a_module_count_out_of_range_names_the_field_and_the_range():
    with pytest.raises(LabInputError) as caught:
        Workload(**dict(LLAMA, mtp_layers=9))
    assert caught.value.field == "mtp_layers" and "8" in caught.value.allowed
