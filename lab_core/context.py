"""Numbers that depend on the workload only, computed once per Workload.

A planner evaluates hundreds of layouts of one workload; everything here is
the same for all of them (the model's dimensions, the device's achievable
rates, the failure and checkpoint figures), so evaluate() reads it from the
cache instead of recomputing it.
"""
from . import calibration as cal
from .failures import failure_figures
from .flops import (causal_masked_flops, module_replayed_flops, per_op_replayed_flops, shape_model_flops,
                    shape_recompute_flops)
from .hardware import nic_bytes_per_s, nvlink_busbw_bytes_per_s
from .memory import WEIGHT_BYTES, gradient_bytes_per_param
from .parallelism import RECOMPUTE_MODES
from .recompute_modules import DEFAULT_RECOMPUTE_MODULES, selective_differs
from .stack import (attention_kernels, compiles_loss, fuses_qkv, gathers_tp_inputs, is_modern, keeps_fp8_inputs,
                    per_op_selective)


class WorkloadContext:
    """Per-workload quantities (plain attributes, read in hot loops)."""

    __slots__ = ("shape", "device", "precision", "stack", "modern", "tp_overlap", "grad_overlap", "cp_all_gather",
                 "layer_gather_bytes",
                 "fused_qkv", "compute_factor", "attention_factor", "per_node_dispatch", "moe_overlap", "seq_len", "hidden", "heads",
                 "ffn_hidden", "kv_ratio", "attention", "vocab", "layers",
                 "layer_params", "params", "dropout", "flash", "peak_flops", "flops_rate", "hbm_rate",
                 "nvlink_rate", "nic_rate", "device_bytes", "gpus_per_node", "gpus", "nodes",
                 "batch_sequences", "tokens_per_step", "state_bytes", "grad_bytes", "training_tokens",
                 "loader_tokens_per_s_per_node", "storage_read_bytes_per_s", "model_flops", "causal_model_flops",
                 "recompute_flops",
                 "failures", "per_op_selective", "fp8_inputs", "gathered_inputs", "loss_bytes_per_logit",
                 "pipeline_schedule", "recompute_modules", "module_recompute", "selective_differs")

    def __init__(self, w):
        shape = w.shape
        dev = w.device
        # No reference back to the workload, which holds this context: a cycle would leave
        # every dropped workload's figures to the cycle collector, whose passes then landed
        # inside a slider move's answer (3-4 ms in CPython over the lab's moves).
        self.shape = shape
        self.device = dev
        self.precision = w.precision
        self.stack = w.stack
        self.modern = is_modern(w.stack)
        # Tensor-parallel overlap is a modern-stack feature (stack.py).
        self.tp_overlap = self.modern and w.tp_comm_overlap
        self.cp_all_gather = w.cp_all_gather
        # Whether gradient reduction hides behind the backward, on every stack (sync.py).
        self.grad_overlap = w.grad_reduce_overlap
        # Bytes per weight a ZeRO-3 layer gather moves (sync.fsdp_unit_times).
        self.layer_gather_bytes = 1.0 if w.fp8_weight_gather and w.precision == "fp8" else WEIGHT_BYTES
        self.fused_qkv = fuses_qkv(w.stack)
        self.compute_factor = cal.STACK_COMPUTE_EFFICIENCY[w.stack]
        self.attention_factor = cal.STACK_ATTENTION_EFFICIENCY[attention_kernels(w.stack, w.te_attention)]
        self.per_node_dispatch = w.moe_dispatcher == "per_node"
        # Expert-parallel all-to-all overlap is a modern-stack feature (stack.py).
        self.moe_overlap = self.modern and w.moe_comm_overlap
        self.pipeline_schedule = w.pipeline_schedule
        self.seq_len = w.seq_len
        self.hidden = shape.hidden
        self.heads = shape.heads
        self.ffn_hidden = shape.ffn_hidden
        self.kv_ratio = shape.kv_ratio
        self.attention = shape.attention
        self.vocab = shape.vocab
        self.layers = shape.layers
        self.layer_params = shape.layer_params
        self.params = shape.params
        self.dropout = w.dropout
        self.flash = w.flash_attention
        self.peak_flops = dev.peak_flops
        self.flops_rate = dev.peak_flops * cal.GEMM_EFFICIENCY[dev.id]
        self.hbm_rate = dev.hbm_bytes_per_s * cal.HBM_EFFICIENCY * cal.STACK_COMPUTE_EFFICIENCY[w.stack]
        self.nvlink_rate = nvlink_busbw_bytes_per_s(dev)
        self.nic_rate = nic_bytes_per_s(w.inter_node_gbps)
        self.device_bytes = dev.memory_bytes
        self.gpus_per_node = w.gpus_per_node
        self.gpus = w.gpus
        self.nodes = -(-w.gpus // w.gpus_per_node)
        self.batch_sequences = w.batch_sequences
        self.tokens_per_step = float(w.batch_sequences * w.seq_len)
        self.state_bytes = w.state_bytes_per_param
        self.grad_bytes = gradient_bytes_per_param(w.state_bytes_per_param)
        self.training_tokens = w.training_tokens
        self.loader_tokens_per_s_per_node = w.loader_tokens_per_s_per_node
        self.storage_read_bytes_per_s = w.storage_read_gbps * 1e9
        self.model_flops = shape_model_flops(w.batch_sequences, w.seq_len, shape)
        self.causal_model_flops = self.model_flops - causal_masked_flops(w.batch_sequences, w.seq_len, shape)
        self.recompute_flops = {mode: shape_recompute_flops(w.batch_sequences, w.seq_len, shape, mode,
                                                            w.flash_attention)
                                for mode in RECOMPUTE_MODES}
        self.failures = failure_figures(w, shape.params, self.nic_rate)
        # What the stack keeps for the backward pass (stack.py MEMORY), and replays.
        self.per_op_selective = per_op_selective(w.stack)
        if self.per_op_selective:
            self.recompute_flops["selective"] += per_op_replayed_flops(w.batch_sequences, w.seq_len, shape)
        # Megatron-Core's selective recompute of other modules than the attention core
        # (recompute_modules.py); whether selective then differs from none (the planner searches it).
        self.recompute_modules = w.recompute_modules
        self.module_recompute = w.recompute_modules != DEFAULT_RECOMPUTE_MODULES
        if self.module_recompute:
            if not w.flash_attention and "core_attn" not in w.recompute_modules:
                self.recompute_flops["selective"] = self.recompute_flops["none"]
            self.recompute_flops["selective"] += module_replayed_flops(w.batch_sequences, w.seq_len, shape,
                                                                       w.recompute_modules)
        self.selective_differs = self.per_op_selective or selective_differs(w.recompute_modules, w.flash_attention)
        self.fp8_inputs = keeps_fp8_inputs(w.stack, w.precision)
        self.gathered_inputs = gathers_tp_inputs(w.stack, self.tp_overlap, w.precision)
        loss = (cal.COMPILED_LOSS_BYTES_PER_LOGIT if compiles_loss(w.stack, w.compiled_loss)
                else cal.LOSS_BYTES_PER_LOGIT[w.stack])
        self.loss_bytes_per_logit = (loss["one_gpu"], loss["vocab_parallel"])


def context_for(workload):
    """The workload's cached WorkloadContext (built on first use)."""
    cache = workload._context_cache
    ctx = cache.get("ctx")
    if ctx is None:
        ctx = cache["ctx"] = WorkloadContext(workload)
    return ctx
