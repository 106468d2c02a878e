"""Model shape: layers, hidden size, heads, MLP size, vocabulary.

When the reader gives only ``params``, the shape follows a documented rule:
- hidden size grows with depth as h = 128 * l (the aspect ratio of GPT-3's
  13B and 175B, arXiv:2005.14165 Table 2.1), so 12 l h^2 = P gives
  h = cbrt(128 P / 12), rounded to a multiple of 1024 from 4096 up, of 512
  from 2048, of 256 below (so heads split over 8, 4, 2 tensor-parallel GPUs);
- layers then fill the parameter budget left after the embeddings, by
  Narayanan et al. Eq 2 (arXiv:2104.04473), rounded to a multiple of 4 from
  16 layers up and of 8 from 64 up (so 4- and 8-stage pipelines split them);
- head size 128 (heads = h / 128), MLP size 4h, vocabulary 51,200 (the padded
  GPT-2 vocabulary of arXiv:2104.04473 and arXiv:2205.05198).
A gated MLP (SwiGLU) with inner size f is entered as ffn_hidden = 1.5 f: the
model counts two MLP matrices of h x ffn_hidden. Grouped-query attention
(arXiv:2305.13245) has kv_heads key/value heads shared by heads query heads
(kv_heads = heads, multi-head attention, unless given). The attention block's
own sizes (head_dim, v_head_dim, and the latent ranks of multi-head latent
attention) are in attention.py; absent, heads x head size is the hidden size.
For a mixture of experts, params is the total count, every routed expert
included (Mixtral 8x22B is "141B", arXiv:2401.04088; DeepSeek-V3 671B,
arXiv:2412.19437), and the same rule holds with a mixture-of-experts layer's
parameters in place of a dense layer's: the hidden size is the allowed one at
which h / 128 such layers hold closest to P (_moe_hidden), then the layers
fill the budget left after the embeddings, the dense_layers leading ones
dense (_moe_layers_for). TEACHING ASSUMPTION, as the dense rule: a reader who
knows the real shape enters it.
Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 Sec 2.2) adds mtp_layers
modules after the last layer, outside `layers`: each a layer of the last
layer's kind plus a 2h x h projection and three norms, sharing the embedding
and the output layer (mtp_module_extra_params).
"""
import math

from .attention import AttentionShape, standard
from .errors import LabInputError
from .moe import Experts, mlp_params

DEFAULT_VOCAB = 51200
HEAD_DIM = 128
HIDDEN_STEP = 128


def layer_matrix_params(hidden, ffn_hidden, kv_ratio=1.0, attention=None):
    """Weights of one layer's matrices: (2 + 2r) h^2 (query and output h x h,
    key and value h x r h, r = kv_heads / heads) + 2 h f (MLP); with
    `attention` (attention.AttentionShape) its own matrices instead of the h^2 term.

    Source: arXiv:2104.04473 Eq 2 (12 h^2 at f = 4h, r = 1); grouped-query
    attention shrinks the key and value projections by r (arXiv:2305.13245 Sec 2.2).
    """
    if attention is None:
        return (2.0 + 2.0 * kv_ratio) * hidden * hidden + 2.0 * hidden * ffn_hidden
    return attention.params(hidden) + 2.0 * hidden * ffn_hidden


def params_per_layer(hidden, ffn_hidden, kv_ratio=1.0, attention=None):
    """Parameters of one transformer layer: the matrices (layer_matrix_params),
    their biases (2 + 2r) h + f + h (attention.AttentionShape.biases + f + h),
    and 4h for two layernorms.

    Source: arXiv:2104.04473 Eq 2, whose 12h^2 + 13h per layer is this count at
    f = 4h and r = 1.
    """
    attention = standard(hidden, kv_ratio) if attention is None else attention
    biases = attention.biases(hidden) + ffn_hidden + hidden
    return layer_matrix_params(hidden, ffn_hidden, kv_ratio, attention) + biases + 4 * hidden


# Norms of one multi-token-prediction module: the next token's embedding's, the hidden state's and the
# final one before the shared output layer (arXiv:2412.19437 Sec 2.2; Megatron-Core's FLOP count,
# megatron/training/training.py "MTP eh norm + final norm").
MTP_MODULE_NORMS = 3


def mtp_projection_params(hidden):
    """Weights of one multi-token-prediction module's projection of the concatenated hidden state
    and next-token embedding back to the hidden size, 2h x h (arXiv:2412.19437 Sec 2.2, M_k)."""
    return 2.0 * hidden * hidden


def mtp_module_extra_params(hidden):
    """Weights one multi-token-prediction module adds besides its transformer layer:
    the projection of the concatenated hidden state and next-token embedding,
    2h x h, and three norms (the embedding's, the hidden state's and the final
    one), 3h. Source: arXiv:2412.19437 Sec 2.2 (M_k, the two RMSNorms);
    Megatron-Core's count in megatron/training/training.py
    (num_floating_point_operations: "MTP eh norm + final norm", "MTP eh proj")."""
    return mtp_projection_params(hidden) + MTP_MODULE_NORMS * hidden


def param_count(layers, hidden, vocab, seq_len, ffn_hidden=None):
    """Total parameters: l * layer + (V + s) h (token and learned position embeddings).

    Source: Narayanan et al. arXiv:2104.04473 Eq 2,
    P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)), for ffn_hidden = 4h.
    """
    if ffn_hidden is None:
        ffn_hidden = 4 * hidden
    return layers * params_per_layer(hidden, ffn_hidden) + (vocab + seq_len) * hidden


def moe_layer_params(layer_params, hidden, ffn_hidden, experts):
    """(shared, routed) parameters of one mixture-of-experts layer: the dense layer of
    `layer_params` without its MLP, plus the router and the shared experts (split like the
    rest); and the routed experts (what expert parallelism splits; moe.Experts)."""
    attention = layer_params - mlp_params(hidden, ffn_hidden)
    return attention + experts.router_params + experts.shared * experts.expert_params, experts.routed_params


def _layers_for(params, hidden, ffn_hidden, vocab, seq_len, kv_ratio=1.0, attention=None):
    left = params - (vocab + seq_len) * hidden
    return _rounded_layers(left / params_per_layer(hidden, ffn_hidden, kv_ratio, attention))


def _experts(hidden, layers, moe, ffn_hidden):
    """moe.Experts of derive_shape's `moe` tuple at these sizes (an expert of inner size 0: ffn_hidden)."""
    count, per_token, expert_ffn, shared, dense_layers, groups, chosen = moe
    return Experts(hidden, layers, count, per_token, expert_ffn or ffn_hidden, shared, dense_layers, groups, chosen)


def _moe_layer_total(hidden, ffn_hidden, moe, kv_ratio=1.0, attention=None):
    """(dense layer, mixture-of-experts layer) parameters at these sizes."""
    dense = params_per_layer(hidden, ffn_hidden, kv_ratio, attention)
    shared, routed = moe_layer_params(dense, hidden, ffn_hidden, _experts(hidden, 0, moe, ffn_hidden))
    return dense, shared + routed


def _moe_layers_for(params, hidden, ffn_hidden, vocab, seq_len, moe, kv_ratio, attention):
    """_layers_for with mixture-of-experts layers: the dense_layers leading layers dense, the
    rest filling the budget left after the embeddings and them."""
    dense, moe_layer = _moe_layer_total(hidden, ffn_hidden, moe, kv_ratio, attention)
    dense_layers = moe[4]
    left = params - (vocab + seq_len) * hidden - dense_layers * dense
    return _rounded_layers(dense_layers + left / moe_layer)


def _allowed_hiddens():
    """The hidden sizes the rule allows, ascending (_hidden_step: 256, 512 … 2,048, 2,560 … 4,096, 5,120 …)."""
    hidden = 256
    while True:
        yield hidden
        hidden += _hidden_step(hidden)


def _moe_hidden(params, seq_len, layers, vocab, ffn_hidden, moe):
    """The allowed hidden size at which a mixture-of-experts model holds closest to `params`:
    with `layers` given, its embeddings and layers (dense_layers dense); else h / 128 layers of
    mixture of experts, as the dense rule's 12 h^2 (h / 128) = P. Standard attention (r = 1)
    and a 4h MLP where not given, as the dense rule's."""
    def total(hidden):
        dense, moe_layer = _moe_layer_total(hidden, ffn_hidden or 4 * hidden, moe)
        if not layers:
            return hidden / HIDDEN_STEP * moe_layer
        return moe[4] * dense + (layers - moe[4]) * moe_layer + (vocab + seq_len) * hidden
    below = None
    for hidden in _allowed_hiddens():
        above = total(hidden) - params
        if above >= 0.0:
            return hidden if below is None or above <= below[0] else below[1]
        below = (-above, hidden)


def _rounded_layers(layers):
    """A layer count by the rule: rounded to a multiple of 8 from 64 up, of 4 from 16 up."""
    if layers >= 64:
        # A multiple of 8, so that 8-stage pipelines split it evenly.
        return int(round(layers / 8.0)) * 8
    if layers >= 16:
        # A multiple of 4, so that 2- and 4-stage pipelines split it evenly.
        return int(round(layers / 4.0)) * 4
    return max(1, int(round(layers)))


def _hidden_step(value):
    """Multiples of 1024 from 4096 up (heads divisible by 8, so TP up to 8),
    of 512 from 2048 (by 4), of 256 below (by 2)."""
    if value >= 4096:
        return 1024
    return 512 if value >= 2048 else 256


def _round_hidden(value):
    step = _hidden_step(value)
    return max(256, int(round(value / step)) * step)


def _default_heads(hidden):
    for head_dim in (HEAD_DIM, 64, 32, 16, 8):
        if hidden % head_dim == 0:
            return hidden // head_dim
    return 1


class ModelShape:
    """The transformer's dimensions and parameter counts (plain attributes)."""

    __slots__ = ("layers", "hidden", "heads", "kv_heads", "kv_ratio", "head_dim", "attention", "ffn_hidden",
                 "vocab", "seq_len",
                 "layer_params", "embedding_params", "params", "derived", "experts", "moe_layer_params",
                 "moe_layer_shared_params", "active_params", "mtp_layers")

    def __init__(self, layers, hidden, heads, ffn_hidden, vocab, seq_len, derived, kv_heads=None, experts=None,
                 attention=None, mtp_layers=0):
        self.layers = layers
        self.hidden = hidden
        self.heads = heads
        self.kv_heads = heads if kv_heads is None else kv_heads
        self.kv_ratio = self.kv_heads / heads
        self.attention = standard(hidden, self.kv_ratio) if attention is None else attention
        self.head_dim = self.attention.width / heads
        self.ffn_hidden = ffn_hidden
        self.vocab = vocab
        self.seq_len = seq_len
        self.layer_params = float(params_per_layer(hidden, ffn_hidden, self.kv_ratio, self.attention))
        self.embedding_params = float((vocab + seq_len) * hidden)
        self.derived = derived
        self.experts = experts
        self.mtp_layers = mtp_layers
        # The dense layers (the multi-token-prediction ones of a dense model too), the embedding and the
        # modules' projections and norms.
        dense = (self.dense_layer_count * self.layer_params + self.embedding_params
                 + mtp_layers * mtp_module_extra_params(hidden))
        if experts is None:
            self.moe_layer_shared_params = self.moe_layer_params = 0.0
            self.params = self.active_params = dense
            return
        self.moe_layer_shared_params, routed = moe_layer_params(self.layer_params, hidden, ffn_hidden, experts)
        self.moe_layer_params = self.moe_layer_shared_params + routed
        self.params = dense + self.moe_layer_count * self.moe_layer_params
        self.active_params = dense + self.moe_layer_count * (self.moe_layer_shared_params
                                                             + experts.per_token * experts.expert_params)

    @property
    def dense_layer_count(self):
        """Layers with a dense MLP, the multi-token-prediction layers of a dense model included."""
        if self.experts is None:
            return self.layers + self.mtp_layers
        return self.experts.dense_layers

    @property
    def moe_layer_count(self):
        """Mixture-of-experts layers, the multi-token-prediction layers included (0 for a dense model)."""
        return 0 if self.experts is None else self.experts.moe_layers + self.mtp_layers

    @property
    def output_passes(self):
        """Times each token goes through the output layer: the model's prediction and one per
        multi-token-prediction module (arXiv:2412.19437 Sec 2.2: a shared output head)."""
        return 1 + self.mtp_layers

    def to_dict(self):
        return {
            "layers": self.layers,
            "hidden": self.hidden,
            "heads": self.heads,
            "kv_heads": self.kv_heads,
            "ffn_hidden": self.ffn_hidden,
            "vocab": self.vocab,
            "params": self.params,
            "active_params": self.active_params,
            "derived": list(self.derived),
            "moe": None if self.experts is None else self.experts.to_dict(),
            "mtp_layers": self.mtp_layers,
        }


def derive_shape(params, seq_len, layers=None, hidden=None, heads=None, ffn_hidden=None, vocab=None,
                 kv_heads=None, moe=None, attention=None, mtp_layers=0):
    """Fill in the absent dimensions by the rule in the module docstring.

    attention: None, or (head_dim, v_head_dim, q_lora_rank, kv_lora_rank),
    each 0 when not given (attention.py): head size hidden / heads, value head
    size the head size, full-rank projections.

    moe: None for a dense model, else (experts, experts_per_token,
    expert_ffn_hidden, shared_experts, dense_layers, expert_groups,
    expert_groups_per_token); an expert of inner size
    0 is as large as the dense MLP (Mixtral's experts, arXiv:2401.04088 Sec 2).
    """
    derived = []
    if not vocab:
        vocab = DEFAULT_VOCAB
        derived.append("vocab")
    if not hidden:
        derived.append("hidden")
        if moe is not None:
            hidden = _moe_hidden(params, seq_len, layers, vocab, ffn_hidden, moe)
        elif layers:
            # Solve 12 l h^2 + (13 l + V + s) h = P for h (Eq 2 with f = 4h).
            a = 12.0 * layers
            b = 13.0 * layers + vocab + seq_len
            hidden = _round_hidden((-b + math.sqrt(b * b + 4.0 * a * params)) / (2.0 * a))
        else:
            estimate = (params * HIDDEN_STEP / 12.0) ** (1.0 / 3.0)
            step = _hidden_step(estimate)
            guess = int(estimate / step)
            # Choose the multiple of `step` whose 12 h^3 / 128 is closest to P
            # (compared on exact products: the same answer on every libm).
            best = None
            for k in range(max(1, guess - 1), guess + 3):
                h = k * step
                miss = abs(12.0 * h * h * h / HIDDEN_STEP - params)
                if best is None or miss < best[0]:
                    best = (miss, h)
            hidden = best[1]
    if not ffn_hidden:
        ffn_hidden = 4 * hidden
        derived.append("ffn_hidden")
    heads_derived = not heads
    if heads_derived:
        heads = _default_heads(hidden)
    head_dim, v_head_dim, q_rank, kv_rank = attention or (0, 0, 0, 0)
    if hidden % heads and not head_dim:
        raise LabInputError("heads", heads, f"a divisor of hidden={hidden}", "inconsistent",
                            "hidden must split evenly into heads", {"hidden": hidden})
    kv_derived = not kv_heads
    if kv_derived:
        kv_heads = heads
    if kv_heads > heads or heads % kv_heads:
        raise LabInputError("kv_heads", kv_heads, f"a divisor of heads={heads}", "inconsistent",
                            "query heads must split evenly into key/value groups", {"heads": heads})
    shaped = None
    if head_dim or v_head_dim or q_rank or kv_rank:
        d = head_dim or hidden / heads
        shaped = AttentionShape(heads * d, heads * (v_head_dim or d), kv_heads / heads, q_rank, kv_rank)
    if not layers:
        if moe is None:
            layers = _layers_for(params, hidden, ffn_hidden, vocab, seq_len, kv_heads / heads, shaped)
        else:
            layers = _moe_layers_for(params, hidden, ffn_hidden, vocab, seq_len, moe, kv_heads / heads, shaped)
        derived.append("layers")
    if heads_derived:
        derived.append("heads")
    if kv_derived:
        derived.append("kv_heads")
    experts = None
    if moe is not None:
        dense_layers = moe[4]
        if dense_layers >= layers:
            raise LabInputError("dense_layers", dense_layers, f"0 … layers - 1 = {layers - 1}", "inconsistent",
                                "at least one layer must be a mixture of experts",
                                {"layers": layers, "most": layers - 1})
        experts = _experts(hidden, layers, moe, ffn_hidden)
    return ModelShape(layers, hidden, heads, ffn_hidden, vocab, seq_len, tuple(derived), kv_heads, experts,
                      shaped, mtp_layers)
