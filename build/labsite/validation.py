"""Model vs published figures: the rows of the validation page, computed at build time.

Reads shared/validation/published.yaml (``../shared/validation/`` from the
repository root) when it exists, else the vendored byte-identical copy in
content/validation/published.yaml, plus the published runs of scenarios/*.yaml.
Each row: group, source, quantity key (+ values for its label), predicted,
published, unit, kind and a note key. Kinds:

- ``formula``: the model implements the published formula; a check of the code.
- ``calibrated``: the model's constants were fitted to this figure (in-sample).
- ``prediction``: the figure was not used to build the model (out of sample).

End-to-end runs that are not in published.yaml (Korthikanti et al. Table 5,
Narayanan et al. Tables 1 and 2, Llama 3 Table 4, MegaScale Table 2) are data
in content/validation/end_to_end.yaml, transcribed from the papers. They are
predictions, except the group marked ``kind: calibrated`` (the DeepSpeed
ZeRO-3 rows the overlap fraction was fitted to).
"""
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import lab_core
from lab_core import activations as act
from lab_core import calibration as cal
from lab_core import comms, failures, flops
from lab_core.hardware import GPU_PRESETS
from lab_core.memory import model_state_bytes_per_gpu
from lab_core.shape import derive_shape
from lab_core.timing import layer_times

from .paths import ROOT

SHARED = ROOT.parent / "shared" / "validation" / "published.yaml"
VENDORED = ROOT / "content" / "validation" / "published.yaml"
GB = 1e9
MIB = 1048576.0
GIB = 1073741824.0
KINDS = ("formula", "calibrated", "prediction")
SUMMARY_LINES = KINDS + ("megatron", "all")


def published_path():
    return SHARED if SHARED.exists() else VENDORED


def load_facts(path=None):
    with open(path or published_path(), encoding="utf-8") as handle:
        return {fact["id"]: fact for fact in yaml.safe_load(handle)["facts"]}


@dataclass
class Row:
    group: str            # catalog key validation.groups.<group>
    source: str           # citation text (paper id + table), shown as is
    url: str
    quantity: str         # catalog key validation.quantities.<quantity>
    predicted: float
    published: float
    unit: str             # catalog key validation.units.<unit>
    kind: str             # formula | calibrated | prediction
    note: str = ""        # catalog key validation.notes.<note>, may be empty
    label: dict = field(default_factory=dict)   # values for the quantity label
    note_text: dict = None                       # {en, zh} note from a scenario file
    megatron: bool = False                       # a Megatron-style end-to-end run (summary line)

    @property
    def error(self):
        return error_percent(self.predicted, self.published)


def error_percent(predicted, published):
    if published == 0:
        return 0.0 if predicted == 0 else math.inf
    return 100.0 * (predicted - published) / published


ARXIV = "https://arxiv.org/abs/{}"

END_TO_END = ROOT / "content" / "validation" / "end_to_end.yaml"
_WORKLOAD_KEYS = ("gpu", "inter_node_gbps", "seq_len", "vocab", "flash_attention", "layers", "hidden", "heads",
                  "kv_heads", "ffn_hidden", "dropout", "params", "state_bytes_per_param", "stack", "precision",
                  "tp_comm_overlap", "gpus_per_node")
_LAYOUT_KEYS = ("tp", "pp", "zero", "recompute", "sequence_parallel", "micro_batch", "interleave", "cp",
                "dp_shard", "first_stage_layers", "last_stage_layers")


@dataclass
class EndToEndRun:
    """One published run of content/validation/end_to_end.yaml, ready to evaluate."""
    group: dict
    spec: dict            # the group's common settings overlaid with the row

    @property
    def published(self):
        return float(self.spec["published"])

    def workload(self):
        kwargs = {key: self.spec[key] for key in _WORKLOAD_KEYS if key in self.spec}
        kwargs.setdefault("params", 1e9)   # ignored when layers and hidden are given
        kwargs["params"] = float(kwargs["params"])
        return lab_core.Workload(gpus=self.spec["gpus"], global_batch_tokens=self.spec["batch"] * self.spec["seq_len"],
                                 **kwargs)

    def parallelism(self):
        kwargs = {key: self.spec[key] for key in _LAYOUT_KEYS if key in self.spec}
        kwargs["dp"] = self.spec["gpus"] // (self.spec["tp"] * self.spec["pp"] * self.spec.get("cp", 1))
        return lab_core.Parallelism(**kwargs)


def end_to_end_runs(path=None):
    """Every run of content/validation/end_to_end.yaml, in file order."""
    with open(path or END_TO_END, encoding="utf-8") as handle:
        groups = yaml.safe_load(handle)["groups"]
    return [EndToEndRun(group, dict(group.get("common", {}), **row)) for group in groups for row in group["rows"]]


def end_to_end_predicted(run):
    """The lab's value of the run's published metric (its unit: s or TFLOP/s)."""
    from .scenarios import METRICS, predicted

    workload = run.workload()
    report = lab_core.evaluate(workload, run.parallelism()).to_dict()
    return predicted(METRICS[run.group["metric"]], report, workload.gpus)


def _end_to_end_rows():
    rows = []
    for run in end_to_end_runs():
        g, spec = run.group, run.spec
        label = {key: spec[key] for key in ("model", "gpus", "tp", "pp", "micro_batch") if key in spec}
        rows.append(Row(g["id"], spec.get("source", g["source"]), g["url"], spec.get("quantity", g["quantity"]),
                        end_to_end_predicted(run), run.published, _METRIC_UNITS[g["metric"]],
                        g.get("kind", "prediction"),
                        spec.get("note", g["id"]), label, megatron=g.get("megatron_style", True)))
    return rows


def table4_prediction(recompute, sp):
    """Per-layer (fwd, bwd) ms of the 22B model on 8 A100 (arXiv:2205.05198 Table 4 setting)."""
    s, b, h, a, t = 2048, 4, 6144, 64, 8
    dev = GPU_PRESETS["a100_80gb"]
    rate = dev.peak_flops * cal.GEMM_EFFICIENCY["a100_80gb"]
    hbm = dev.hbm_bytes_per_s * cal.HBM_EFFICIENCY
    nvl = dev.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["a100_80gb"]
    lt = layer_times(s, b, h, a, 4 * h, t, sp, recompute, False, rate, hbm, nvl)
    tp_fwd = 2.0 * comms.ring_time(2.0 * b * s * h, t, nvl)
    return (lt.forward + tp_fwd) * 1e3, (lt.backward + lt.recompute + lt.tp_comm - tp_fwd) * 1e3


def _paper_rows(facts):
    rows = []
    zero_url = ARXIV.format("1910.02054")
    for stage, fid in enumerate(("zero.fig1.baseline", "zero.fig1.pos", "zero.fig1.pos_g", "zero.fig1.pos_g_p")):
        f = facts[fid]
        pred = model_state_bytes_per_gpu(f["inputs"]["params"], 16, f["inputs"]["dp_degree"], stage) / GB
        rows.append(Row("zero", "arXiv:1910.02054 Fig. 1", zero_url, "zero_stage", pred,
                        f["published"]["per_device_model_state_memory_GB"], "gb", "formula", "zero_fig1",
                        {"stage": stage}))

    k_url = ARXIV.format("2205.05198")
    sav = facts["act.selective.savings"]
    for name, key, layers in (("GPT-3", "gpt3", 96), ("MT-NLG", "mtnlg", 105)):
        i = sav["inputs"][key]
        full = act.per_layer_bytes(i["s"], 1, i["h"], i["a"], 8, True, "none")
        sel = act.per_layer_bytes(i["s"], 1, i["h"], i["a"], 8, True, "selective")
        rows.append(Row("activations", "arXiv:2205.05198 §5", k_url, "act_saved", 100.0 * (1.0 - sel / full),
                        float(sav["published"]["activation_memory_saved"][name].rstrip("%")), "percent", "formula",
                        "act_saved", {"model": name}))
        over = (flops.hardware_flops_selective_eq8(1, i["s"], layers, i["h"], 51200)
                / flops.model_flops_eq7(1, i["s"], layers, i["h"], 51200) - 1.0)
        rows.append(Row("activations", "arXiv:2205.05198 §5", k_url, "recompute_overhead", 100.0 * over,
                        float(sav["published"]["recompute_flops_overhead"][name].rstrip("%")), "percent", "formula",
                        "recompute_overhead", {"model": name}))

    t4 = facts["act.table4.per_layer_time_22B"]["published"]["rows"]
    for key, rc, sp in (("baseline_no_recompute", "none", False), ("sequence_parallel", "none", True),
                        ("full_recompute", "full", False), ("selective", "selective", False),
                        ("selective+sequence", "selective", True)):
        fwd, bwd = table4_prediction(rc, sp)
        rows.append(Row("table4", "arXiv:2205.05198 Table 4", k_url, "layer_fwd", fwd, t4[key]["fwd"], "ms",
                        "calibrated", "table4", {"mode": key}))
        rows.append(Row("table4", "arXiv:2205.05198 Table 4", k_url, "layer_bwd", bwd, t4[key]["bwd"], "ms",
                        "calibrated", "table4", {"mode": key}))

    # Llama 3 405B's shape (arXiv:2407.21783 Table 3: 126 layers, model
    # dimension 16,384, FFN dimension 53,248 with SwiGLU, 128 attention heads,
    # 8 key/value heads, vocabulary 128,000) against its name, 405B.
    llama = derive_shape(405e9, 8192, layers=126, hidden=16384, heads=128, ffn_hidden=int(1.5 * 53248),
                         vocab=128000, kv_heads=8)
    rows.append(Row("params", "arXiv:2407.21783 Table 3", ARXIV.format("2407.21783"), "param_count",
                    llama.params / 1e9, 405.0, "billions", "formula", "param_count", {"model": "Llama 3 405B"}))

    n_url = ARXIV.format("2104.04473")
    tt = facts["ptdp.training_time"]["published"]
    for key, params, label in (("gpt3_175B", 175e9, "GPT-3 175B"), ("one_T", 1e12, "1T")):
        d = tt[key]
        days = flops.training_time_eq4(d["T"], params, d["n"], d["X_TFLOPs"] * 1e12) / 86400.0
        rows.append(Row("eq4", "arXiv:2104.04473 Eq. 4", n_url, "train_days", days, d["days"], "days", "formula",
                        "eq4", {"model": label, "gpus": d["n"]}))

    llama = facts["run.llama3_405b.interruptions"]["published"]
    mtbf = 1.0 / failures.interruptions_per_hour(cal.LLAMA3_GPUS, cal.GPU_FAILURES_PER_HOUR)
    rows.append(Row("failures", "arXiv:2407.21783 Table 5", ARXIV.format("2407.21783"), "mtbf", mtbf,
                    54 * 24 / llama["unexpected"], "hours", "calibrated", "mtbf", {"gpus": cal.LLAMA3_GPUS}))

    sizes = facts["ckpt.sizes_and_times"]["published"]
    rows.append(Row("checkpoints", "arXiv:2104.04473 §5.10", n_url, "ckpt_1t",
                    1e12 * cal.CHECKPOINT_BYTES_PER_PARAM / 1e12, sizes["megatron_1T"]["size_TB"], "tb",
                    "prediction", "ckpt_1t"))
    rows.append(Row("checkpoints", "bigscience tr11-176B-ml README", "", "ckpt_bloom",
                    176e9 * cal.CHECKPOINT_BYTES_PER_PARAM / 1e12, sizes["bloom_176B"]["size_TB"], "tb",
                    "prediction", "ckpt_bloom"))

    nccl = facts["hw.nccl_busbw_measured"]["published"]
    h200 = GPU_PRESETS["h200_141gb"]
    asym = h200.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["h200_141gb"]
    src = "stas00/ml-engineering network/benchmarks"
    for label, value in nccl["h200_8gpu_busbw_by_size_GBps"].items():
        size = float(label[:-3]) * (MIB if label.endswith("MiB") else GIB)
        rows.append(Row("nccl", src, "", "busbw_h200", comms.bus_bandwidth(size, asym) / GB, value, "gbs",
                        "calibrated", "nccl", {"size": label}))
    rows.append(Row("nccl", src, "", "busbw_h200", comms.bus_bandwidth(16 * GIB, asym) / GB,
                    nccl["h200_8gpu_allreduce_busbw_16GiB_GBps"]["nccl_tests"], "gbs", "calibrated", "nccl",
                    {"size": "16GiB"}))
    b200 = GPU_PRESETS["b200_192gb"]
    b_asym = b200.nvlink_bytes_per_s * cal.NVLINK_BUSBW_FRACTION["b200_192gb"]
    rows.append(Row("nccl", src, "", "busbw_b200_node", comms.bus_bandwidth(16 * GIB, b_asym) / GB,
                    nccl["b200_1node_16GiB_GBps"], "gbs", "calibrated", "nccl", {"size": "16GiB"}))
    nic = 400e9 / 8 * cal.INTER_NODE_EFFICIENCY
    size = 16 * GIB
    t = comms.group_time(size, 32, 8, b_asym, nic)
    rows.append(Row("nccl", src, "", "busbw_b200_4nodes", 2 * 31 / 32 * size / t / GB,
                    nccl["b200_4nodes_32ranks_16GiB_GBps"], "gbs", "calibrated", "nccl", {"size": "16GiB"}))
    return rows


_METRIC_UNITS = {"hardware_tflops_per_gpu": "tflops", "model_tflops_per_gpu": "tflops", "mfu_percent": "percent",
                 "step_time_s": "s", "tokens_per_s": "tokens_per_s", "training_days": "days"}


def scenario_rows():
    """Published runs of scenarios/*.yaml that pin a layout: the lab's prediction of each figure."""
    from .scenarios import METRICS, load_scenarios, predicted

    rows = []
    for scenario in load_scenarios():
        if not scenario.published or not scenario.parallelism:
            continue
        workload = scenario.workload_object()
        report = lab_core.evaluate(workload, scenario.parallelism_object()).to_dict()
        source = scenario.source or {}
        url = source.get("url", "")
        for item in scenario.published:
            metric = METRICS[item["metric"]]
            value = predicted(metric, report, workload.gpus)
            if value is None:
                continue
            rows.append(Row("runs", f"{source.get('id', '')} · {item.get('where', '')}".strip(" ·"), url,
                            f"metric_{item['metric']}", value, float(item["value"]),
                            _METRIC_UNITS.get(item["metric"], "plain"), "prediction", "",
                            {"run": scenario.title["en"], "run_zh": scenario.title["zh"]},
                            note_text=scenario.notes))
    return rows


def rows(facts=None):
    return _paper_rows(facts or load_facts()) + _end_to_end_rows() + scenario_rows()


def summary(all_rows):
    """Mean |error| (percent) per kind, over the Megatron-style end-to-end runs and over every row."""
    out = {}
    for kind in SUMMARY_LINES:
        chosen = [abs(r.error) for r in all_rows
                  if kind == "all" or r.kind == kind or (kind == "megatron" and r.megatron)]
        out[kind] = (sum(chosen) / len(chosen), len(chosen)) if chosen else (0.0, 0)
    misses = [r for r in all_rows if r.kind == "prediction" and abs(r.error) > 10.0]
    out["misses"] = (len(misses), len([r for r in all_rows if r.kind == "prediction"]))
    return out
