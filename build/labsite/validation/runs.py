"""Rows for whole training runs: the end-to-end runs transcribed in
content/validation/end_to_end.yaml (grouped by paper table, each group with
its kind and tolerance) and the published figures of scenarios/*.yaml that
pin the layout they were measured with."""
from dataclasses import dataclass

import yaml

import lab_core

from ..paths import CONTENT
from ..scenarios import METRICS, load_scenarios, predicted
from .table import PageEntry, Row, error_percent, rel

END_TO_END = CONTENT / "validation" / "end_to_end.yaml"
#: Scenario files come from many stacks (MT-NLG's DeepSpeed pipeline engine is
#: about 20% slower than the lab's Megatron timing; its notes say why): a
#: published figure of a scenario that misses by more than this fails.
SCENARIO_TOLERANCE = rel(0.25)
_WORKLOAD_KEYS = ("gpu", "inter_node_gbps", "seq_len", "vocab", "flash_attention", "layers", "hidden", "heads",
                  "kv_heads", "head_dim", "v_head_dim", "q_lora_rank", "kv_lora_rank",
                  "ffn_hidden", "dropout", "params", "state_bytes_per_param", "stack", "precision",
                  "tp_comm_overlap", "grad_reduce_overlap", "cp_all_gather", "fp8_weight_gather", "compiled_loss", "te_attention",
                  "gpus_per_node", "experts", "experts_per_token", "expert_ffn_hidden", "shared_experts",
                  "dense_layers", "expert_groups", "expert_groups_per_token", "mtp_layers", "moe_dispatcher",
                  "moe_comm_overlap", "pipeline_schedule", "recompute_modules")
_LAYOUT_KEYS = ("tp", "pp", "zero", "recompute", "sequence_parallel", "micro_batch", "interleave", "cp", "ep",
                "dp_shard", "first_stage_layers", "last_stage_layers", "recompute_layers")


def page_unit(metric):
    """The page's unit key (validation.units) of a published metric."""
    return "s" if metric.unit == "seconds" else metric.unit


@dataclass
class EndToEndRun:
    """One published run of content/validation/end_to_end.yaml, ready to evaluate."""
    group: dict
    spec: dict            # the group's common settings overlaid with the row

    @property
    def published(self):
        return float(self.spec["published"])

    @property
    def dp(self):
        return self.spec["gpus"] // (self.spec["tp"] * self.spec["pp"] * self.spec.get("cp", 1))

    def workload(self):
        kwargs = {key: self.spec[key] for key in _WORKLOAD_KEYS if key in self.spec}
        kwargs.setdefault("params", 1e9)   # ignored when layers and hidden are given
        kwargs["params"] = float(kwargs["params"])
        return lab_core.Workload(gpus=self.spec["gpus"], global_batch_tokens=self.spec["batch"] * self.spec["seq_len"],
                                 **kwargs)

    def parallelism(self):
        kwargs = {key: self.spec[key] for key in _LAYOUT_KEYS if key in self.spec}
        return lab_core.Parallelism(dp=self.dp, **kwargs)

    def variant(self, name):
        """The run with one of its group's `variants` applied: settings the group's note
        quotes a what-if of (its figures computed, not typed); a row may refine them
        under its own `variants` (e.g. a per-row network speed)."""
        settings = dict(self.group["variants"][name], **self.spec.get("variants", {}).get(name, {}))
        return EndToEndRun(self.group, dict(self.spec, **settings))

    def predicted(self):
        """The lab's value of the run's published metric (its unit: s or TFLOP/s)."""
        workload = self.workload()
        report = lab_core.evaluate(workload, self.parallelism()).to_dict()
        return predicted(METRICS[self.group["metric"]], report, workload.gpus)


def end_to_end_runs(path=END_TO_END):
    """Every run of content/validation/end_to_end.yaml, in file order."""
    with open(path, encoding="utf-8") as handle:
        groups = yaml.safe_load(handle)["groups"]
    return [EndToEndRun(group, dict(group.get("common", {}), **row)) for group in groups for row in group["rows"]]


MEMORY_METRICS = ("memory_gib", "reserved_memory_gib")


def is_modern_throughput(run):
    """A run on today's stacks (not the 2021 Megatron-LM stack) whose figure is a speed, not a memory reading:
    the summary's "modern" line (the bar issue 14 set: under 6% mean on its predictions)."""
    return run.spec.get("stack", "modern") != "megatron_lm_2021" and run.group["metric"] not in MEMORY_METRICS


def end_to_end_rows(runs=None):
    rows = []
    for run in end_to_end_runs() if runs is None else runs:
        g, spec = run.group, run.spec
        label = {key: spec[key] for key in ("model", "gpus", "tp", "pp", "cp", "ep", "micro_batch", "seq_len")
                 if key in spec}
        # Full recompute of only some layers of each chunk reads "full/5".
        recompute = spec.get("recompute", "") + (f"/{spec['recompute_layers']}" if spec.get("recompute_layers") else "")
        what = f"{spec['model']} t{spec['tp']} p{spec['pp']} d{run.dp} {recompute} {g['metric']}"
        variants = {name: error_percent(run.variant(name).predicted(), run.published) for name in g.get("variants", {})}
        page = PageEntry(g["id"], spec.get("source", g["source"]), g["url"], spec.get("quantity", g["quantity"]),
                         page_unit(METRICS[g["metric"]]), spec.get("note", g["id"]), label, variants=variants)
        rows.append(Row(g["id"], what, run.predicted(), run.published, rel(g["tolerance_percent"] / 100.0),
                        g.get("kind", "prediction"), page, megatron=g.get("megatron_style", True),
                        modern=is_modern_throughput(run)))
    return rows


def scenario_rows(scenarios=None):
    """Published runs of scenarios/*.yaml that pin a layout: the lab's prediction of each figure."""
    rows = []
    for scenario in load_scenarios() if scenarios is None else scenarios:
        if not scenario.published or not scenario.parallelism:
            continue
        workload = scenario.workload_object()
        report = lab_core.evaluate(workload, scenario.parallelism_object()).to_dict()
        source = scenario.source or {}
        for item in scenario.published:
            metric = METRICS[item["metric"]]
            value = predicted(metric, report, workload.gpus)
            page = PageEntry("runs", f"{source.get('id', '')} · {item.get('where', '')}".strip(" ·"),
                             source.get("url", ""), f"metric_{metric.name}", page_unit(metric), "",
                             {"run": scenario.title["en"], "run_zh": scenario.title["zh"]}, note_text=scenario.notes)
            rows.append(Row(scenario.id, metric.name, value, float(item["value"]), SCENARIO_TOLERANCE, "prediction",
                            page))
    return rows
