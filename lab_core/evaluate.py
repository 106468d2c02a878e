"""evaluate(workload, parallelism) -> Report: memory, time, data, failures.

Per-workload quantities (rates, shape, failure and checkpoint figures) are
computed once and cached on the Workload (context_for), so a planner calling
evaluate() for many layouts pays only for what depends on the layout.
"""
import math

from . import calibration as cal
from .activations import extra_bytes, first_stage_bytes, per_layer_bytes, working_bytes
from .comms import group_time, point_to_point_time
from .errors import LabInputError
from .failures import (daly_interval, goodput, interruptions_per_hour,
                       lost_work_per_interruption, young_interval)
from .memory import gradient_bytes_per_param, model_state_parts
from .parallelism import Parallelism, check_layout
from .report import Report
from .flops import layer_forward_flops, logits_forward_flops
from .timing import layer_times, logits_times
from .workload import Workload


class WorkloadContext:
    """Numbers that depend on the workload only (never on the layout)."""

    def __init__(self, w):
        shape = w.shape
        dev = w.device
        self.s = w.seq_len
        self.h = shape.hidden
        self.a = shape.heads
        self.f = shape.ffn_hidden
        self.r = shape.kv_ratio
        self.dropout = w.dropout
        self.V = shape.vocab
        self.L = shape.layers
        self.layer_params = shape.layer_params
        self.params = shape.params
        self.flops_rate = dev.peak_flops * cal.GEMM_EFFICIENCY[dev.id]
        self.hbm_rate = dev.hbm_bytes_per_s * cal.HBM_EFFICIENCY
        self.nvlink_rate = dev.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION[dev.id]
        self.nic_rate = w.inter_node_gbps * 1e9 / 8.0 * cal.INTER_NODE_EFFICIENCY
        self.peak = dev.peak_flops
        self.device_bytes = dev.memory_bytes
        self.gpn = w.gpus_per_node
        self.gpus = w.gpus
        self.nodes = -(-w.gpus // w.gpus_per_node)
        self.batch = w.batch_sequences
        self.tokens_per_step = float(w.batch_sequences * w.seq_len)
        self.state_bytes = w.state_bytes_per_param
        self.grad_bytes = gradient_bytes_per_param(w.state_bytes_per_param)
        self.flash = w.flash_attention
        self.training_tokens = w.training_tokens
        self.loader_tokens_per_s = self.nodes * w.loader_tokens_per_s_per_node
        self.storage_read_bytes_per_s = w.storage_read_gbps * 1e9
        # Failures and checkpoints depend on the workload only.
        rate = interruptions_per_hour(w.gpus, w.gpu_failures_per_hour)
        self.interruptions_per_day = 24.0 * rate
        # Below one interruption per 10^12 hours there is no meaningful MTTI.
        self.mtti_s = 3600.0 / rate if rate > 1e-12 else None
        self.checkpoint_bytes = shape.params * cal.CHECKPOINT_BYTES_PER_PARAM
        delta = self.checkpoint_bytes / (w.checkpoint_storage_gbps * 1e9)
        self.checkpoint_write_s = delta
        self.interval_s = w.checkpoint_interval_min * 60.0
        restart = w.restart_min * 60.0
        if self.mtti_s is None:
            self.young_s = self.daly_s = None
            self.goodput_at_daly = goodput(1.0, 0.0, restart, None)
        else:
            self.young_s = young_interval(delta, self.mtti_s)
            self.daly_s = daly_interval(delta, self.mtti_s)
            self.goodput_at_daly = goodput(self.daly_s, delta, restart, self.mtti_s) if self.daly_s > 0 else 0.0
        self.lost_per_interruption_s = lost_work_per_interruption(self.interval_s, delta, restart)
        self.lost_per_day_s = self.lost_per_interruption_s * self.interruptions_per_day
        self.goodput = goodput(self.interval_s, delta, restart, self.mtti_s)


def context_for(workload):
    """The workload's cached WorkloadContext (built on first use)."""
    cache = workload._context_cache
    ctx = cache.get("ctx")
    if ctx is None:
        ctx = cache["ctx"] = WorkloadContext(workload)
    return ctx


def evaluate(workload, parallelism):
    """Memory, step time, throughput, data and failure figures for one layout.

    Raises LabInputError when the layout does not fit the workload (see
    parallelism.check_layout). Sources of each formula are in the modules
    it calls; the composition is:
      step = micro-batches x max(forward + backward + recompute + TP, p2p)
             + bubble (p-1)/v x (one micro-batch + its sends)
                                                  (arXiv:2104.04473 Sec 2.2)
             + exposed DP all-reduce + exposed ZeRO-3 gathers + optimizer step,
    with one overlap window for all DP/ZeRO traffic (see the DP section).
    """
    if not isinstance(workload, Workload):
        raise LabInputError("workload", repr(workload), "a lab_core.Workload", "not_a_workload")
    if not isinstance(parallelism, Parallelism):
        raise LabInputError("parallelism", repr(parallelism), "a lab_core.Parallelism", "not_a_parallelism")
    par = parallelism
    m = check_layout(workload, par)
    c = context_for(workload)
    t, p, d, b, v = par.tp, par.pp, par.dp, par.micro_batch, par.interleave
    s, h, a, f, V, L = c.s, c.h, c.a, c.f, c.V, c.L
    sp = par.sequence_parallel and t > 1
    zero = par.zero
    r = Report()
    r.parallelism = par
    r.shape = workload.shape

    # --- Memory of the most loaded GPU (first pipeline stage) ---------------
    params_gpu = (L / p) * c.layer_params / t + V * h / t + s * h
    weights, grads, optimizer = model_state_parts(params_gpu, c.state_bytes, d, zero)
    if zero >= 3 and d > 1:
        # Two layers' gathered 16-bit weights in flight (current + prefetch),
        # never more than the unsharded weights.
        weights += min(4.0 * c.layer_params / t, 2.0 * params_gpu - weights)
    act_layer = per_layer_bytes(s, b, h, a, t, sp, par.recompute, c.flash, f, c.r, c.dropout)
    working = working_bytes(s, b, h, a, t, sp, par.recompute, c.flash, f, c.r, c.dropout)
    activations = first_stage_bytes(act_layer, L, p, m, v) + extra_bytes(s, b, h, V, t, p, m, c.dropout) + working
    total = weights + grads + optimizer + activations
    r.weights_bytes = weights
    r.gradients_bytes = grads
    r.optimizer_bytes = optimizer
    r.activations_bytes = activations
    r.activations_per_layer_bytes = act_layer
    r.activations_working_bytes = working
    r.memory_bytes = total
    r.device_bytes = c.device_bytes
    r.headroom_bytes = c.device_bytes - total if total < c.device_bytes else 0.0
    r.shortfall_bytes = total - c.device_bytes if total > c.device_bytes else 0.0
    r.memory_ratio = total / c.device_bytes
    r.fits = total <= c.device_bytes
    r.params_per_gpu = params_gpu

    # --- Time of one micro-batch on the bottleneck (last) stage -------------
    lt = layer_times(s, b, h, a, f, t, sp, par.recompute, c.flash, c.flops_rate, c.hbm_rate, c.nvlink_rate,
                     c.r, c.dropout)
    logit_f, logit_b = logits_times(s, b, h, V, t, c.flops_rate, c.hbm_rate)
    lp = L / p
    fwd = lp * lt.forward + logit_f
    bwd = lp * lt.backward + logit_b
    rec = lp * lt.recompute
    tp_comm = lp * lt.tp_comm
    gpn = c.gpn
    if p > 1:
        # Activations cross stage boundaries (b s h 16-bit values, split t ways
        # by Megatron's scatter/gather, arXiv:2104.04473 Sec 4.1); forward and
        # backward, v times with interleaving. Across nodes when t p > GPUs per node.
        link = c.nvlink_rate if t * p <= gpn else c.nic_rate
        p2p = 2.0 * v * point_to_point_time(2.0 * b * s * h / t, link)
    else:
        p2p = 0.0
    # Sends run asynchronously behind the next chunk's compute in the steady
    # 1F1B phase (Llama 3, arXiv:2407.21783 Sec 3.3.2; Megatron-Core's
    # overlapped p2p); in the fill and drain phases each hop waits for its
    # data, so the bubble carries them: (p - 1)/v x (compute + sends).
    busy = fwd + bwd + rec + tp_comm
    steady = busy if busy >= p2p else p2p
    bubble = (p - 1.0) / v * (busy + p2p)

    # --- Data parallelism and ZeRO ------------------------------------------
    # One overlap window for all overlappable traffic (DP gradients, ZeRO-3
    # gathers): compute can hide communication once, and a second of extra
    # compute hides at most DP_OVERLAP_FRACTION < 1 seconds, so more compute
    # never shortens the step.
    ranks_per_node = dp_ranks_per_node(c, t, p, d)
    dp_link = "none" if d == 1 else ("nvlink" if ranks_per_node >= d else "inter_node")
    overlap = cal.DP_OVERLAP_FRACTION
    if zero >= 3 and d > 1:
        # Per micro-batch, every layer's 16-bit weights are all-gathered before
        # its forward and again before its backward, and its gradients are
        # reduce-scattered after it (arXiv:1910.02054 Sec 7.2.2: 3 Psi per
        # micro-batch; gradients are sharded, so they cannot be accumulated
        # unreduced over micro-batches). Prefetch runs one layer ahead inside
        # the same micro-batch: the first gather of each pass is exposed, the
        # rest competes for that pass's compute window.
        z3 = zero3_times(c, t, p, d)
        gather, fill, reduce = z3.gather, z3.layer_gather, z3.reduce
        exposed_f = fill + _excess(gather - fill, overlap * fwd)
        exposed_b = fill + _excess(gather + reduce - fill, overlap * (bwd + rec))
        zero_total = 2.0 * m * gather
        dp_total = m * reduce
        share = gather / (gather + reduce) if gather + reduce > 0.0 else 1.0
        zero_exposed = m * (exposed_f + share * exposed_b)
        dp_exposed = m * (1.0 - share) * exposed_b
    else:
        # All-reduce, or reduce-scatter + all-gather under ZeRO-1/2: the same
        # 2 Psi volume (arXiv:1910.02054 Sec 7.1, 7.2.1), in buckets that
        # leave while the last micro-batch's backward runs.
        # With v interleaved chunks a chunk's gradients are final once its
        # last backward ends, spread over the drain phase: (v - 1)/v of the
        # drain bubble is idle time the buckets of finished chunks can use.
        dp_total = _bucketed(params_gpu * c.grad_bytes, cal.DP_BUCKET_BYTES, d, ranks_per_node, c, 2.0)
        dp_exposed = _excess(dp_total, overlap * (bwd + rec) + (v - 1.0) / v * bubble)
        zero_total = zero_exposed = 0.0
    owned = params_gpu / d if zero >= 1 else params_gpu
    optimizer_s = owned * cal.OPTIMIZER_BYTES_PER_PARAM / c.hbm_rate

    step = m * steady + bubble + dp_exposed + zero_exposed + optimizer_s
    r.step_s = step
    r.forward_s = m * fwd
    r.backward_s = m * bwd
    r.recompute_s = m * rec
    r.tp_comm_s = m * tp_comm
    r.pp_p2p_s = m * (steady - busy)
    r.pp_p2p_total_s = m * p2p
    r.pipeline_bubble_s = bubble
    r.dp_comm_s = dp_exposed
    r.dp_comm_total_s = dp_total
    r.zero_comm_s = zero_exposed
    r.zero_comm_total_s = zero_total
    r.optimizer_s = optimizer_s
    r.micro_batches = m
    r.bubble_fraction = (p - 1.0) / (v * m)
    r.dp_link = dp_link

    # --- Throughput -----------------------------------------------------------
    B = c.batch
    gemm_B, attn_B = layer_forward_flops(B, s, h, f, c.r)
    model_flops = 3.0 * (L * (gemm_B + attn_B) + logits_forward_flops(B, s, h, V))  # flops.model_flops (Eq 7)
    if par.recompute == "full":
        hardware_flops = model_flops + L * (gemm_B + attn_B)  # arXiv:2104.04473 Eq 3
    elif par.recompute == "selective" or c.flash:
        hardware_flops = model_flops + 3.0 * L * attn_B  # arXiv:2205.05198 Eq 8
    else:
        hardware_flops = model_flops
    tokens_per_s = c.tokens_per_step / step
    r.tokens_per_step = c.tokens_per_step
    r.tokens_per_s = tokens_per_s
    r.model_flops_per_step = model_flops
    r.hardware_flops_per_step = hardware_flops
    r.model_flops_per_s_per_gpu = model_flops / step / c.gpus
    r.mfu = r.model_flops_per_s_per_gpu / c.peak
    r.hfu = hardware_flops / step / c.gpus / c.peak

    # --- Training time ----------------------------------------------------------
    train_s = c.training_tokens / tokens_per_s
    r.training_tokens = c.training_tokens
    r.train_time_s = train_s
    r.gpu_hours = train_s * c.gpus / 3600.0
    if c.goodput > 0.0:
        r.train_time_with_failures_s = train_s / c.goodput
        r.gpu_hours_with_failures = r.gpu_hours / c.goodput
    else:
        r.train_time_with_failures_s = None
        r.gpu_hours_with_failures = None

    # --- Data pipeline (data.py) ------------------------------------------------
    r.loader_tokens_per_s = c.loader_tokens_per_s
    r.loader_ratio = tokens_per_s / c.loader_tokens_per_s
    r.required_read_bytes_per_s = tokens_per_s * cal.DATA_BYTES_PER_TOKEN
    r.storage_read_bytes_per_s = c.storage_read_bytes_per_s
    r.storage_ratio = r.required_read_bytes_per_s / c.storage_read_bytes_per_s

    # --- Failures and checkpoints (failures.py; per workload) -------------------
    r.interruptions_per_day = c.interruptions_per_day
    r.mtti_s = c.mtti_s
    r.checkpoint_bytes = c.checkpoint_bytes
    r.checkpoint_write_s = c.checkpoint_write_s
    r.young_interval_s = c.young_s
    r.daly_interval_s = c.daly_s
    r.checkpoint_interval_s = c.interval_s
    r.lost_work_per_interruption_s = c.lost_per_interruption_s
    r.lost_work_per_day_s = c.lost_per_day_s
    r.goodput = c.goodput
    r.goodput_at_daly = c.goodput_at_daly
    return r


def _excess(comm, window):
    """Communication time left exposed after a compute window."""
    return comm - window if comm > window else 0.0


def dp_ranks_per_node(c, t, p, d):
    """Data-parallel ranks sharing a node (Megatron order: TP innermost, then DP)."""
    per_node = c.gpn // (t * p) if t * p < c.gpn else 1
    return per_node if per_node < d else d


class Zero3Times:
    """ZeRO-3 traffic of one micro-batch on one GPU, seconds (see zero3_times)."""

    __slots__ = ("layer_gather", "gather", "reduce")

    def __init__(self, layer_gather, gather, reduce):
        self.layer_gather = layer_gather
        self.gather = gather
        self.reduce = reduce


def zero3_times(c, t, p, d):
    """Per-layer weight all-gather, one pass's gathers and the gradient reduce-scatter.

    Messages are one layer's 16-bit weights (2 x layer params / t bytes) or
    its gradients (grad bytes x layer params / t), plus the embeddings
    (V h / t + s h) as one more message; each runs at the bus bandwidth of its
    own size (comms.size_efficiency) over the link the DP group spans.
    All-gather and reduce-scatter move (n - 1)/n of the message
    (arXiv:1910.02054 Sec 7.1). Inside one node that is an NVLink ring; a
    group that spans nodes is charged as a flat ring in which each GPU's
    share crosses its own NIC (no intra-node aggregation of the node's eight
    NICs, which gradient all-reduce buckets get, comms.group_time).
    ASSUMPTION, checked against the six ZeRO-3 rows of arXiv:2104.04473
    Table 2 (DeepSpeed ZeRO-3, 175B and 530B on 384-2,240 A100s): with it the
    model is 11-40% faster than published (mean +25%); with hierarchical
    aggregation it was 42-362% faster.
    """
    rpn = dp_ranks_per_node(c, t, p, d)
    if rpn < d:
        rpn = 1
    layer = c.layer_params / t
    emb = c.V * c.h / t + c.s * c.h
    nvl, nic = c.nvlink_rate, c.nic_rate
    g_layer = group_time(2.0 * layer, d, rpn, nvl, nic, 1.0)
    gather = (c.L / p) * g_layer + group_time(2.0 * emb, d, rpn, nvl, nic, 1.0)
    g = c.grad_bytes
    reduce = (c.L / p) * group_time(g * layer, d, rpn, nvl, nic, 1.0) + group_time(g * emb, d, rpn, nvl, nic, 1.0)
    return Zero3Times(g_layer, gather, reduce)


def _bucketed(volume, bucket, ranks, ranks_per_node, c, factor):
    """Collective time of `volume` bytes sent in buckets (message size = bucket)."""
    if ranks <= 1 or volume <= 0.0:
        return 0.0
    if volume <= bucket:
        return group_time(volume, ranks, ranks_per_node, c.nvlink_rate, c.nic_rate, factor)
    return volume / bucket * group_time(bucket, ranks, ranks_per_node, c.nvlink_rate, c.nic_rate, factor)
