"""The prose of an export: its header and its notes, from the caller's catalog.

An export says where its keys come from, what the plan is, and what the plan
assumed that the file cannot express. The words are the catalog's (``export``
in content/i18n/<lang>/export.yaml, passed in as ``texts``); this module only
picks the entries by id and fills their numbers, so every language gets the
same notes.
"""
from ..pipeline import SCHEDULE_NAMES, bubble_fraction
from ..recompute_modules import named_modules
from ..stack import attention_kernels


class Notes:
    """Notes in the order they were found: (id, numbers)."""

    def __init__(self):
        self.items = []

    def add(self, note_id, **numbers):
        self.items.append((note_id, numbers))

    def ids(self):
        return [note_id for note_id, _ in self.items]


def header_lines(texts, framework, facts, notes):
    """The comment lines every export starts with, in the catalog's language;
    ``framework`` None for the lab's own plan file."""
    numbers = dict(facts.plan_numbers())
    modules = named_modules(numbers["recompute"], facts.workload.recompute_modules)
    if modules:
        numbers["recompute"] = texts["recompute"]["selective_modules"].format(modules=", ".join(modules))
    else:
        numbers["recompute"] = texts["recompute"][numbers["recompute"]]
    source = texts["keys_from_lab"] if framework is None else texts["keys_from"].format(**framework.numbers())
    lines = [texts["header"], source]
    if facts.fits is False:
        lines.append(texts["does_not_fit"].format(**numbers))
    lines.append(texts["plan"].format(**numbers))
    lines.append(texts["predicted"].format(**numbers))
    if notes.items:
        lines.append(texts["cannot_express"])
        lines += [texts["bullet"].format(text=texts["notes"][note_id].format(**values))
                  for note_id, values in notes.items]
    return lines


def comment_block(lines, marker="#"):
    return "\n".join(f"{marker} {line}" if line else marker for line in lines)


def attention_kernel_note(facts, notes):
    """For a file with no key for the attention kernel: the plan's Transformer Engine
    attention on the PyTorch-native stack (Workload.te_attention) is the model code's choice."""
    workload = facts.workload
    if attention_kernels(workload.stack, workload.te_attention) != workload.stack:
        notes.add("te_attention")


def launch_notes(facts, notes):
    """A plan whose GPUs do not fill whole nodes: how torchrun starts fewer processes on the last one."""
    if facts.last_node_gpus and facts.full_nodes:
        notes.add("partial_node", gpus=facts.gpus, gpus_per_node=facts.gpus_per_node,
                  last_node_gpus=facts.last_node_gpus, last_rank=facts.full_nodes)


def architecture_notes(facts, notes):
    """What every framework's file leaves out of the lab's model shape."""
    workload, shape = facts.workload, facts.shape
    if facts.preset is None:
        notes.add("custom_shape", ffn=shape.ffn_hidden)
    elif facts.preset in ("deepseek-v3", "qwen3-235b-a22b"):
        notes.add("attention_" + facts.preset.split("-")[0])
    if not workload.flash_attention:
        notes.add("no_flash_attention")
    notes.add("state_bytes", state_bytes=workload.state_bytes_per_param)


def recompute_modules_note(facts, notes):
    """For a file whose framework has no recompute modules (Megatron-Core's, recompute_modules.py): a plan
    that recomputes other modules than the attention core selectively recomputes something else there."""
    modules = named_modules(facts.par.recompute, facts.workload.recompute_modules)
    if modules:
        notes.add("recompute_modules_elsewhere", modules=", ".join(modules))


def mtp_note(facts, notes):
    """For a file whose framework has no multi-token prediction: it trains the model without the modules."""
    if facts.shape.mtp_layers:
        notes.add("mtp_elsewhere", mtp=facts.shape.mtp_layers)


def schedule_note(facts, notes, framework, offered=()):
    """A pipelined plan on a bidirectional schedule (Workload.pipeline_schedule) the framework does not
    offer (``offered``: the ones it does): the file runs 1F1B with the same stages, and says what that costs."""
    schedule = facts.workload.pipeline_schedule
    if facts.par.pp == 1 or schedule == "1f1b" or schedule in offered:
        return
    notes.add("schedule_not_offered", schedule=SCHEDULE_NAMES[schedule], framework=framework.name,
              bubble=round(100.0 * facts.report.bubble_fraction, 1),
              plain=round(100.0 * bubble_fraction(facts.par.pp, facts.micro_batches), 1))
