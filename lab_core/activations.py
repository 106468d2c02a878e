"""Activation memory per GPU: Korthikanti et al. arXiv:2205.05198.

Bytes of 16-bit activations (1-byte dropout masks) one transformer layer keeps
for its backward pass, and what the first pipeline stage (the most loaded GPU
under 1F1B) holds in total.
"""
from .calibration import GATED_MLP_INNER_SHARE


def per_layer_bytes(s, b, h, a, t=1, sequence_parallel=False, recompute="none",
                    flash_attention=False, ffn_hidden=None, kv_ratio=1.0, dropout=True, fp8_inputs=False,
                    gathered_inputs=0, attention=None):
    """Activation bytes of one layer for one micro-batch on one GPU.

    Source: arXiv:2205.05198 Table 2 (Eq 1, 2, 4, 6 and Sec 5):
      no parallelism         s b h (34 + 5 a s / h)
      tensor parallel        s b h (10 + 24/t + 5 a s / (h t))
      TP + sequence parallel s b h / t (34 + 5 a s / h)
      TP + selective         s b h (10 + 24/t)
      TP + SP + selective    34 s b h / t
      full recompute         2 s b h (the layer input only)
    The 5as/h term (attention scores, softmax, its dropout mask) is dropped by
    selective recompute and by flash attention (arXiv:2205.14135 keeps no
    s x s matrix). With sequence parallelism, full recompute stores the
    sequence-sharded input, 2 s b h / t (Table 2's note; what Megatron-LM does).
    The 34 = 10 replicated + 24 sharded units assume ffn_hidden = 4h; for another
    MLP size f the sharded part is 8 + 4 f / h (two f-wide MLP tensors).
    Of the 8 attention units, keys and values are 2 each: grouped-query
    attention with r = kv_heads / heads stores 2r of each (arXiv:2305.13245).
    Without dropout the two 1-byte masks of the 10 replicated units go, and the
    scores term keeps only the softmax output, 2 a s / h of its 5 (the mask and
    the dropout output go). fp8_inputs: the four GEMMs keep their inputs for
    the backward in FP8, one byte instead of two (Transformer Engine saves the
    FP8 copy it multiplied with, arXiv:2209.05433 Sec 4): the query/key/value
    and MLP inputs (2 replicated units each) and the output-projection and
    second-MLP inputs (2 and 2 f / h sharded units) shrink by half. A TEACHING
    ASSUMPTION: stacks differ in what they keep in FP8.
    gathered_inputs: bytes per value (0: none) of the all-gathered input the
    query/key/value and first-MLP GEMMs keep with sequence parallelism, whole,
    instead of the sequence shard Megatron keeps and gathers again in its
    backward (gathered_input_bytes).
    attention: the attention block's own sizes (attention.AttentionShape), when
    they are not h wide: its queries, keys, values and core output take their
    own widths (attention_units), and multi-head latent attention keeps its
    latents too (latent_units).
    """
    sbh = float(s) * b * h
    if recompute == "full":
        return 2.0 * sbh / t if sequence_parallel else 2.0 * sbh
    f = 4.0 * h if ffn_hidden is None else ffn_hidden
    sharded = attention_units(attention, h, kv_ratio) + 4.0 * f / h
    replicated = (10.0 if dropout else 8.0) + latent_units(attention, h, fp8_inputs)
    if fp8_inputs:
        replicated -= 2.0
        sharded -= output_units(attention, h) / 2.0 + f / h
    if flash_attention or recompute == "selective":
        scores = 0.0
    else:
        scores = scores_units(dropout) * a * s / h
    if sequence_parallel:
        gathered = gathered_input_bytes(s, b, h, t, gathered_inputs) if gathered_inputs else 0.0
        return sbh / t * (replicated + sharded + scores) + gathered
    return sbh * (replicated + sharded / t + scores / t)


def scores_units(dropout):
    """Bytes per attention score (a s^2 b of them per layer) the attention core writes and keeps
    without flash attention: the 16-bit softmax output, its 1-byte dropout mask and the dropout's
    16-bit output, 5 (arXiv:2205.05198 Sec 4.1: 2 + 1 + 2); without dropout the softmax output, 2."""
    return 5.0 if dropout else 2.0


def gathered_input_bytes(s, b, h, t, value_bytes):
    """What a layer keeps beyond Megatron's sequence-parallel accounting when its
    column-parallel GEMMs save their all-gathered input: the attention block's
    and the MLP's, s b h values each of `value_bytes` (2 in 16-bit; 1 when
    torchao's tensorwise float8 TP casts to FP8 before the all-gather,
    PrepareFloat8ModuleInput), less the 16-bit shard, 2 s b h / t, counted already.

    Source: PyTorch's tensor parallelism as torchtitan applies it
    (torchtitan/models/llama3/infra/parallelize.py, apply_tp: PrepareModuleInput
    turns the attention's and the feed-forward's sequence-sharded input into a
    replicated one, an all-gather, before wq/wk/wv and w1/w3 run on it, and
    autograd saves a matrix multiply's input for its backward), against
    Megatron's, which saves the shard and all-gathers it again in the backward
    (arXiv:2205.05198 Sec 4.2.2). torch.compile's asynchronous TP fuses each
    all-gather into its GEMM (stack.gathers_tp_inputs). Measured: Llama 3.1 70B
    on 256 H100s (FSDP 32, TP 8, micro-batch 16 of 8,192 tokens, full
    recompute) peaks at 71.9 GiB with eager TP and 67.6 GiB with asynchronous
    TP (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Table 4);
    with its float8 gathers this term is 1.5 GiB of that 4.3 GiB.
    """
    return 2.0 * float(s) * b * h * (value_bytes - 2.0 / t)


def working_bytes(s, b, h, a, t=1, sequence_parallel=False, recompute="none",
                  flash_attention=False, ffn_hidden=None, kv_ratio=1.0, dropout=True, fp8_inputs=False,
                  gathered_inputs=0, attention=None):
    """Activations rebuilt for the backward pass of one layer, one micro-batch.

    Recomputation trades stored activations for a transient peak: while one
    layer runs its backward, what was dropped is in memory again. Source:
    Chen et al. arXiv:1604.06174 Sec 4 (peak memory = the kept checkpoints +
    one segment's activations, the checkpoint being the segment's input). So
    the working set is what was dropped: full recompute rebuilds the whole
    layer (per_layer_bytes without recompute) but its input, the checkpoint
    kept already, which the replayed forward reads in place (Megatron's
    CheckpointFunction saves the input tensor itself); selective rebuilds only
    the attention scores (arXiv:2205.05198 Sec 5); with flash attention nothing
    s x s is ever stored, so there is nothing to rebuild.
    """
    if recompute == "none":
        return 0.0
    whole = per_layer_bytes(s, b, h, a, t, sequence_parallel, "none", flash_attention, ffn_hidden, kv_ratio, dropout,
                            fp8_inputs, gathered_inputs, attention)
    return whole - per_layer_bytes(s, b, h, a, t, sequence_parallel, recompute, flash_attention, ffn_hidden,
                                   kv_ratio, dropout, fp8_inputs, gathered_inputs, attention)


def _standard(attention, h):
    return attention is None or (attention.width == h and attention.value_width == h and not attention.kv_rank)


def attention_units(attention, h, kv_ratio=1.0):
    """Bytes per token and per h the attention block keeps, split by tensor
    parallelism: 2 bytes of its queries (width A), keys (r A), values (r A_v)
    and core output (A_v), the output projection's input; 4 + 4 r for the
    h-wide shape (arXiv:2205.05198 Sec 4.1: Q and K 4, V 2, the output
    projection's input 2, with r for grouped-query attention). A model whose
    heads are not h wide keeps its own widths: Qwen3's 64 query heads of 128
    on a 4,096 hidden size keep twice the h-wide queries and outputs,
    DeepSeek-V3's expanded latent attention 128 heads of 192 (queries and
    keys) and 128 (values and output) on 7,168: 22.9 h where the h-wide shape
    keeps 8 h."""
    if _standard(attention, h):
        return 4.0 + 4.0 * kv_ratio
    r = attention.kv_ratio
    return 2.0 * (1.0 + r) * (attention.width + attention.value_width) / h


def output_units(attention, h):
    """Of attention_units, the core output (the output projection's input): 2 A_v / h."""
    return 2.0 if _standard(attention, h) else 2.0 * attention.value_width / h


def latent_units(attention, h, fp8_inputs=False):
    """Bytes per token and per h multi-head latent attention keeps of its latents
    (q_rank and kv_rank wide): each latent norm's input, 2 bytes, and its output,
    the up-projection's input (2 bytes, 1 where the GEMMs keep FP8 inputs).
    Megatron-Core computes the latents on the sequence shard under sequence
    parallelism and keeps the up-projections' inputs as shards
    (megatron/core/transformer/multi_latent_attention.py, _qkv_down_projection
    and get_query_key_value_tensors), so they count with the replicated part.
    The rotary key beside the latent is left out (64 values a token in DeepSeek-V3, under 1% of h). 0 without
    latents."""
    if attention is None or not attention.kv_rank:
        return 0.0
    return (3.0 if fp8_inputs else 4.0) * (attention.q_rank + attention.kv_rank) / h


def module_savings(s, b, h, t, sequence_parallel, modules, attention=None, fp8_inputs=False, mlp_width=0.0,
                   routed_width=0.0, shared_width=0.0, dispatched=0.0):
    """Bytes of one layer and micro-batch that selective recompute's modules
    (recompute_modules.py) drop from what per_layer_bytes counts, net of what a
    whole-module checkpoint keeps instead. mlp_width: a dense layer's MLP
    width; routed_width / shared_width: a mixture-of-experts layer's routed and
    shared experts' widths (moe_layer_activations' sum); dispatched: its
    dispatched token copies (moe_dispatch_bytes).

    A value per token is 2 bytes, 1 for a GEMM input kept in FP8; the norm
    outputs are split by sequence parallelism (the replicated part of
    per_layer_bytes), the rest by tensor parallelism.
    - layernorm: the two norm outputs the next GEMMs keep as inputs (of the
      MLP's norm, not when that MLP is checkpointed whole: its input is the
      checkpoint's);
    - mla_up_proj: the expanded queries, keys and values (attention_units less
      the output);
    - moe_act: the routed experts' activation output, the second GEMM's input:
      calibration.GATED_MLP_INNER_SHARE of their width (a gated MLP's inner size);
    - mlp, shared_experts, moe: the MLP part of per_layer_bytes for their
      width (4 f / h, 3 f / h with FP8 inputs) and, for moe, the dispatched
      copies; mlp and moe keep their input, the norm output, in 16 bits where
      the GEMM had kept it in FP8.
    Sources: megatron/core/transformer/transformer_config.py (recompute_modules),
    transformer_layer.py, multi_latent_attention.py, moe/experts.py."""
    replicated = float(s) * b * h / (t if sequence_parallel else 1)
    sharded = float(s) * b * h / t
    value = 1.0 if fp8_inputs else 2.0
    mlp_units = 3.0 if fp8_inputs else 4.0
    whole_mlp = ("mlp" in modules and mlp_width) or ("moe" in modules and routed_width)
    dropped = 0.0
    if "layernorm" in modules:
        dropped += value * replicated * (1.0 if whole_mlp else 2.0)
    if "mla_up_proj" in modules and attention is not None and attention.kv_rank:
        dropped += (attention_units(attention, h) - output_units(attention, h)) * sharded
    if whole_mlp:
        width = mlp_width if mlp_width else routed_width + shared_width
        dropped += mlp_units * width / h * sharded + (dispatched if routed_width else 0.0)
        dropped -= (2.0 - value) * replicated
        return dropped
    if "moe_act" in modules and routed_width:
        dropped += value * GATED_MLP_INNER_SHARE * routed_width / h * sharded
    if "shared_experts" in modules and shared_width:
        dropped += mlp_units * shared_width / h * sharded
    return dropped


def interleave_multiplier(p, v):
    """Extra in-flight activations of the interleaved 1F1B schedule.

    Source: arXiv:2205.05198 Sec 4.2.3: the first stage holds
    (1 + (p - 1) / (p m)) times the non-interleaved amount, m = model chunks
    per device (called v here, as in arXiv:2104.04473 Sec 2.2.2).
    """
    if v <= 1 or p <= 1:
        return 1.0
    return 1.0 + (p - 1.0) / (p * v)


def first_stage_bytes(per_layer, layers, p, micro_batches, v=1):
    """Activations of the first pipeline stage under 1F1B (PipeDream-Flush).

    Source: arXiv:2205.05198 Sec 4.2.3 Eq 5: the first stage keeps p in-flight
    micro-batches of L/p layers, i.e. L layers' worth regardless of p (fewer
    when the step has fewer than p micro-batches), times the interleaving
    multiplier.
    """
    in_flight = min(p, micro_batches)
    return per_layer * (layers / p) * in_flight * interleave_multiplier(p, v)


def moe_dispatch_bytes(s, b, h, t, sequence_parallel, routed_copies, fp8_inputs=False):
    """Token copies a mixture-of-experts layer keeps for its backward: each
    token's hidden state permuted to its k experts, 2 bytes per value (1 when
    the experts' GEMMs keep FP8 inputs; per_layer_bytes) (Megatron-Core's token
    dispatcher, arXiv:2504.14960 Sec 3.1); with sequence parallelism each
    tensor-parallel rank dispatches only its own s / t tokens."""
    copies = (1.0 if fp8_inputs else 2.0) * float(s) * b * h * routed_copies
    return copies / t if sequence_parallel else copies


def embedding_dropout_bytes(s, b, h, t, in_flight, dropout=True):
    """The embedding dropout mask of the in-flight micro-batches on the first
    stage: s b h p / t bytes (arXiv:2205.05198 Sec 4.2.3; none without dropout)."""
    return float(s) * b * h * in_flight / t if dropout else 0.0


def per_op_selective_bytes(s, b, h, t=1, sequence_parallel=False, ffn_hidden=None, kv_ratio=1.0):
    """Bytes one layer keeps under PyTorch's per-op selective checkpointing
    (torchtitan's "selective" with selective_ac_option "op"), one micro-batch.

    Source: torchtitan torchtitan/parallelisms/parallelize_llama.py (2024-12)
    _save_list and _apply_ac_to_transformer_block, on PyTorch's
    torch.utils.checkpoint.create_selective_checkpoint_contexts: the block
    input is kept, and the outputs of the ops in the save list (matrix
    multiplies, scaled-dot-product attention, reduce-scatters), "except every
    second mm". A Llama block multiplies in the order wq, wk, wv, wo, w1, w3,
    w2, so the 1st, 3rd, 5th and 7th are kept: the query (h), the value (r h),
    the gate w1 (the gated MLP's inner size,
    calibration.GATED_MLP_INNER_SHARE of ffn_hidden) and w2's output (h); plus the attention output (h).
    Everything else is recomputed. 2 bytes each (bf16). Tensor parallelism
    splits the column-parallel outputs (query, value, attention, w1) t ways;
    w2 is row-parallel, its local product is the full s b h partial sum before
    its reduction; with sequence parallelism the block input and the two
    reduce-scatter outputs (also in the save list) are s b h / t each.
    fp8 (torchao float8) changes nothing: its linear saves its high-precision
    input for the backward (torchao/float8/float8_linear.py,
    matmul_with_hp_or_float8_args: ctx.save_for_backward(input_hp, weight_hp_t)).
    """
    f = 4.0 * h if ffn_hidden is None else ffn_hidden
    sharded = (2.0 + kv_ratio) * h + GATED_MLP_INNER_SHARE * f
    kept = h + sharded / t
    if sequence_parallel:
        kept += 3.0 * h / t
    else:
        kept += h
    return 2.0 * float(s) * b * kept


def output_input_bytes(s, b, h, t):
    """The output layer's input and its layer norm on the last stage, one
    micro-batch: 4 s b h / t (arXiv:2205.05198 Sec 4.2.3, the first term of
    4 s b h / t (1 + V / h)); the logits part is loss_bytes."""
    return 4.0 * float(s) * b * h / t


def loss_bytes(s, b, vocab, t, bytes_per_logit):
    """The logits and the cross-entropy loss's buffers at their peak, one
    micro-batch on the last stage: bytes_per_logit x s b V / t.

    The output layer is vocabulary-parallel and the loss is computed on the
    shards without gathering the logits (Megatron: arXiv:1909.08053 Sec 3,
    megatron/core/tensor_parallel/cross_entropy.py vocab_parallel_cross_entropy;
    torchtitan: torch.distributed.tensor.parallel.loss_parallel), so each of
    the t tensor-parallel GPUs holds V / t logits per token. Only one
    micro-batch reaches the loss at a time: its buffers are freed by the
    backward of the output layer. bytes_per_logit depends on the stack
    (calibration.LOSS_BYTES_PER_LOGIT). arXiv:2205.05198 Sec 4.2.3 counts
    4 s b V / t (the fp32 logits).
    """
    return bytes_per_logit * float(s) * b * vocab / t


def output_layer_bytes(s, b, h, vocab, t):
    """The output layer's activations on the last stage, one micro-batch:
    4 s b h / t (1 + V / h), its input and the fp32 logits (arXiv:2205.05198 Sec 4.2.3)."""
    return 4.0 * float(s) * b * h / t * (1.0 + vocab / h)


def extra_bytes(s, b, h, vocab, t, p, micro_batches, dropout=True):
    """Embedding dropout mask and, when p = 1, the output layer's activations.

    Source: arXiv:2205.05198 Sec 4.2.3: s b h p / t for the embedding dropout of
    p in-flight micro-batches (none without dropout), plus 4 s b h / t (1 + v / h)
    for the output layer (fp32 logits) when there is a single stage.
    """
    extra = embedding_dropout_bytes(s, b, h, t, min(p, micro_batches), dropout)
    if p == 1:
        extra += output_layer_bytes(s, b, h, vocab, t)
    return extra
