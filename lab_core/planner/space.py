"""The search space: which grids (tp, cp, pp, dp, ep and the pipeline split) exist for a workload.

A grid must satisfy lab_core.parallelism.check_layout: tp x cp x pp x dp = GPUs;
tp divides the GPUs per node and the heads/hidden/MLP sizes (tensor
parallelism stays on NVLink, arXiv:2104.04473 Sec 3.2); cp splits the
sequence into 2 cp chunks and needs flash attention; the layers split over
the pipeline stages; dp divides the global batch of sequences; ep divides the
routed experts and tp x cp x dp. When no grid uses exactly the reader's GPU
count (e.g. 1,000 GPUs and a batch of 1,536 sequences), the plan uses the
largest count that can be laid out and leaves the rest idle; the plan says
how many.

Which values the planner tries (the rest of each dimension is not searched):
- pipeline splits (pipeline_splits): pp dividing the layers (even), and
  Megatron's embedding/loss-aware uneven split;
- cp (context_parallel_sizes): 1, and for long sequences powers of two;
- ep (expert_parallel_sizes): a few powers of two, mixture of experts only.
Spaces are cached by the workload fields they depend on, and each space
caches its grids per GPU count, so a slider move that keeps the shape builds
no table again.
"""
from collections import namedtuple

from ..parallelism import schedule_allows
from .assumptions import CP_MAX, CP_MIN_SEQ_LEN

_GRID_FIELDS = ("tp", "cp", "pp", "dp", "ep", "first", "last")


class Grid(namedtuple("Grid", _GRID_FIELDS)):
    """How the GPUs are laid out: tp x cp x pp x dp GPUs, expert parallelism ep
    (folded into tp x cp x dp) and the pipeline split: `first` and `last` layers
    on the first and last stage (0 and 0: an even split, lab_core.Parallelism's
    first_stage_layers / last_stage_layers)."""

    __slots__ = ()

    @classmethod
    def of(cls, par):
        """The grid of a lab_core.Parallelism."""
        return cls(par.tp, par.cp, par.pp, par.dp, par.ep, par.first_stage_layers, par.last_stage_layers)

    @property
    def gpus(self):
        return self.tp * self.cp * self.pp * self.dp

    @property
    def sync_ranks(self):
        """GPUs holding the same shared weights: the data- and context-parallel ranks."""
        return self.dp * self.cp

    @property
    def expert_ranks(self):
        """GPUs holding the same experts (gpu_memory.expert_shard_ranks)."""
        return self.tp * self.cp * self.dp // self.ep

    @property
    def shards(self):
        """Whether ZeRO has ranks to shard over (otherwise only ZeRO-0 is searched):
        data- or context-parallel ranks, or expert-parallel groups whose experts
        are held by more than one GPU. (A mixture of experts with ep = 1 on
        tp > 1 alone keeps its replicated experts unsharded.)"""
        return self.dp * self.cp > 1 or (self.ep > 1 and self.tp * self.cp * self.dp // self.ep > 1)

    def split(self, layers):
        """(first, middle, last) layers per stage (parallelism.stage_split)."""
        if not self.first:
            per_stage = layers // self.pp
            return per_stage, per_stage, per_stage
        middle = (layers - self.first - self.last) // (self.pp - 2) if self.pp > 2 else self.first
        return self.first, middle, self.last

    def interleave_layers(self, layers):
        """Layers each interleaved chunk count v must divide: a stage's layers
        (even) or the middle stages' layers (uneven, parallelism.stage_split)."""
        return self.split(layers)[1]

    def parallelism_fields(self):
        """The grid as lab_core.Parallelism keyword arguments."""
        return {"tp": self.tp, "cp": self.cp, "pp": self.pp, "dp": self.dp, "ep": self.ep,
                "first_stage_layers": self.first, "last_stage_layers": self.last}


def divisors(n):
    """Divisors of a positive integer, ascending (trial division up to sqrt(n))."""
    small, large = [], []
    k = 1
    while k * k <= n:
        if n % k == 0:
            small.append(k)
            if k * k != n:
                large.append(n // k)
        k += 1
    return small + large[::-1]


def pipeline_splits(layers, mtp=0):
    """(pp, first, last) of every split searched, by pp.

    Even: pp dividing the layers (first = last = 0). Uneven, Megatron's
    embedding- and loss-aware split: the embedding and the output layer count
    as one layer each, so pp divides layers + 2 with k = (layers + 2) / pp >= 2
    layers per stage, and the first and last stage hold k - 1 transformer
    layers (Llama 3 405B: 126 layers on 16 stages = 7, 8 x 14, 7;
    arXiv:2407.21783 Sec 3.3.2; Megatron-Core's
    --decoder-first/last-pipeline-num-layers). For pp >= 3 pp cannot divide
    both the layers and layers + 2, so each pp has one split; pp = 2 gives an
    even split either way. A power-of-two pp neither rule reaches gets the
    split of its ceiling: k = ceil(layers / pp) on each middle stage and the
    rest, from 2 to 2 k - 2 layers, shared by the first and last stage, the
    last holding the odd one (DeepSeek-V3's 61 layers on 16 stages: 2, 14 x 4,
    3, arXiv:2412.19437 Sec 3.2.1 with PP 16).
    With mtp multi-token-prediction modules (on the last stage, with the output
    layer) each split also comes with 1 to 1 + mtp of its last stage's layers
    moved to the first, as long as the first holds at most one more than a
    middle stage and the last keeps one: Megatron-Bridge lays DeepSeek-V3 (61
    layers, one module) on 16 stages as 4, 14 x 4, 1 and the module, on 8 as 8, 6 x 8, 5
    and on 4 as 16, 16, 16, 13 (src/megatron/bridge/recipes/deepseek/h100/
    deepseek_v3.py, _get_deepseek_v3_pipeline_layout): each a split of the
    ceiling rule with two layers moved.
    """
    out = [(p, 0, 0) for p in divisors(layers)]
    for p in divisors(layers + 2):
        k = (layers + 2) // p
        if p >= 3 and k >= 2:
            out.append((p, k - 1, k - 1))
    reached = {p for p, _, _ in out}
    p = 4
    while p < layers:
        k = -(-layers // p)
        rest = layers - (p - 2) * k
        if p not in reached and 2 <= rest <= 2 * k - 2:
            out.append((p, rest // 2, rest - rest // 2))
        p *= 2
    if mtp:
        out += _lighter_last_stages(layers, out, 1 + mtp)
    out.sort()
    return out


def _lighter_last_stages(layers, splits, most):
    """Each split's variants with d = 1 .. most of its last stage's layers on its first
    (pipeline_splits), new ones only."""
    seen = set(splits)
    out = []
    for p, first, last in splits:
        if p < 2:
            continue
        if first:
            middle = (layers - first - last) // (p - 2) if p > 2 else None
        else:
            middle = layers // p
            first = last = middle
        for d in range(1, most + 1):
            split = (p, first + d, last - d)
            if last - d < 1 or (p > 2 and first + d > middle + 1):
                break
            if split not in seen:
                seen.add(split)
                out.append(split)
    return out


def context_parallel_sizes(seq_len, flash_attention):
    """cp values searched: 1, and with flash attention and a sequence of at
    least assumptions.CP_MIN_SEQ_LEN tokens, powers of two up to CP_MAX with
    2 cp dividing the sequence (the load-balanced causal split,
    parallelism.check_layout)."""
    out = [1]
    if flash_attention and seq_len >= CP_MIN_SEQ_LEN:
        c = 2
        while c <= CP_MAX and seq_len % (2 * c) == 0:
            out.append(c)
            c *= 2
    return tuple(out)


def expert_parallel_sizes(experts, ranks, gpus_per_node):
    """ep values searched for a grid whose tp x cp x dp = ranks (experts: the
    routed expert count; () for a dense model, i.e. ep = 1 only).

    Valid ep are powers of two dividing both the experts and the ranks
    (parallelism.check_experts). The model's trade-off is where the
    all-to-all runs: inside a node it crosses NVLink, beyond it the NICs
    (step_time.expert_alltoall_times), while a larger ep holds fewer experts
    per GPU and runs larger grouped GEMMs. Inside a node only the largest
    ep is tried (NVLink is not the bottleneck there); across nodes every
    valid ep is, because with the per-node dispatcher (Workload.moe_dispatcher)
    each token's fabric traffic grows with the nodes the group spans, so an
    intermediate ep (DeepSeek-V3's 64 over 8 nodes, arXiv:2412.19437 Sec 3.2)
    can beat both ends.
    """
    if not experts:
        return (1,)
    valid = []
    e = 1
    while e <= ranks and experts % e == 0:
        if ranks % e == 0:
            valid.append(e)
        e *= 2
    inside = [e for e in valid if e <= gpus_per_node]
    chosen = {1, inside[-1]}
    chosen.update(e for e in valid if e > inside[-1])
    return tuple(sorted(chosen))


class Space:
    """Divisor sets of one workload's shape and batch, and its grids per GPU count."""

    __slots__ = ("tps", "cps", "splits", "pps", "dps", "layers", "batch", "gpn", "experts", "schedule", "_grids")

    def __init__(self, workload):
        shape = workload.shape
        gpn = workload.gpus_per_node
        self.gpn = gpn
        self.schedule = workload.pipeline_schedule
        self.layers = shape.layers
        self.batch = workload.batch_sequences
        self.experts = shape.experts.count if shape.experts is not None else 0
        self.tps = [t for t in divisors(gpn)
                    if shape.heads % t == 0 and shape.kv_heads % t == 0 and shape.hidden % t == 0
                    and shape.ffn_hidden % t == 0]
        self.cps = context_parallel_sizes(workload.seq_len, workload.flash_attention)
        self.splits = pipeline_splits(shape.layers, shape.mtp_layers)
        self.pps = sorted({p for p, _, _ in self.splits})
        self.dps = divisors(self.batch)
        self._grids = {}

    def layouts(self, gpus):
        """Every Grid with tp cp pp dp = gpus, sorted by (tp, cp, pp, split, dp, ep)."""
        found = self._grids.get(gpus)
        if found is not None:
            return found
        found = []
        batch = self.batch
        for t in self.tps:
            if gpus % t:
                continue
            for c in self.cps:
                if (gpus // t) % c:
                    continue
                for p, first, last in self.splits:
                    if (gpus // (t * c)) % p:
                        continue
                    d = gpus // (t * c * p)
                    if batch % d or not self.schedule_runs(p, d):
                        continue
                    for e in expert_parallel_sizes(self.experts, t * c * d, self.gpn):
                        found.append(Grid(t, c, p, d, e, first, last))
        self._grids[gpus] = found
        return found

    def schedule_runs(self, pp, dp):
        """Whether the pipeline schedule can run pp stages on some micro-batch count of a
        replica's batch (parallelism.schedule_allows: DualPipe needs at least 2 pp micro-batches,
        an even number of them): a grid where none can is no layout at all."""
        if pp == 1 or self.schedule == "1f1b":
            return True
        replica = self.batch // dp
        return any(schedule_allows(self.schedule, pp, replica // b) for b in divisors(replica))

    def model_parallel_sizes(self):
        """Every tp x cp x pp product of the space (the GPUs one replica needs)."""
        return sorted({t * c * p for t in self.tps for c in self.cps for p in self.pps})

    def largest_usable(self, gpus):
        """The largest GPU count <= gpus that some grid uses exactly (>= 1)."""
        best = 1
        for mp in self.model_parallel_sizes():
            if mp > gpus:
                break
            # dps ascending: the largest d with mp d <= gpus.
            for d in reversed(self.dps):
                if mp * d <= gpus:
                    if mp * d > best:
                        best = mp * d
                    break
        if self.schedule == "1f1b":
            return best
        # A bidirectional schedule may leave a count none of its grids: the largest count that keeps one.
        counts = sorted({mp * d for mp in self.model_parallel_sizes() for d in self.dps if mp * d <= gpus},
                        reverse=True)
        return next((n for n in counts if self.layouts(n)), 1)


_SPACES = {}
_SPACES_KEPT = 64


def space_for(workload):
    """The cached Space of a workload (keyed by the fields a Space reads)."""
    shape = workload.shape
    key = (shape.layers, shape.mtp_layers, shape.heads, shape.kv_heads, shape.hidden, shape.ffn_hidden,
           shape.experts.count if shape.experts is not None else 0, workload.gpus_per_node,
           workload.batch_sequences, workload.seq_len, workload.flash_attention, workload.pipeline_schedule)
    space = _SPACES.get(key)
    if space is None:
        if len(_SPACES) >= _SPACES_KEPT:
            del _SPACES[next(iter(_SPACES))]
        space = _SPACES[key] = Space(workload)
    return space
