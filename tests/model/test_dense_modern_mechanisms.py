"""Mechanisms of the dense time model on today's stacks (issues 14 and 15):
torchtitan's separate query/key/value GEMMs, Llama 3's all-gather context
parallelism and Meta's power-capped H100 preset. Each test names the
behaviour a published run depends on, so a change that undoes it fails here."""
import pytest

from lab_core import GPU_PRESETS, Parallelism, Workload, evaluate
from lab_core.activations import gathered_input_bytes
from lab_core.context import context_for
from lab_core.efficiency import layer_gemm_seconds

# Llama 3.1 8B as torchtitan's benchmarks run it (content/validation/end_to_end.yaml, torchtitan_h100).
LLAMA_8B = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=21504, vocab=128256, seq_len=8192,
                dropout=False, flash_attention=True, gpus=64, global_batch_tokens=96 * 8192)
TP8 = Parallelism(tp=8, dp=8, zero=3, recompute="selective", micro_batch=12, sequence_parallel=True)


def _step(**overrides):
    workload = Workload(**dict(LLAMA_8B, **overrides))
    return evaluate(workload, TP8).to_dict()["time"]


def test_separate_key_and_value_gemms_cost_their_narrow_shape_under_tensor_parallelism():
    device = GPU_PRESETS["h100_80gb"]
    args = (device, "bf16", 12 * 8192, 4096, 21504, 0.25)
    fused, separate = layer_gemm_seconds(*args, 8, fused_qkv=True), layer_gemm_seconds(*args, 8, fused_qkv=False)
    # K and V are 4096 x 128 per GPU at t = 8: far below the fused 768-wide GEMM's rate.
    assert separate > 1.05 * fused
    # Without tensor parallelism the three GEMMs are nearly as wide as the fused one.
    assert layer_gemm_seconds(*args, 1, fused_qkv=False) < 1.02 * layer_gemm_seconds(*args, 1, fused_qkv=True)


def test_torch_native_runs_three_projection_gemms_and_megatron_core_one():
    assert context_for(Workload(**dict(LLAMA_8B, stack="torch_native"))).fused_qkv is False
    assert context_for(Workload(**dict(LLAMA_8B, stack="modern"))).fused_qkv is True
    torch_native, modern = (_step(stack=stack, gpu="h100_80gb") for stack in ("torch_native", "modern"))
    assert torch_native["forward_s"] > modern["forward_s"]


@pytest.mark.parametrize("stack", ("modern", "megatron_lm_2021"))
def test_all_gather_context_parallelism_exposes_the_whole_exchange(stack):
    workload = dict(LLAMA_8B, gpus=8, seq_len=65536, global_batch_tokens=4 * 65536, stack=stack)
    plan = Parallelism(cp=2, dp=4, zero=3, recompute="full", micro_batch=1)
    ring, gathered = (evaluate(Workload(**dict(workload, cp_all_gather=on)), plan).to_dict()["time"]
                      for on in (False, True))
    assert gathered["cp_comm_total_s"] == pytest.approx(ring["cp_comm_total_s"])
    assert gathered["cp_comm_s"] == pytest.approx(gathered["cp_comm_total_s"])
    assert gathered["cp_comm_s"] >= ring["cp_comm_s"]
    assert gathered["step_s"] >= ring["step_s"]


def test_meta_power_capped_h100_sits_between_the_nvl_and_sxm_parts():
    capped, sxm = GPU_PRESETS["h100_96gb_500w"], GPU_PRESETS["h100_80gb"]
    assert 835e12 < capped.peak_flops < sxm.peak_flops
    assert capped.fp8_peak_flops == pytest.approx(2.0 * capped.peak_flops)
    assert capped.hbm_bytes_per_s == pytest.approx(2.4e12) and capped.memory_bytes == pytest.approx(96e9)
    assert _step(gpu="h100_96gb_500w")["step_s"] > _step(gpu="h100_80gb")["step_s"]


def test_fp8_weight_gather_halves_the_layer_gathers_of_fp8_runs_only():
    """torchtitan's 405B Float8 config gathers FSDP weights in FP8 (enable_fsdp_float8_all_gather)."""
    llama_405b = dict(layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=79872, vocab=128256, seq_len=8192,
                      dropout=False, gpus=128, global_batch_tokens=32 * 8192, gpu="h100_96gb_500w",
                      stack="torch_native")
    plan = Parallelism(tp=8, dp=16, zero=3, recompute="full", micro_batch=2, sequence_parallel=True)

    def zero3(**overrides):
        return evaluate(Workload(**dict(llama_405b, **overrides)), plan).to_dict()["time"]

    plain, gathered = zero3(precision="fp8"), zero3(precision="fp8", fp8_weight_gather=True)
    assert gathered["zero_comm_total_s"] < 0.6 * plain["zero_comm_total_s"]
    assert gathered["step_s"] < plain["step_s"]
    # In 16-bit the switch changes nothing: the weights are not FP8.
    assert zero3(precision="bf16", fp8_weight_gather=True) == zero3(precision="bf16")


@pytest.mark.parametrize("tp", (1, 8))
def test_a_compiled_loss_keeps_the_16_bit_logits_and_their_gradient_on_torch_native_only(tp):
    """torchtitan's --training.compile compiles the loss (torchtitan/components/loss.py): 4 bytes per
    logit instead of the eager 12 (16 with the vocabulary split); the step time does not change."""
    plan = Parallelism(tp=tp, dp=64 // tp, zero=3, recompute="selective", micro_batch=2, sequence_parallel=tp > 1)

    def report(**overrides):
        return evaluate(Workload(**dict(LLAMA_8B, global_batch_tokens=128 * 8192, **overrides)), plan).to_dict()

    eager, compiled = (report(stack="torch_native", compiled_loss=on) for on in (False, True))
    logits = 2 * 8192 * 128256 / tp  # one micro-batch's logits on one GPU
    assert eager["memory"]["loss_bytes"] == pytest.approx((16.0 if tp > 1 else 12.0) * logits)
    assert compiled["memory"]["loss_bytes"] == pytest.approx(4.0 * logits)
    assert eager["memory"]["total_bytes"] - compiled["memory"]["total_bytes"] == pytest.approx(
        eager["memory"]["loss_bytes"] - compiled["memory"]["loss_bytes"])
    assert compiled["time"] == eager["time"]
    # Megatron's own fused cross-entropy is another switch: the modern stack's loss stays as it was.
    assert report(stack="modern", compiled_loss=True)["memory"] == report(stack="modern")["memory"]


def test_transformer_engine_attention_gives_the_pytorch_stack_the_megatron_stacks_attention_rate():
    """NeMo AutoModel runs FSDP2 (torch_native) with Transformer Engine's attention: the attention
    kernel's factor is the modern stack's (calibration.STACK_ATTENTION_EFFICIENCY), the rest stays
    the PyTorch stack's; on the other stacks the switch changes nothing."""
    def contexts(stack):
        return [context_for(Workload(**dict(LLAMA_8B, stack=stack, te_attention=on))) for on in (False, True)]

    sdpa, te = contexts("torch_native")
    modern = context_for(Workload(**dict(LLAMA_8B, stack="modern")))
    assert sdpa.attention_factor < te.attention_factor == modern.attention_factor
    assert te.compute_factor == sdpa.compute_factor and te.fused_qkv is sdpa.fused_qkv is False
    plain, switched = (_step(stack="torch_native", te_attention=on) for on in (False, True))
    assert switched["forward_s"] < plain["forward_s"]
    for stack in ("modern", "megatron_lm_2021"):
        assert _step(stack=stack, te_attention=True) == _step(stack=stack)


def _activations(tp_overlap, stack="torch_native", precision="bf16", recompute="full"):
    workload = Workload(**dict(LLAMA_8B, stack=stack, precision=precision, tp_comm_overlap=tp_overlap, gpu="h100_80gb"))
    plan = Parallelism(tp=8, dp=8, zero=3, recompute=recompute, micro_batch=2, sequence_parallel=True)
    return evaluate(workload, plan).activations_bytes


@pytest.mark.parametrize("recompute", ("none", "selective", "full"))
def test_eager_pytorch_tensor_parallelism_keeps_the_gathered_gemm_inputs(recompute):
    """torchtitan's TP plan all-gathers the attention's and the MLP's input before
    their column-parallel GEMMs, which save it whole (activations.gathered_input_bytes);
    its asynchronous TP and Megatron keep the sequence shard."""
    s, b, h, t = LLAMA_8B["seq_len"], 2, LLAMA_8B["hidden"], 8
    eager, fused = _activations(False, recompute=recompute), _activations(True, recompute=recompute)
    # Under per-op selective checkpointing the gathers are not saved but replayed: the extra is the one
    # layer rebuilt in the backward; full recompute likewise; without recompute every layer keeps it.
    layers = 32 if recompute == "none" else 1
    assert eager - fused == pytest.approx(layers * gathered_input_bytes(s, b, h, t, 2), rel=1e-9)
    assert _activations(False, "modern", recompute=recompute) == _activations(True, "modern", recompute=recompute)
    # torchao's float8 TP gathers FP8: half the bytes of the gathered copy.
    fp8 = _activations(False, precision="fp8", recompute=recompute) - _activations(True, precision="fp8",
                                                                                    recompute=recompute)
    assert fp8 == pytest.approx(layers * gathered_input_bytes(s, b, h, t, 1), rel=1e-9)
    assert 0.0 < fp8 < eager - fused


def test_gathered_inputs_never_take_less_than_the_shard_they_replace():
    for t in (2, 4, 8):
        for value_bytes in (1, 2):
            assert gathered_input_bytes(4096, 1, 4096, t, value_bytes) >= 0.0


def test_tensor_parallel_overlap_waits_on_the_collectives_each_stack_cannot_start_early():
    from lab_core.stack import least_tp_overlap_waiting_share, tp_overlap_waiting_share
    # Transformer Engine: of a layer's 4 forward and 4 backward collectives only the 2 forward
    # reduce-scatters after the row-parallel GEMMs wait; a full replay adds 4 more, 2 of them waiting.
    assert tp_overlap_waiting_share("modern", "none") == pytest.approx(2 / 8)
    assert tp_overlap_waiting_share("modern", "selective") == pytest.approx(2 / 8)
    assert tp_overlap_waiting_share("modern", "full") == pytest.approx(4 / 12)
    # PyTorch's async TP: the reduce-scatter of every all-gather / reduce-scatter pair waits.
    assert tp_overlap_waiting_share("torch_native", "full") == 0.5
    assert least_tp_overlap_waiting_share("modern") == pytest.approx(0.25)


@pytest.mark.parametrize("stack", ("modern", "torch_native"))
def test_overlapped_tensor_parallelism_exposes_one_ring_step_of_the_waiting_collectives(stack):
    from lab_core import calibration as cal
    from lab_core.stack import tp_overlap_waiting_share
    from lab_core.step_time import layer_kinds
    workload = Workload(**dict(LLAMA_8B, stack=stack, gpu="h100_80gb", tp_comm_overlap=True))
    ctx = context_for(workload)
    dense, _ = layer_kinds(ctx, TP8)
    comm = dense.times.tp_comm
    waiting = tp_overlap_waiting_share(stack, TP8.recompute) * comm / TP8.tp
    # The GEMMs are long enough to hide the rest: what waits, plus the contention on the hidden rest.
    assert 3.0 * dense.times.gemm_forward > comm - waiting
    assert dense.tp_exposed == pytest.approx(waiting + cal.COMM_CONTENTION * (comm - waiting))


@pytest.mark.parametrize("recompute", ("none", "selective", "full"))
def test_flash_attention_backward_recompute_is_the_named_teaching_assumption(monkeypatch, recompute):
    from lab_core import calibration as cal
    par = Parallelism(tp=8, dp=8, zero=3, recompute=recompute, micro_batch=12, sequence_parallel=True)
    workload = Workload(**dict(LLAMA_8B, stack="modern", gpu="h100_80gb"))
    before = evaluate(workload, par).to_dict()["time"]["recompute_s"]
    monkeypatch.setattr(cal, "FLASH_BACKWARD_RECOMPUTE", 0.5)
    after = evaluate(workload, par).to_dict()["time"]["recompute_s"]
    # Full recompute's replayed forward stands in for the kernel's own replay; the other modes pay it.
    assert (after == before) if recompute == "full" else (after < before)
