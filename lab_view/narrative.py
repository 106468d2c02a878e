"""Sentences generated from the plan they describe, so they cannot disagree
with it: what the plan uses (the shape panel and the walkthrough) and the
label of a layout (the alternatives table). Words come from the catalog's
``lab.plan_text`` and ``lab.layouts``."""
import unicodedata


def plan_sentences(par, texts):
    """What the plan ``par`` (Parallelism.to_dict()) uses, one sentence per part."""
    out = []
    if par["tp"] * par.get("cp", 1) * par["pp"] * par["dp"] == 1:
        out.append(texts["single"])
    if par["dp"] > 1:
        # ZeRO shards over the data- and context-parallel GPUs that hold the same weights
        # (dp_shard of the data-parallel ones with hybrid sharding; gpu_memory.memory_of).
        shard = (par.get("dp_shard") or par["dp"]) * par.get("cp", 1)
        out.append(texts["dp_zero%d" % par["zero"]].format(dp=f"{par['dp']:,}", shard=f"{shard:,}"))
    if par["tp"] > 1:
        out.append(texts["tp"].format(tp=par["tp"]))
    if par.get("cp", 1) > 1:
        out.append(texts["cp"].format(cp=f"{par['cp']:,}"))
    if par.get("ep", 1) > 1:
        out.append(texts["ep"].format(ep=f"{par['ep']:,}"))
    if par["pp"] > 1:
        key = "pp_interleaved" if par.get("interleave", 1) > 1 else "pp"
        out.append(texts[key].format(pp=par["pp"], v=par.get("interleave", 1)))
    if par["recompute"] != "none":
        out.append(texts["recompute_" + par["recompute"]])
    return _joined(out)


def _joined(sentences):
    """Sentences one after the other: a space after a full stop, none after a full-width
    one ("。"), which carries its own space in Chinese typography."""
    out = ""
    for sentence in sentences:
        if out and unicodedata.east_asian_width(out[-1]) not in "WF":
            out += " "
        out += sentence
    return out


def layout_label(layout, texts):
    """A planner layout id ("tp_dp_zero1_full") as words ("TP + DP + ZeRO-1 + full recompute")."""
    return texts["join"].join(texts[part] for part in layout.split("_"))
