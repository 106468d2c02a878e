"""The reader's workload: what is trained, on what, for how long.

Every field is checked against inputs.INPUT_SPECS; the model shape is derived
once here (shape.py) so evaluate() can reuse it for every parallelism.
"""
import math
from dataclasses import dataclass

from .errors import LabInputError
from .records import field_names, record_from_dict, record_to_dict
from .hardware import GPU_PRESETS
from .inputs import SPEC_BY_NAME
from .recompute_modules import canonical as canonical_modules, check as check_modules
from .shape import derive_shape


def _allowed(spec):
    if spec.kind in ("choice", "modules"):
        return ", ".join(str(c) for c in spec.choices)
    if spec.kind == "bool":
        return "true or false"
    text = f"{spec.lowest:g} … {spec.highest:g} {spec.unit}"
    if spec.derive_if_zero:
        text += " (or 0 / null to derive)"
    return text


def _check(name, value):
    spec = SPEC_BY_NAME[name]
    if spec.kind == "modules":
        return canonical_modules(value)
    if spec.kind == "bool":
        if not isinstance(value, bool):
            raise LabInputError(name, value, _allowed(spec), "not_a_bool")
        return value
    if spec.kind == "choice" and isinstance(spec.default, str):
        if not isinstance(value, str) or value not in spec.choices:
            raise LabInputError(name, value, _allowed(spec), "unknown_choice")
        return value
    if spec.derive_if_zero and (value is None or (value == 0 and not isinstance(value, bool))):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LabInputError(name, value, _allowed(spec), "not_a_number")
    if not math.isfinite(value):
        raise LabInputError(name, value, _allowed(spec), "not_a_number")
    if spec.integer and value != int(value):
        raise LabInputError(name, value, _allowed(spec), "not_an_integer")
    if spec.kind == "choice":
        if value not in spec.choices:
            raise LabInputError(name, value, _allowed(spec), "unknown_choice")
    elif not spec.lowest <= value <= spec.highest:
        raise LabInputError(name, value, _allowed(spec), "out_of_range")
    return int(value) if spec.integer else float(value)


def _default(name):
    value = SPEC_BY_NAME[name].default
    if SPEC_BY_NAME[name].derive_if_zero and value == 0:
        return None
    return value


@dataclass(frozen=True)
class Workload:
    """All inputs, in SI-ish units named by INPUT_SPECS (see inputs.py)."""

    params: float = _default("params")
    gpus: int = _default("gpus")
    global_batch_tokens: int = _default("global_batch_tokens")
    seq_len: int = _default("seq_len")
    inter_node_gbps: float = _default("inter_node_gbps")
    checkpoint_interval_min: float = _default("checkpoint_interval_min")
    gpu: str = _default("gpu")
    gpus_per_node: int = _default("gpus_per_node")
    layers: int = None
    hidden: int = None
    heads: int = None
    kv_heads: int = None
    head_dim: int = None
    v_head_dim: int = None
    q_lora_rank: int = None
    kv_lora_rank: int = None
    ffn_hidden: int = None
    vocab: int = None
    state_bytes_per_param: int = _default("state_bytes_per_param")
    training_tokens: float = _default("training_tokens")
    gpu_failures_per_hour: float = _default("gpu_failures_per_hour")
    restart_min: float = None
    checkpoint_storage_gbps: float = _default("checkpoint_storage_gbps")
    storage_read_gbps: float = _default("storage_read_gbps")
    loader_tokens_per_s_per_node: float = _default("loader_tokens_per_s_per_node")
    flash_attention: bool = _default("flash_attention")
    dropout: bool = _default("dropout")
    experts: int = _default("experts")
    experts_per_token: int = _default("experts_per_token")
    expert_ffn_hidden: int = None
    shared_experts: int = _default("shared_experts")
    dense_layers: int = _default("dense_layers")
    expert_groups: int = _default("expert_groups")
    expert_groups_per_token: int = _default("expert_groups_per_token")
    mtp_layers: int = _default("mtp_layers")
    moe_dispatcher: str = _default("moe_dispatcher")
    moe_comm_overlap: bool = _default("moe_comm_overlap")
    stack: str = _default("stack")
    precision: str = _default("precision")
    tp_comm_overlap: bool = _default("tp_comm_overlap")
    grad_reduce_overlap: bool = _default("grad_reduce_overlap")
    cp_all_gather: bool = _default("cp_all_gather")
    fp8_weight_gather: bool = _default("fp8_weight_gather")
    compiled_loss: bool = _default("compiled_loss")
    te_attention: bool = _default("te_attention")
    checkpoint_mode: str = _default("checkpoint_mode")
    pipeline_schedule: str = _default("pipeline_schedule")
    recompute_modules: tuple = _default("recompute_modules")

    def __post_init__(self):
        for name in field_names(type(self)):
            object.__setattr__(self, name, _check(name, getattr(self, name)))
        shape = derive_shape(self.params, self.seq_len, self.layers, self.hidden,
                             self.heads, self.ffn_hidden, self.vocab, self.kv_heads, self._moe(),
                             self._attention(), self.mtp_layers)
        # Derived once, reused by every evaluate() call (not dataclass fields).
        object.__setattr__(self, "shape", shape)
        check_modules(self.recompute_modules, shape, self.stack)
        object.__setattr__(self, "device", GPU_PRESETS[self.gpu])
        if self.precision == "fp8" and self.device.fp8_peak_flops is None:
            fp8_presets = sorted(k for k, v in GPU_PRESETS.items() if v.fp8_peak_flops)
            raise LabInputError("precision", self.precision, f"bf16 on {self.gpu}; fp8 on {', '.join(fp8_presets)}",
                                "inconsistent", f"{self.device.name} has no FP8 tensor cores",
                                {"gpu": self.gpu, "fp8_gpus": fp8_presets})
        object.__setattr__(self, "batch_sequences", max(1, int(round(self.global_batch_tokens / self.seq_len))))
        object.__setattr__(self, "_context_cache", {})

    def _attention(self):
        """The attention sizes for derive_shape (0 where not given), or None for the default shape."""
        sizes = (self.head_dim or 0, self.v_head_dim or 0, self.q_lora_rank or 0, self.kv_lora_rank or 0)
        return sizes if any(sizes) else None

    def _moe(self):
        """The MoE part for derive_shape, or None for a dense model (after the field checks; derive_shape
        checks dense_layers against the layers, given or derived)."""
        if not self.experts:
            return None
        if self.experts_per_token > self.experts:
            raise LabInputError("experts_per_token", self.experts_per_token, f"1 … experts={self.experts}",
                                "inconsistent", "a token cannot use more experts than there are",
                                {"experts": self.experts})
        return (self.experts, self.experts_per_token, self.expert_ffn_hidden or 0, self.shared_experts,
                self.dense_layers) + self._expert_groups()

    def _expert_groups(self):
        """(groups, groups per token) of group-limited routing, (0, 0) without it (moe.Experts)."""
        groups, chosen = self.expert_groups, self.expert_groups_per_token
        if not groups:
            return 0, 0
        if self.experts % groups:
            raise LabInputError("expert_groups", groups, f"a divisor of experts={self.experts}", "inconsistent",
                                "the routed experts split into equal groups", {"experts": self.experts})
        # A token's experts_per_token experts must fit in its chosen groups of experts / groups each.
        least = -(-self.experts_per_token * groups // self.experts)
        numbers = {"groups": groups, "group_size": self.experts // groups, "per_token": self.experts_per_token,
                   "least": least}
        if chosen > groups:
            raise LabInputError("expert_groups_per_token", chosen, f"0 … expert_groups={groups}", "inconsistent",
                                "a token cannot choose more groups than there are", numbers)
        chosen = chosen or groups
        if self.experts_per_token > chosen * (self.experts // groups):
            raise LabInputError("expert_groups_per_token", chosen, f"{least} … expert_groups={groups}", "inconsistent",
                                "the chosen groups must hold a token's experts_per_token experts", numbers)
        return groups, chosen

    @property
    def gpu_memory_bytes(self):
        return self.device.memory_bytes

    @classmethod
    def from_dict(cls, data):
        return record_from_dict(cls, data, "workload", "an object of named inputs", sort_known=True)

    def to_dict(self):
        # JSON-ready: the recompute modules as a list.
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in record_to_dict(self).items()}
