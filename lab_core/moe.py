"""Mixture-of-experts layers: what an expert holds, what a token uses.

A mixture-of-experts (MoE) layer replaces the MLP by `count` routed experts
(MLPs of inner size `ffn_hidden`, same convention as shape.ffn_hidden: a
gated MLP with inner size f is entered as 1.5 f), of which a router sends
each token to `per_token` (top-k), plus `shared` experts every token uses
(Switch Transformer arXiv:2101.03961 Sec 2; DeepSeekMoE arXiv:2401.06066
Sec 3 for shared experts). The first `dense_layers` layers keep a dense MLP
(DeepSeek-V3's first three, arXiv:2412.19437 Sec 4.2).

Group-limited routing (DeepSeek-V2 arXiv:2405.04434 Sec 2.2.2 device-limited,
DeepSeek-V3 arXiv:2412.19437 Sec 2.1.2 node-limited): the routed experts fall
into `groups` equal groups; the router scores each group by its best experts
and takes a token's top-k from its `groups_per_token` best groups only
(Megatron-Core moe_utils.group_limited_topk; DeepSeek-V3's config: 8 groups,
4 per token). Laid out over the nodes of an expert-parallel group, the groups
bound the nodes a token's copies travel to (remote_nodes_per_token).
"""
import math


def mlp_params(hidden, ffn_hidden):
    """Weights and biases of one MLP: two h x f matrices, f + h biases (shape.params_per_layer)."""
    return 2.0 * hidden * ffn_hidden + ffn_hidden + hidden


class Experts:
    """The MoE part of a model shape; dense models have none (shape.experts is None)."""

    __slots__ = ("count", "per_token", "ffn_hidden", "shared", "dense_layers", "moe_layers", "groups",
                 "groups_per_token", "expert_params", "router_params", "_remote_nodes")

    def __init__(self, hidden, layers, count, per_token, ffn_hidden, shared, dense_layers, groups=0,
                 groups_per_token=0):
        self.count = count
        self.per_token = per_token
        self.ffn_hidden = ffn_hidden
        self.shared = shared
        self.dense_layers = dense_layers
        # Group-limited routing (module docstring); 0: every expert is a candidate for every token.
        self.groups = groups
        self.groups_per_token = groups_per_token if groups else 0
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
        With group-limited routing, the fewer of that and the nodes the token's
        groups allow (_group_limited_nodes). What a node-deduplicating dispatcher
        sends over the fabric per token (step_time.expert_alltoall_times;
        DeepSeek-V3 arXiv:2412.19437 Sec 3.2.2).
        """
        if nodes <= 1:
            return 0.0
        cached = self._remote_nodes.get(nodes)
        if cached is not None:
            return cached
        remote = (nodes - 1.0) * (1.0 - _none_of(self.count, self.count / nodes, self.per_token))
        limited = self._group_limited_nodes(nodes)
        if limited is not None and limited * (nodes - 1.0) / nodes < remote:
            # The sender's own node is one of the token's nodes with chance distinct / nodes.
            remote = limited * (nodes - 1.0) / nodes
        self._remote_nodes[nodes] = remote
        return remote

    def _group_limited_nodes(self, nodes):
        """Expected distinct nodes of a token's experts under group-limited routing, or None
        (no groups, or groups that do not line up with the nodes). A token uses
        M = min(groups per token, k) groups, each holding at least one of its experts: the
        router picks the groups by their best experts' scores (arXiv:2412.19437 Sec 2.1.2),
        so each picked group holds some of the top k (a teaching assumption). Routing is
        balanced: the M groups are any M of the G equally likely. Whole groups on a node
        (G a multiple of N, g = G/N each): a node holds none of the token's groups with
        chance C(G - g, M) / C(G, M). A group over n = N/G nodes: its k/M experts of the
        token (rounded) fall on its nodes as a balanced draw, as without groups."""
        if not self.groups or self.groups_per_token >= self.groups:
            return None
        nodes = int(round(nodes))
        used = min(self.groups_per_token, self.per_token)
        if self.groups % nodes == 0:
            per_node = self.groups // nodes
            return nodes * (1.0 - math.comb(self.groups - per_node, used) / math.comb(self.groups, used))
        if nodes % self.groups == 0:
            spread = nodes // self.groups
            size = self.count / self.groups
            drawn = max(1, int(round(self.per_token / used)))
            return used * spread * (1.0 - _none_of(size, size / spread, drawn))
        return None

    def to_dict(self):
        return {"experts": self.count, "experts_per_token": self.per_token, "expert_ffn_hidden": self.ffn_hidden,
                "shared_experts": self.shared, "dense_layers": self.dense_layers, "expert_groups": self.groups,
                "expert_groups_per_token": self.groups_per_token}


def _none_of(count, held, drawn):
    """The chance that a place holding `held` of `count` equally likely experts holds none
    of `drawn` drawn without replacement: C(count - held, drawn) / C(count, drawn)."""
    others = count - held
    none = 1.0
    for i in range(drawn):
        none *= (others - i) / (count - i) if others > i else 0.0
    return none
