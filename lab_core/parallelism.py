"""How the workload is laid out on the GPUs, and the checks that make it valid."""
from dataclasses import dataclass

from .errors import LabInputError
from .partial_recompute import largest_chunk
from .records import record_from_dict, record_to_dict

RECOMPUTE_MODES = ("none", "selective", "full")
ZERO_STAGES = (0, 1, 2, 3)
_POSITIVE_INTS = ("tp", "cp", "pp", "dp", "micro_batch", "interleave", "ep")
# 0 means "not set": an even pipeline split, sharding over every data-parallel rank,
# or full recompute of every layer.
_OPTIONAL_INTS = ("dp_shard", "first_stage_layers", "last_stage_layers", "recompute_layers")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise LabInputError(name, value, "a positive integer", "not_a_number")
    if value != int(value) or value < 1:
        raise LabInputError(name, value, "a positive integer", "not_an_integer" if value >= 1 else "out_of_range")
    return int(value)


def _optional_int(name, value):
    if value is None or (value == 0 and not isinstance(value, bool)):
        return 0
    return _positive_int(name, value)


def zero_stages(stack, pp, shards):
    """The ZeRO stages a layout can run: 0 only without ranks to shard over
    (shards False); on the PyTorch-native stack with a pipeline (pp > 1), 0
    and 1. There FSDP keeps each unit's 16-bit weights and its whole gradients
    (accumulated in FSDP2's fp32 reduce type) from the step's first forward to
    its last backward, which is ZeRO-1's memory and traffic: PyTorch's
    pipeline stages turn off FSDP's gradient sync and resharding for every
    backward but the step's last (torch/distributed/pipelining/stage.py,
    _PipelineStageBase.backward_maybe_with_nosync), and torchtitan keeps the
    weights after the forward when it pipelines (fsdp_reshard_after_forward
    "default", torchtitan parallelize_llama.py: "For PP, do not reshard after
    forward to avoid per-microbatch all-gathers"). torchtitan's 405B pipeline
    runs measured 72.7 and 77.1 GiB per GPU, where the lab's ZeRO-1 counts 74
    and 82 and its ZeRO-3 about half (content/validation/end_to_end.yaml,
    group torchtitan_memory).
    """
    if not shards:
        return (0,)
    if pp > 1 and stack == "torch_native":
        return (0, 1)
    return ZERO_STAGES


def _divisors(n, limit=None):
    found = [d for d in range(1, n + 1) if n % d == 0]
    if limit is not None:
        found = [d for d in found if d <= limit]
    text = ", ".join(str(d) for d in found[:12])
    return text + (", …" if len(found) > 12 else "")


@dataclass(frozen=True)
class Parallelism:
    """tp x cp x pp x dp GPUs; ZeRO stage 0-3; recompute none | selective | full.

    micro_batch: sequences per micro-batch; interleave: model chunks per GPU
    (v of the interleaved 1F1B schedule, arXiv:2104.04473 Sec 2.2.2); cp:
    context-parallel degree (the sequence split over cp GPUs, Megatron-Core's
    --context-parallel-size); ep: expert-parallel degree (mixture of experts
    only); dp_shard: the data-parallel ranks ZeRO shards over (0 = all of
    them; fewer is hybrid sharding, HSDP, arXiv:2304.11277 Sec 3.2.1);
    first_stage_layers / last_stage_layers: layers on the first and last
    pipeline stage when they differ from the rest (0 = an even split;
    Megatron-Core's --decoder-first/last-pipeline-num-layers);
    recompute_layers: with recompute "full", the layers of each model chunk
    that recompute (0 = all of them; fewer is Megatron's block method,
    partial_recompute.py).
    """

    tp: int = 1
    pp: int = 1
    dp: int = 1
    zero: int = 0
    recompute: str = "none"
    sequence_parallel: bool = False
    micro_batch: int = 1
    interleave: int = 1
    cp: int = 1
    ep: int = 1
    dp_shard: int = 0
    first_stage_layers: int = 0
    last_stage_layers: int = 0
    recompute_layers: int = 0

    def __post_init__(self):
        for name in _POSITIVE_INTS:
            object.__setattr__(self, name, _positive_int(name, getattr(self, name)))
        for name in _OPTIONAL_INTS:
            object.__setattr__(self, name, _optional_int(name, getattr(self, name)))
        if isinstance(self.zero, bool) or self.zero not in ZERO_STAGES:
            raise LabInputError("zero", self.zero, "0, 1, 2 or 3", "unknown_choice")
        object.__setattr__(self, "zero", int(self.zero))
        if self.recompute not in RECOMPUTE_MODES or not isinstance(self.recompute, str):
            raise LabInputError("recompute", self.recompute, ", ".join(RECOMPUTE_MODES), "unknown_choice")
        if self.recompute_layers and self.recompute != "full":
            raise LabInputError("recompute_layers", self.recompute_layers, '0 unless recompute = "full"',
                                "inconsistent", "only full recompute replays whole layers")
        if not isinstance(self.sequence_parallel, bool):
            raise LabInputError("sequence_parallel", self.sequence_parallel, "true or false", "not_a_bool")
        if self.interleave > 1 and self.pp == 1:
            raise LabInputError("interleave", self.interleave, "1 when pp = 1", "inconsistent",
                                "interleaving splits each pipeline stage; it needs pp > 1")
        if (self.first_stage_layers or self.last_stage_layers) and self.pp == 1:
            raise LabInputError("first_stage_layers", self.first_stage_layers or self.last_stage_layers,
                                "0 when pp = 1", "inconsistent", "an uneven split needs more than one stage")
        if self.dp_shard and self.dp % self.dp_shard:
            raise LabInputError("dp_shard", self.dp_shard, f"a divisor of dp={self.dp}: {_divisors(self.dp)}",
                                "inconsistent")

    @property
    def model_parallel(self):
        """GPUs that hold one replica: tp x cp x pp."""
        return self.tp * self.cp * self.pp

    @property
    def sync_ranks(self):
        """GPUs holding the same shared weights, which sync their gradients: the
        data- and context-parallel ranks (context parallelism splits the
        sequence, not the weights)."""
        return self.dp * self.cp

    @property
    def shard_ranks(self):
        """Data-parallel ranks ZeRO shards over (all dp unless hybrid sharding)."""
        return self.dp_shard or self.dp

    @classmethod
    def from_dict(cls, data):
        return record_from_dict(cls, data, "parallelism", "an object of named fields")

    def to_dict(self):
        return record_to_dict(self)


class Layout:
    """What check_layout derives: micro-batches per step and the stage split."""

    __slots__ = ("micro_batches", "first_layers", "middle_layers", "last_layers")

    def __init__(self, micro_batches, first_layers, middle_layers, last_layers):
        self.micro_batches = micro_batches
        self.first_layers = first_layers
        self.middle_layers = middle_layers
        self.last_layers = last_layers

    @property
    def even(self):
        return self.first_layers == self.middle_layers == self.last_layers


def stage_split(layers, par):
    """(first, middle, last) layers per stage; raises LabInputError when they cannot be split.

    Even: layers / pp each, and pp x interleave equal chunks (arXiv:2104.04473
    Sec 2.2.2). Uneven (Megatron-Core's --decoder-first-pipeline-num-layers and
    --decoder-last-pipeline-num-layers; Llama 3 puts one layer fewer on the
    first and last stage, arXiv:2407.21783 Sec 3.3.2): the stages between get
    the rest in equal parts; with interleaving the middle stages' layers split
    into v equal chunks and the first and last stage hold at least one layer.
    """
    p, v = par.pp, par.interleave
    first, last = par.first_stage_layers, par.last_stage_layers
    if not first and not last:
        if layers % (p * v):
            raise LabInputError("pp", p, f"pp x interleave dividing layers={layers}: {_divisors(layers)}",
                                "inconsistent", f"{layers} layers cannot split into {p * v} equal chunks")
        return layers // p, layers // p, layers // p
    middle_stages = p - 2
    if middle_stages == 0:
        first = first or layers - last
        last = last or layers - first
        middle = first
    else:
        others = middle_stages + (0 if first else 1) + (0 if last else 1)
        rest = layers - first - last
        if rest < others or rest % others:
            raise LabInputError("first_stage_layers", first or last,
                                f"first + last leaving a multiple of {others} layers for the other stages",
                                "inconsistent", f"{rest} layers cannot split evenly over {others} stages")
        middle = rest // others
        first, last = first or middle, last or middle
    if first + last + middle * middle_stages != layers or first < 1 or last < 1:
        raise LabInputError("last_stage_layers", last, f"first + last = layers = {layers} when pp = 2",
                            "inconsistent")
    if v > 1 and middle_stages and middle % v:
        raise LabInputError("interleave", v, f"a divisor of the {middle} layers of each middle stage",
                            "inconsistent")
    return first, middle, last


def check_layout(workload, par):
    """Raise LabInputError when `par` cannot run `workload`; return its Layout.

    Rules: tp cp pp dp = gpus; tp divides GPUs per node (tensor parallelism
    stays on NVLink, arXiv:2104.04473 Sec 3.2); tp divides heads, key/value
    heads, hidden and MLP size; cp splits the sequence into 2 cp equal chunks
    (Megatron-Core's load-balanced causal split) and needs flash attention;
    layers split over the stages (stage_split); dp divides the global batch of
    sequences and micro_batch divides the per-replica batch; interleaving needs
    the micro-batch count to be a multiple of pp (arXiv:2104.04473 Sec 2.2.2);
    the bidirectional schedules' own rules (check_schedule); the ZeRO stage is
    one the stack runs with that pipeline (zero_stages).
    """
    shape = workload.shape
    gpus = workload.gpus
    if par.model_parallel * par.dp != gpus:
        raise LabInputError("dp", par.dp, f"tp x cp x pp x dp = gpus = {gpus}", "inconsistent",
                            f"tp={par.tp}, cp={par.cp}, pp={par.pp} need dp={gpus / par.model_parallel:g}")
    gpn = workload.gpus_per_node
    if par.tp > gpn or gpn % par.tp:
        raise LabInputError("tp", par.tp, f"a divisor of gpus_per_node={gpn}: {_divisors(gpn)}", "inconsistent",
                            "tensor parallelism must stay inside one NVLink node")
    for name, size in (("heads", shape.heads), ("kv_heads", shape.kv_heads), ("hidden", shape.hidden),
                       ("ffn_hidden", shape.ffn_hidden)):
        if size % par.tp:
            raise LabInputError("tp", par.tp, f"a divisor of {name}={size}: {_divisors(size, gpn)}", "inconsistent")
    if par.cp > 1:
        if workload.seq_len % (2 * par.cp):
            raise LabInputError("cp", par.cp, f"cp with 2 cp dividing seq_len={workload.seq_len}", "inconsistent",
                                "the sequence splits into 2 cp equal chunks")
        if not workload.flash_attention:
            raise LabInputError("cp", par.cp, "1 without flash attention", "inconsistent",
                                "context parallelism runs a flash-attention kernel per chunk")
    first, middle, last = stage_split(shape.layers, par)
    if par.recompute_layers:
        most = largest_chunk(first, middle, last, par.interleave)
        if par.recompute_layers > most:
            raise LabInputError("recompute_layers", par.recompute_layers, f"0 to {most}", "inconsistent",
                                f"the largest model chunk holds {most} layers (0 recomputes all of them)")
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
    check_schedule(workload.pipeline_schedule, par, micro_batches)
    if par.zero not in zero_stages(workload.stack, par.pp, True):
        raise LabInputError("zero", par.zero, "0, 1", "inconsistent",
                            "with the PyTorch-native stack and pp > 1: PyTorch's pipeline keeps FSDP's weights "
                            "and gradients whole through the step (ZeRO-1)")
    check_experts(shape.experts, par)
    return Layout(micro_batches, first, middle, last)


def check_schedule(schedule, par, micro_batches):
    """DualPipe and DualPipeV (pipeline.py) with a pipeline: they place two chunks on each
    GPU themselves (interleave 1), and need at least 2 pp micro-batches per step; DualPipe
    also an even number of stages and of micro-batches (deepseek-ai/DualPipe:
    dualpipe.py asserts num_ranks % 2 == 0 and num_chunks % 2 == 0 and num_chunks >=
    num_ranks * 2; dualpipev.py num_chunks >= num_ranks * 2)."""
    if par.pp == 1 or schedule == "1f1b":
        return
    if par.interleave > 1:
        raise LabInputError("interleave", par.interleave, f"1 with the {schedule} schedule", "inconsistent",
                            "the schedule places two chunks on each GPU itself")
    if schedule == "dualpipe" and par.pp % 2:
        raise LabInputError("pp", par.pp, "an even pp with DualPipe", "inconsistent",
                            "DualPipe pairs each stage with its mirror")
    if not schedule_allows(schedule, par.pp, micro_batches):
        even = " (an even number)" if schedule == "dualpipe" else ""
        raise LabInputError("micro_batch", par.micro_batch,
                            f"one that leaves at least 2 pp = {2 * par.pp}{even} micro-batches per step, "
                            f"not {micro_batches}", "inconsistent")


def schedule_allows(schedule, pp, micro_batches):
    """Whether a pipeline of pp stages can run micro_batches per step under the schedule
    without interleaving (check_schedule's rules; the planner asks before it builds a plan)."""
    if pp == 1 or schedule == "1f1b":
        return True
    if schedule == "dualpipe" and (pp % 2 or micro_batches % 2):
        return False
    return micro_batches >= 2 * pp


def check_experts(experts, par):
    """Expert parallelism splits the routed experts evenly over ep GPUs, which
    fold into the tp x cp x dp GPUs of a pipeline stage (Megatron-Core's MoE
    parallel folding, arXiv:2504.14960 Sec 3.2), so ep may exceed dp."""
    if par.ep == 1:
        return
    if experts is None:
        raise LabInputError("ep", par.ep, "1 for a dense model", "inconsistent",
                            "expert parallelism splits the experts of a mixture-of-experts model")
    if experts.count % par.ep:
        raise LabInputError("ep", par.ep, f"a divisor of experts={experts.count}: {_divisors(experts.count)}",
                            "inconsistent", "each GPU holds the same number of whole experts")
    ranks = par.tp * par.cp * par.dp
    if ranks % par.ep:
        raise LabInputError("ep", par.ep, f"a divisor of tp x cp x dp = {ranks}: {_divisors(ranks)}", "inconsistent",
                            "expert-parallel groups fold into a stage's tp x cp x dp GPUs")


def plain_data_parallel(workload):
    """The plain data-parallel layout compute() reports: one replica per GPU,
    no ZeRO, no recompute, micro-batch 1."""
    return Parallelism(tp=1, pp=1, dp=workload.gpus, zero=0, recompute="none",
                       sequence_parallel=False, micro_batch=1, interleave=1)
