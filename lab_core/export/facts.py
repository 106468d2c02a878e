"""What every launch export reads: the plan's layout and the numbers derived from it.

One place turns a plan (Plan, Report or Parallelism) and its workload into
the quantities the frameworks ask for, so the three exports cannot disagree:
the batch in sequences, micro-batches per step, the stage split, steps to
train and the checkpoint interval in steps.
"""
import math

from ..calibration import IN_MEMORY_PERSIST_EVERY
from ..errors import LabInputError
from ..evaluate import evaluate
from ..parallelism import Parallelism, check_layout
from ..planner.plan import Plan
from ..presets import PRESETS, preset_for_shape
from ..report import Report
from ..stack import is_modern
from ..workload import Workload


def _report_of(plan, workload):
    """(parallelism, report, fits) of what export() was given."""
    if isinstance(plan, Plan):
        return plan.parallelism, plan.report, plan.fits
    if isinstance(plan, Report):
        return plan.parallelism, plan, None
    if isinstance(plan, Parallelism):
        return plan, evaluate(workload, plan), None
    raise LabInputError("plan", repr(plan), "a Plan, Report or Parallelism", "not_a_plan")


class LaunchFacts:
    """Plain attributes; see the module docstring."""

    __slots__ = ("workload", "shape", "par", "report", "fits", "gpus", "nodes", "gpus_per_node", "batch", "per_replica",
                 "micro_batches", "first_layers", "middle_layers", "last_layers", "even", "train_steps",
                 "save_interval_steps", "persist_interval_steps", "checkpoint_mode", "preset", "architecture",
                 "modern", "gated_ffn", "gated_expert_ffn", "full_nodes", "last_node_gpus")

    def __init__(self, plan, workload):
        if not isinstance(workload, Workload):
            raise LabInputError("workload", repr(workload), "a lab_core.Workload", "not_a_workload")
        par, report, fits = _report_of(plan, workload)
        gpus = par.model_parallel * par.dp
        # A plan may leave GPUs idle (recommend's gpus_used): the launch uses the plan's.
        if gpus != workload.gpus:
            workload = Workload.from_dict(dict(workload.to_dict(), gpus=gpus))
        layout = check_layout(workload, par)
        self.workload, self.shape, self.par, self.report, self.fits = workload, workload.shape, par, report, fits
        self.gpus = gpus
        self.gpus_per_node = min(workload.gpus_per_node, gpus)
        self.nodes = -(-gpus // self.gpus_per_node)
        # A GPU count that is not a whole number of nodes leaves the last node part-used: the launch
        # starts fewer processes there (notes.launch_notes), never more ranks than the plan has.
        self.full_nodes, self.last_node_gpus = divmod(gpus, self.gpus_per_node)
        self.batch = workload.batch_sequences
        self.per_replica = self.batch // par.dp
        self.micro_batches = layout.micro_batches
        self.first_layers, self.middle_layers, self.last_layers = layout.first_layers, layout.middle_layers, layout.last_layers
        self.even = layout.even
        tokens_per_step = self.batch * workload.seq_len
        self.train_steps = max(1, int(math.ceil(workload.training_tokens / tokens_per_step)))
        self.save_interval_steps = max(1, int(round(workload.checkpoint_interval_min * 60.0 / report.step_s)))
        # In-memory checkpoints reach storage every IN_MEMORY_PERSIST_EVERY checkpoints (checkpoint_modes.py).
        self.checkpoint_mode = workload.checkpoint_mode
        self.persist_interval_steps = self.save_interval_steps * IN_MEMORY_PERSIST_EVERY
        self.preset = preset_for_shape(self.shape)
        self.architecture = PRESETS[self.preset]["architecture"] if self.preset else None
        self.modern = is_modern(workload.stack)
        gated = bool(self.architecture and self.architecture["gated_mlp"])
        # shape.py: a gated MLP of inner size f is counted as ffn_hidden = 1.5 f.
        self.gated_ffn = self.shape.ffn_hidden * 2 // 3 if gated else None
        experts = self.shape.experts
        self.gated_expert_ffn = experts.ffn_hidden * 2 // 3 if gated and experts else None

    @property
    def expert_ffn(self):
        """One expert's inner size as the framework takes it (gated: f, not 1.5 f)."""
        experts = self.shape.experts
        return self.gated_expert_ffn or (experts.ffn_hidden if experts else None)

    @property
    def ffn(self):
        """The dense MLP's inner size as the framework takes it."""
        return self.gated_ffn or self.shape.ffn_hidden

    def plan_numbers(self):
        """The numbers the header's plan line quotes."""
        par = self.par
        return {"tp": par.tp, "pp": par.pp, "dp": par.dp, "cp": par.cp, "ep": par.ep, "zero": par.zero,
                "recompute": par.recompute, "micro_batch": par.micro_batch, "micro_batches": self.micro_batches,
                "interleave": par.interleave, "gpus": self.gpus, "nodes": self.nodes,
                "gpus_per_node": self.gpus_per_node, "step_s": f"{self.report.step_s:.3g}",
                "memory_gb": f"{self.report.memory_bytes / 1e9:.3g}", "mfu_percent": f"{self.report.mfu * 100.0:.3g}",
                "batch": self.batch, "seq_len": self.workload.seq_len, "train_steps": self.train_steps,
                "save_interval_steps": self.save_interval_steps,
                "persist_interval_steps": self.persist_interval_steps,
                "interval_min": f"{self.workload.checkpoint_interval_min:g}"}


def virtual_stage_layers(pp, v, first, middle, last):
    """Transformer layers of each of the pp x v virtual stages, in schedule order (virtual stage c pp + r is
    model chunk c of pipeline rank r, Megatron-Core's and torchtitan's "loop" placement). A rank's layers go
    over its chunks as evenly as they can; what the first rank lacks comes off its first chunks (beside the
    embedding), what the last rank lacks off its last ones (beside the output layer)."""
    def chunks(layers, short_first):
        base, extra = divmod(layers, v)
        return [base + (i >= v - extra if short_first else i < extra) for i in range(v)]

    ranks = [chunks(first, True)] + [chunks(middle, True)] * (pp - 2) + [chunks(last, False)]
    return [ranks[r][c] for c in range(v) for r in range(pp)]

