"""The logits and loss buffers, per-op selective checkpointing and torchao's
FP8 activations (lab_core.activations, gpu_memory), against hand calculations
from their sources (calibration.LOSS_BYTES_PER_LOGIT, torchtitan's per-op
policy, torchao's float8 linear)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab_core import Parallelism, Workload, evaluate
from lab_core import calibration as cal
from lab_core.activations import loss_bytes, per_layer_bytes, per_op_selective_bytes
from lab_core.context import context_for
from lab_core.gpu_memory import stage_loss_bytes, stage_memories, stages
from lab_core.parallelism import check_layout
from lab_core.stack import STACKS

# Llama 3.1 8B as torchtitan trains it (content/validation/end_to_end.yaml, torchtitan_memory).
LLAMA_8B = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=21504, vocab=128256, dropout=False,
                flash_attention=True, gpu="h100_80gb")


def _llama(seq_len=8192, sequences=16, gpus=8, **kw):
    return Workload(params=8e9, gpus=gpus, seq_len=seq_len, global_batch_tokens=sequences * seq_len,
                    **dict(LLAMA_8B, **kw))


def test_loss_bytes_by_hand():
    """32,768 tokens x 128,256 entries: 12 bytes each on torchtitan's eager loss (three fp32 buffers at the
    backward of log-softmax), 6 on Megatron's (bf16 logits + fp32 copy), split over t with vocab parallelism."""
    logits = 32768 * 128256
    assert loss_bytes(32768, 1, 128256, 1, 12.0) == 12 * logits
    assert loss_bytes(8192, 4, 128256, 1, 6.0) == 6 * logits
    assert loss_bytes(32768, 1, 128256, 8, 16.0) == 2 * logits
    assert cal.LOSS_BYTES_PER_LOGIT["torch_native"] == {"one_gpu": 12.0, "vocab_parallel": 16.0}
    assert cal.LOSS_BYTES_PER_LOGIT["modern"] == {"one_gpu": 6.0, "vocab_parallel": 6.0}


def test_per_op_selective_bytes_by_hand():
    """torchtitan's policy keeps the block input and the outputs of wq, wv, w1, w2 (every other of the seven
    GEMMs) and of attention: h + h + h/4 + 14,336 + h + h per token for Llama 3 8B, in bf16."""
    s, b, h = 8192, 2, 4096
    kept = h + h + h // 4 + 14336 + h + h
    assert per_op_selective_bytes(s, b, h, 1, False, 21504, 0.25) == pytest.approx(2 * s * b * kept, rel=1e-12)
    # t = 8 with sequence parallelism: column-parallel outputs / 8, w2's partial sum whole, the input and the two
    # reduce-scatter outputs / 8.
    sharded = (h + h // 4 + 14336 + h) / 8
    expected = 2 * s * b * (sharded + h + 3 * h / 8)
    assert per_op_selective_bytes(s, b, h, 8, True, 21504, 0.25) == pytest.approx(expected, rel=1e-12)


def _memory(w, **layout):
    par = Parallelism(**dict(dict(tp=1, pp=1, dp=w.gpus, zero=3, micro_batch=2), **layout))
    return evaluate(w, par)


def test_torch_native_selective_is_per_op_and_modern_is_korthikanti():
    w = _llama(stack="torch_native")
    r = _memory(w, recompute="selective")
    per_layer = per_op_selective_bytes(8192, 2, 4096, 1, False, 21504, 0.25)
    assert r.activations_per_layer_bytes == pytest.approx(per_layer, rel=1e-12)
    m = _memory(_llama(stack="modern"), recompute="selective")
    assert m.activations_per_layer_bytes == pytest.approx(
        per_layer_bytes(8192, 2, 4096, 32, 1, False, "selective", True, 21504, 0.25, False), rel=1e-12)
    # Per-op checkpointing keeps less than no recompute, so the planner searches it with flash attention on.
    assert r.activations_bytes < _memory(w, recompute="none").activations_bytes


def test_per_op_selective_replays_wk_wo_and_w3_in_time_and_flops():
    """torchtitan's policy recomputes every second of wq, wk, wv, wo, w1, w3, w2: the backward of a
    selective step replays wk (h x h/4), wo (h x h) and w3 (h x 14,336) for Llama 3 8B, on top of flash
    attention's own recompute of its core, and the hardware FLOPs count them (Megatron's selective on the
    modern stack costs nothing more than flash attention's recompute)."""
    from lab_core.efficiency import gemm_rate, per_op_replayed_gemms
    h = 4096
    replayed = per_op_replayed_gemms(h, 21504, 0.25, 1)
    assert [weights for weights, _ in replayed] == pytest.approx([h * h / 4, h * h, h * 14336], rel=1e-12)
    assert [width for _, width in replayed] == pytest.approx([h / 4, h, h], rel=1e-12)
    w = _llama(stack="torch_native")
    none, selective, full = (_memory(w, recompute=mode) for mode in ("none", "selective", "full"))
    ctx = context_for(w)
    tokens = 2 * 8192
    by_hand = sum(2.0 * tokens * weights / gemm_rate(ctx.device, "bf16", tokens, width) for weights, width in replayed)
    extra = 32 * by_hand / ctx.compute_factor
    assert selective.recompute_s - none.recompute_s == pytest.approx(extra, rel=1e-9)
    assert none.step_s < selective.step_s < full.step_s
    replay_flops = 2.0 * 16 * 8192 * 32 * sum(weights for weights, _ in replayed)
    assert selective.hardware_flops_per_step - none.hardware_flops_per_step == pytest.approx(replay_flops, rel=1e-9)
    modern = _llama(stack="modern")
    assert _memory(modern, recompute="selective").recompute_s == _memory(modern, recompute="none").recompute_s


def test_fp8_saves_activations_on_transformer_engine_not_on_torchao():
    """torchao's float8 linear saves its high-precision input (torchtitan measured 77.0 GiB bf16, 76.8 fp8);
    Transformer Engine keeps FP8 copies (arXiv:2209.05433 Sec 4)."""
    for recompute in ("none", "selective"):
        native = [_memory(_llama(stack="torch_native", precision=p), recompute=recompute).activations_bytes
                  for p in ("bf16", "fp8")]
        assert native[0] == native[1]
        modern = [_memory(_llama(stack="modern", precision=p), recompute=recompute).activations_bytes
                  for p in ("bf16", "fp8")]
        assert modern[1] < modern[0]


def test_loss_is_on_the_last_stage_only_and_in_the_breakdown():
    w = _llama(stack="torch_native", gpus=16, sequences=32)
    par = Parallelism(tp=2, pp=2, dp=4, zero=1, recompute="full", micro_batch=1, sequence_parallel=True)
    ctx = context_for(w)
    kinds = stages(2, 16, 16, 16)
    by_stage = {mem.stage: mem for mem, _ in stage_memories(ctx, par, check_layout(w, par))}
    expected = 16.0 * 8192 * 128256 / 2
    assert by_stage["first"].loss == 0.0
    assert by_stage["last"].loss == pytest.approx(expected, rel=1e-12)
    assert [stage_loss_bytes(ctx, 2, 1, k, 1) for k in kinds] == [0.0, pytest.approx(expected, rel=1e-12)]
    r = evaluate(w, par)
    assert r.memory_stage == "last" and r.loss_bytes == pytest.approx(expected, rel=1e-12)
    assert r.loss_bytes < r.activations_bytes
    assert r.memory_bytes == pytest.approx(r.weights_bytes + r.gradients_bytes + r.optimizer_bytes
                                           + r.activations_bytes, rel=1e-12)
    assert r.to_dict()["memory"]["loss_bytes"] == r.loss_bytes


def test_context_parallel_ranks_hold_their_tokens_logits():
    """Measured flat (torchtitan Table 2: 83.9 / 84.2 / 84.0 GiB at 32K, 64K on CP 2, 128K on CP 4): each rank
    computes the loss of its s / cp tokens."""
    losses = [_memory(_llama(stack="torch_native", seq_len=32768 * cp, sequences=8 // cp, precision="fp8"),
                      cp=cp, dp=8 // cp, recompute="full", micro_batch=1).loss_bytes for cp in (1, 2, 4)]
    assert losses[0] == losses[1] == losses[2] == 12.0 * 32768 * 128256


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(STACKS), st.integers(512, 131072), st.integers(1, 8), st.sampled_from([32000, 128256, 151936]),
       st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([2, 4, 8]))
def test_tensor_parallelism_never_increases_the_loss_term(stack, s, b, vocab, t, factor):
    w = Workload(params=1e9, layers=4, hidden=1024, heads=8, vocab=vocab, gpus=8, seq_len=s,
                 global_batch_tokens=s * b, stack=stack)
    ctx = context_for(w)
    last = stages(1, 4, 4, 4)[0]
    assert stage_loss_bytes(ctx, t * factor, 1, last, b) <= stage_loss_bytes(ctx, t, 1, last, b)


@settings(max_examples=150, deadline=None)
@given(st.integers(512, 131072), st.integers(1, 8), st.sampled_from([1024, 4096, 8192]),
       st.sampled_from([1, 2, 4, 8]), st.booleans(), st.sampled_from([1.0, 0.25, 0.125]))
def test_per_op_selective_keeps_more_than_full_and_its_working_set_is_never_negative(s, b, h, t, sp, kv_ratio):
    w = Workload(params=1e9, layers=4, hidden=h, heads=64, kv_heads=int(64 * kv_ratio), vocab=32000,
                 gpus=t, seq_len=s, global_batch_tokens=s * b, stack="torch_native", dropout=False)
    par = Parallelism(tp=t, dp=1, recompute="selective", micro_batch=b, sequence_parallel=sp and t > 1)
    r = evaluate(w, par)
    assert r.activations_working_bytes >= 0.0
    full = per_layer_bytes(s, b, h, 64, t, sp and t > 1, "full")
    assert r.activations_per_layer_bytes > full


def test_reserved_memory_is_the_allocated_peak_times_the_fitted_ratio():
    """The validation compares torchtitan's reserved readings with reserved_bytes; the ratio is the one
    tools/fit_calibration.py reproduces from the two in-sample rows, and the planner keeps using the allocated
    peak (its safety margin budgets for the allocator)."""
    from labtools.fit_calibration import fit_reserved_ratio

    r = _memory(_llama(stack="torch_native"), recompute="selective")
    assert r.reserved_bytes == pytest.approx(r.memory_bytes * cal.ALLOCATOR_RESERVED_RATIO, rel=1e-12)
    assert r.to_dict()["memory"]["reserved_bytes"] == r.reserved_bytes
    assert fit_reserved_ratio() == cal.ALLOCATOR_RESERVED_RATIO


def test_validation_breakdown_parts_add_up_to_the_step():
    """make validation's --breakdown prints each run's step in parts (labtools.validation_report): the parts
    it lists are the terms evaluate() sums, so the printed exposed parts add up to the printed step."""
    from labtools.validation_report import breakdown_lines
    lines = breakdown_lines({"torchtitan_a100"})
    assert len(lines) == 12
    for head, parts in zip(lines[::2], lines[1::2]):
        step = float(head.split("step ")[1].split(" s")[0])
        shown = [float(part.rsplit(" ", 1)[1].split("/")[0]) for part in parts.strip().split(", ")]
        assert sum(shown) == pytest.approx(step, abs=0.006)
