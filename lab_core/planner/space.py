"""The search space: which (tp, pp, dp) layouts exist for a workload.

A layout must satisfy lab_core.parallelism.check_layout: tp divides the GPUs
per node and the heads/hidden/MLP sizes (tensor parallelism stays on NVLink,
arXiv:2104.04473 Sec 3.2), pp divides the layers, dp divides the global batch
of sequences. When no layout uses exactly the reader's GPU count (e.g. 1,000
GPUs and a batch of 1,536 sequences), the plan uses the largest count that
can be laid out and leaves the rest idle; the plan says how many.
"""


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


class Space:
    """Divisor sets of one workload's shape and batch (computed once per call)."""

    __slots__ = ("tps", "pps", "dps", "layers", "batch", "gpn")

    def __init__(self, workload):
        shape = workload.shape
        gpn = workload.gpus_per_node
        self.gpn = gpn
        self.layers = shape.layers
        self.batch = workload.batch_sequences
        self.tps = [t for t in divisors(gpn)
                    if shape.heads % t == 0 and shape.kv_heads % t == 0 and shape.hidden % t == 0
                    and shape.ffn_hidden % t == 0]
        self.pps = divisors(shape.layers)
        self.dps = divisors(self.batch)

    def layouts(self, gpus):
        """All (tp, pp, dp) with tp pp dp = gpus, sorted by (tp, pp)."""
        found = []
        for t in self.tps:
            if gpus % t:
                continue
            for p in self.pps:
                if (gpus // t) % p:
                    continue
                d = gpus // (t * p)
                if self.batch % d == 0:
                    found.append((t, p, d))
        return found

    def largest_usable(self, gpus):
        """The largest GPU count <= gpus that some layout uses exactly (>= 1)."""
        best = 1
        for t in self.tps:
            if t > gpus:
                break
            for p in self.pps:
                tp = t * p
                if tp > gpus:
                    break
                # dps ascending: the largest d with t p d <= gpus.
                for d in reversed(self.dps):
                    if tp * d <= gpus:
                        if tp * d > best:
                            best = tp * d
                        break
        return best
