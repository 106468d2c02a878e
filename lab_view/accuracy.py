"""The lab's sentence on how far off to expect its figures: how far the model was from
published runs like the reader's (the build's list, labsite.validation.accuracy, is in
the catalog as ``run_kinds``: most specific kind first)."""
from lab_core.hardware import GPU_PRESETS

from .quantities import format_quantity

# A median signed error smaller than this is not called a leaning either way.
LEANING = 0.02


def kind_key(workload):
    """The kind of run a workload (Workload.to_dict(), plan_json's ``workload``) is:
    {"stack", "moe" (dense or mixture of experts), "architecture" (its GPU's generation)}."""
    return {"stack": workload["stack"], "moe": bool(workload.get("experts")),
            "architecture": GPU_PRESETS[workload["gpu"]].architecture}


def run_kind(kinds, workload):
    """The first kind of ``kinds`` the workload is of (kind_key); a kind's None matches anything."""
    own = kind_key(workload)
    for kind in kinds:
        if all(kind[key] is None or kind[key] == value for key, value in own.items()):
            return kind
    return None


def kind_parts(kind, texts):
    """(stack, model, GPUs) of a kind of run in words, "any …" where the kind leaves one open."""
    return (texts["stacks"][kind["stack"]] if kind["stack"] is not None else texts["any_stack"],
            texts["any_model"] if kind["moe"] is None else texts["moe" if kind["moe"] else "dense"],
            texts["architectures"][kind["architecture"]] if kind["architecture"] is not None else texts["any_gpu"])


def kind_words(kind, texts):
    """The kind of run in words: "Megatron-Core / NeMo stack, dense model, H100, H200 or H800 GPUs",
    naming only what the kind fixes (the stack always)."""
    stack, model, gpus = kind_parts(kind, texts)
    named = (True, kind["moe"] is not None, kind["architecture"] is not None)
    return texts["separator"].join(part for part, shown in zip((stack, model, gpus), named) if shown)


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
