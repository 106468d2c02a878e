"""GPT-3 175B, the running example of the tutorial, the rules page and the
validation table, as its scenario file gives it (scenarios/gpt3-175b-ptdp.yaml,
arXiv:2104.04473): the shape and batch are written there once."""
from functools import cache

from .scenarios import load_scenario

GPT3_SCENARIO = "gpt3-175b-ptdp"


@cache
def gpt3():
    """GPT-3 175B's model and batch: ``params, seq_len, global_batch_tokens,
    layers, hidden, heads, vocab`` (the vocabulary is the one lab_core derives
    for it, which the paper used). Read once per process."""
    scenario = load_scenario(GPT3_SCENARIO)
    inputs = scenario.workload
    shape = scenario.workload_object().shape
    return {"params": inputs["params"], "seq_len": inputs["seq_len"],
            "global_batch_tokens": inputs["global_batch_tokens"], "layers": shape.layers, "hidden": shape.hidden,
            "heads": shape.heads, "vocab": shape.vocab}


def gpt3_workload(**inputs):
    """GPT-3 175B's model and batch as workload inputs, with ``inputs`` added (e.g. ``gpus=1024``)."""
    model = gpt3()
    return dict(params=model["params"], **inputs, seq_len=model["seq_len"],
                global_batch_tokens=model["global_batch_tokens"], layers=model["layers"], hidden=model["hidden"],
                heads=model["heads"], vocab=model["vocab"])


@cache
def scenario_workload(scenario_id):
    """The lab_core.Workload of ``scenarios/<scenario_id>.yaml`` (its shape as the file gives it)."""
    return load_scenario(scenario_id).workload_object()


def scenario_parallelism(scenario_id):
    """The pinned layout of ``scenarios/<scenario_id>.yaml`` (Parallelism fields)."""
    return dict(load_scenario(scenario_id).parallelism)
