"""Mixture-of-experts layers: what an expert holds, what a token uses.

A mixture-of-experts (MoE) layer replaces the MLP by `count` routed experts
(MLPs of inner size `ffn_hidden`, same convention as shape.ffn_hidden: a
gated MLP with inner size f is entered as 1.5 f), of which a router sends
each token to `per_token` (top-k), plus `shared` experts every token uses
(Switch Transformer arXiv:2101.03961 Sec 2; DeepSeekMoE arXiv:2401.06066
Sec 3 for shared experts). The first `dense_layers` layers keep a dense MLP
(DeepSeek-V3's first three, arXiv:2412.19437 Sec 4.2).
"""


def mlp_params(hidden, ffn_hidden):
    """Weights and biases of one MLP: two h x f matrices, f + h biases (shape.params_per_layer)."""
    return 2.0 * hidden * ffn_hidden + ffn_hidden + hidden


class Experts:
    """The MoE part of a model shape; dense models have none (shape.experts is None)."""

    __slots__ = ("count", "per_token", "ffn_hidden", "shared", "dense_layers", "moe_layers",
                 "expert_params", "router_params", "_remote_nodes")

    def __init__(self, hidden, layers, count, per_token, ffn_hidden, shared, dense_layers):
        self.count = count
        self.per_token = per_token
        self.ffn_hidden = ffn_hidden
        self.shared = shared
        self.dense_layers = dense_layers
        self.moe_layers = layers - dense_layers
        self.expert_params = float(mlp_params(hidden, ffn_hidden))
        # The router: one h x E projection scoring every expert for each token.
        self.router_params = float(hidden * count)
        self._remote_nodes = {}

    @property
    def routed_params(self):
        """Parameters of one layer's routed experts (what expert parallelism splits)."""
        return self.count * self.expert_params

    @property
    def used_per_token(self):
        """Experts one token runs through: top-k routed plus the shared ones."""
        return self.per_token + self.shared

    def remote_nodes_per_token(self, nodes):
        """Expected nodes other than the sender's that hold at least one of a
        token's k routed experts, the expert-parallel group spanning `nodes`
        nodes with count / nodes experts each and routing balanced (the k
        experts drawn without replacement): (nodes - 1) (1 - P0), with P0 =
        C(E - E/N, k) / C(E, k) the chance that one node holds none of them.
        What a node-deduplicating dispatcher sends over the fabric per token
        (step_time.expert_alltoall_times; DeepSeek-V3 arXiv:2412.19437 Sec 3.2.2).
        """
        if nodes <= 1:
            return 0.0
        cached = self._remote_nodes.get(nodes)
        if cached is not None:
            return cached
        others = self.count - self.count / nodes
        none = 1.0
        for i in range(self.per_token):
            none *= (others - i) / (self.count - i) if others > i else 0.0
        self._remote_nodes[nodes] = (nodes - 1.0) * (1.0 - none)
        return self._remote_nodes[nodes]

    def to_dict(self):
        return {"experts": self.count, "experts_per_token": self.per_token, "expert_ffn_hidden": self.ffn_hidden,
                "shared_experts": self.shared, "dense_layers": self.dense_layers}
