"""The lab's sentence on how far off to expect its figures: how far the model was from
published runs like the reader's (the build's list, labsite.validation.accuracy, is in
the catalog as ``run_kinds``: most specific kind first)."""
from lab_core.hardware import GPU_PRESETS

from .quantities import format_quantity

# A median signed error smaller than this is not called a leaning either way.
LEANING = 0.02


def run_kind(kinds, workload):
    """The first kind of ``kinds`` the workload (plan_json's ``workload``) is of: its stack,
    dense or mixture of experts, and its GPU's generation; a kind's None matches anything."""
    own = {"stack": workload["stack"], "moe": bool(workload.get("experts")),
           "architecture": GPU_PRESETS[workload["gpu"]].architecture}
    for kind in kinds:
        if all(kind[key] is None or kind[key] == value for key, value in own.items()):
            return kind
    return None


def kind_words(kind, texts):
    """The kind of run in words: "Megatron-Core / NeMo stack, dense model, Hopper GPUs …"."""
    parts = [texts["stacks"][kind["stack"]] if kind["stack"] is not None else texts["any_stack"]]
    if kind["moe"] is not None:
        parts.append(texts["moe" if kind["moe"] else "dense"])
    if kind["architecture"] is not None:
        parts.append(texts["architectures"][kind["architecture"]])
    return texts["separator"].join(parts)


def accuracy_text(workload, catalog):
    """How far the model was from published runs like this workload, in the catalog's words."""
    if "run_kinds" not in catalog:
        return ""  # a catalog without the build's list (the command line's): nothing to quote
    texts, units = catalog["lab"]["accuracy"], catalog["units"]
    kind = run_kind(catalog["run_kinds"], workload)
    if kind is None:
        return texts["none"]

    def percent(value):
        return format_quantity(value, "percent", units)

    text = texts["sentence"].format(runs=f"{kind['runs']:,}", kind=kind_words(kind, texts),
                                    median=percent(kind["median"]), bound=percent(kind["bound"]))
    if abs(kind["bias"]) >= LEANING:
        leaning = texts["slower" if kind["bias"] < 0 else "faster"].format(bias=percent(abs(kind["bias"])))
        text = texts["with_leaning"].format(sentence=text, leaning=leaning)
    return text
