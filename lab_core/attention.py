"""The attention block's matrices and core: multi-head, grouped-query and latent.

Multi-head attention (arXiv:1706.03762 Sec 3.2.2) projects the hidden state
(size h) to queries, keys and values of `heads` heads of size d each and back:
four h x A matrices, A = heads x d (h unless a model says otherwise; Qwen3
runs 64 heads of 128 on a 4,096 hidden size). Grouped-query attention
(arXiv:2305.13245 Sec 2.2) shares each key/value head among heads / kv_heads
query heads: keys and values are r A wide, r = kv_heads / heads.

Multi-head latent attention (DeepSeek-V2 arXiv:2405.04434 Sec 2.1.2-2.1.3;
DeepSeek-V3 arXiv:2412.19437 Sec 2.1.1) compresses keys and values into a
latent of kv_rank (h x kv_rank, then kv_rank x heads (d + d_v)) and queries
into one of q_rank (h x q_rank, then q_rank x A); the core runs heads heads
with query/key size d (DeepSeek-V3: 192, of which 64 carry the rotary
position) and value size d_v (128). In training the latents are expanded
(no matrix absorption), so the core is ordinary attention of those sizes.
Simplification: the rotary key part is counted as expanded from the latent
like the rest of the key (DeepSeek projects 64 of the 192 from h directly,
shared by all heads: 0.4M of a layer's 187M weights in DeepSeek-V3).
"""


class AttentionShape:
    """One layer's attention sizes: width A = heads x d, value width heads x d_v,
    key/value ratio r and the latent ranks (0: full-rank projections)."""

    __slots__ = ("width", "value_width", "kv_ratio", "q_rank", "kv_rank", "_gemms")

    def __init__(self, width, value_width, kv_ratio, q_rank=0, kv_rank=0):
        self.width = float(width)
        self.value_width = float(value_width)
        self.kv_ratio = kv_ratio
        self.q_rank = q_rank
        self.kv_rank = kv_rank
        # gemms() by (hidden, tp): evaluate() asks for the same few many times.
        self._gemms = {}

    def matrices(self, hidden, fused=True):
        """(inputs, outputs, split) of each weight matrix. The full-rank
        query/key/value projections run as one fused GEMM (Megatron's
        linear_qkv), or with fused False as one GEMM each (torchtitan's
        Llama: separate wq, wk, wv nn.Linear in
        torchtitan/models/llama3/model.py; stack.fuses_qkv); tensor
        parallelism splits the heads' side (arXiv:1909.08053 Sec 3): the
        outputs of the projections into heads ("out"), the inputs of the
        output projection ("in"); the latent down-projections have no heads
        and are replicated (None; Megatron-Core's MLA keeps them duplicated)."""
        h, a, v = hidden, self.width, self.value_width
        fused_width = 0.0
        separate = []
        out = []
        if self.q_rank:
            out += [(h, self.q_rank, None), (self.q_rank, a, "out")]
        else:
            fused_width += a
            separate.append((h, a, "out"))
        if self.kv_rank:
            out += [(h, self.kv_rank, None), (self.kv_rank, a + v, "out")]
        else:
            fused_width += self.kv_ratio * (a + v)
            separate += [(h, self.kv_ratio * a, "out"), (h, self.kv_ratio * v, "out")]
        if fused_width:
            out = ([(h, fused_width, "out")] if fused else separate) + out
        out.append((v, h, "in"))
        return out

    def gemms(self, hidden, tp, fused=True):
        """(weights on one GPU, GEMM width) of each matrix under t-way tensor
        parallelism; the width is the smaller weight dimension on the GPU
        (efficiency.layer_gemm_seconds): with grouped-query attention and
        unfused projections the key and value GEMMs are r A / t wide, narrow
        ones under tensor parallelism (128 columns per GPU for Llama 3 70B
        at t = 8). A new list each call (callers append to it)."""
        cached = self._gemms.get((hidden, tp, fused))
        if cached is not None:
            return list(cached)
        out = []
        for inputs, outputs, split in self.matrices(hidden, fused):
            if split == "out":
                outputs = outputs / tp
            elif split == "in":
                inputs = inputs / tp
            out.append((inputs * outputs, inputs if inputs < outputs else outputs))
        self._gemms[(hidden, tp, fused)] = tuple(out)
        return out

    def params(self, hidden):
        """Weights of the attention matrices (shape.layer_matrix_params's attention part)."""
        total = 0.0
        for inputs, outputs, _ in self.matrices(hidden):
            total += inputs * outputs
        return total

    def biases(self, hidden):
        """Biases of the projections (the query, key and value outputs and the output projection's h)."""
        return self.width + self.kv_ratio * (self.width + self.value_width) + hidden

    def core_flops(self, b, s):
        """Forward FLOPs of the core on b sequences of s tokens, no causal saving:
        Q K^T (2 b s^2 A) and scores x V (2 b s^2 A_v) (arXiv:2205.05198 Appendix A: 4 b s^2 h)."""
        return 2.0 * b * s * s * (self.width + self.value_width)

    def kv_values_per_token(self):
        """Key and value values per token a context-parallel rank passes on (r (A + A_v))."""
        return self.kv_ratio * (self.width + self.value_width)


def standard(hidden, kv_ratio=1.0):
    """Multi-head or grouped-query attention of width h (the default shape)."""
    return AttentionShape(hidden, hidden, kv_ratio)
