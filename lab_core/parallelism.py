"""How the workload is laid out on the GPUs, and the checks that make it valid."""
from dataclasses import dataclass

from .errors import LabInputError

RECOMPUTE_MODES = ("none", "selective", "full")
ZERO_STAGES = (0, 1, 2, 3)
_INT_FIELDS = ("tp", "pp", "dp", "micro_batch", "interleave")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise LabInputError(name, value, "a positive integer", "not_a_number")
    if value != int(value) or value < 1:
        raise LabInputError(name, value, "a positive integer", "not_an_integer" if value >= 1 else "out_of_range")
    return int(value)


def _divisors(n, limit=None):
    found = [d for d in range(1, n + 1) if n % d == 0]
    if limit is not None:
        found = [d for d in found if d <= limit]
    text = ", ".join(str(d) for d in found[:12])
    return text + (", …" if len(found) > 12 else "")


@dataclass(frozen=True)
class Parallelism:
    """tp x pp x dp GPUs; ZeRO stage 0-3; recompute none | selective | full.

    micro_batch: sequences per micro-batch; interleave: model chunks per GPU
    (v of the interleaved 1F1B schedule, arXiv:2104.04473 Sec 2.2.2).
    """

    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero: int = 0
    recompute: str = "none"
    sequence_parallel: bool = False
    micro_batch: int = 1
    interleave: int = 1

    def __post_init__(self):
        for name in _INT_FIELDS:
            object.__setattr__(self, name, _positive_int(name, getattr(self, name)))
        if isinstance(self.zero, bool) or self.zero not in ZERO_STAGES:
            raise LabInputError("zero", self.zero, "0, 1, 2 or 3", "unknown_choice")
        object.__setattr__(self, "zero", int(self.zero))
        if self.recompute not in RECOMPUTE_MODES or not isinstance(self.recompute, str):
            raise LabInputError("recompute", self.recompute, "none, selective, full", "unknown_choice")
        if not isinstance(self.sequence_parallel, bool):
            raise LabInputError("sequence_parallel", self.sequence_parallel, "true or false", "not_a_bool")
        if self.interleave > 1 and self.pp == 1:
            raise LabInputError("interleave", self.interleave, "1 when pp = 1", "inconsistent",
                                "interleaving splits each pipeline stage; it needs pp > 1")

    @classmethod
    def from_dict(cls, data):
        if not isinstance(data, dict):
            raise LabInputError("parallelism", data, "an object of named fields", "not_an_object")
        known = ("tp", "pp", "dp", "zero", "recompute", "sequence_parallel", "micro_batch", "interleave")
        for key in data:
            if key not in known:
                raise LabInputError(key, data[key], ", ".join(known), "unknown_field")
        return cls(**data)

    def to_dict(self):
        return {
            "tp": self.tp, "pp": self.pp, "dp": self.dp, "zero": self.zero,
            "recompute": self.recompute, "sequence_parallel": self.sequence_parallel,
            "micro_batch": self.micro_batch, "interleave": self.interleave,
        }


def check_layout(workload, par):
    """Raise LabInputError when `par` cannot run `workload`; return micro-batches per step.

    Rules: tp pp dp = gpus; tp divides GPUs per node (tensor parallelism stays on
    NVLink, arXiv:2104.04473 Sec 3.2); tp divides heads, key/value heads,
    hidden and MLP size;
    layers split into pp x interleave equal chunks; dp divides the global batch
    of sequences and micro_batch divides the per-replica batch; interleaving
    needs the micro-batch count to be a multiple of pp (arXiv:2104.04473 Sec 2.2.2).
    """
    shape = workload.shape
    gpus = workload.gpus
    if par.tp * par.pp * par.dp != gpus:
        raise LabInputError("dp", par.dp, f"tp x pp x dp = gpus = {gpus}", "inconsistent",
                            f"tp={par.tp}, pp={par.pp} need dp={gpus / (par.tp * par.pp):g}")
    gpn = workload.gpus_per_node
    if par.tp > gpn or gpn % par.tp:
        raise LabInputError("tp", par.tp, f"a divisor of gpus_per_node={gpn}: {_divisors(gpn)}", "inconsistent",
                            "tensor parallelism must stay inside one NVLink node")
    for name, size in (("heads", shape.heads), ("kv_heads", shape.kv_heads), ("hidden", shape.hidden),
                       ("ffn_hidden", shape.ffn_hidden)):
        if size % par.tp:
            raise LabInputError("tp", par.tp, f"a divisor of {name}={size}: {_divisors(size, gpn)}", "inconsistent")
    chunks = par.pp * par.interleave
    if shape.layers % chunks:
        raise LabInputError("pp", par.pp, f"pp x interleave dividing layers={shape.layers}: {_divisors(shape.layers)}",
                            "inconsistent", f"{shape.layers} layers cannot split into {chunks} equal chunks")
    batch = workload.batch_sequences
    if batch % par.dp:
        raise LabInputError("dp", par.dp, f"a divisor of the global batch of {batch} sequences: {_divisors(batch)}",
                            "inconsistent")
    per_replica = batch // par.dp
    if per_replica % par.micro_batch:
        raise LabInputError("micro_batch", par.micro_batch,
                            f"a divisor of the per-replica batch {per_replica}: {_divisors(per_replica)}", "inconsistent")
    micro_batches = per_replica // par.micro_batch
    if par.interleave > 1 and micro_batches % par.pp:
        raise LabInputError("interleave", par.interleave, f"1, or micro-batches ({micro_batches}) a multiple of pp={par.pp}",
                            "inconsistent")
    return micro_batches


def plain_data_parallel(workload):
    """The plain data-parallel layout compute() reports until the planner lands.

    One replica per GPU, no ZeRO, no recompute, micro-batch 1.
    """
    return Parallelism(tp=1, pp=1, dp=workload.gpus, zero=0, recompute="none",
                       sequence_parallel=False, micro_batch=1, interleave=1)
