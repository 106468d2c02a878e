"""The scenario format, as data: every field, what it holds, whether it is
required. The validator walks these tables, the JSON Schema is generated from
them (jsonschema.py), and the Contributing page lists them, so the three
cannot drift apart. Workload inputs and parallelism fields are not listed
here: they are lab_core's own (inputs.INPUT_SPECS, Parallelism), ranges
included.
"""
import dataclasses
import re

from lab_core import Parallelism

#: Languages every reader-facing text must be given in.
LANGUAGES = ("en", "zh")

ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
ID_RE = re.compile(ID_PATTERN)
TAG_PATTERN = ID_PATTERN
MAX_ID = 64
MAX_TAGS = 8

#: The demo path's file name inside the scenarios folder.
DEMO_PATH_FILE = "demo-path.yaml"
SCENARIO_SCHEMA_FILE = "scenario.schema.json"
DEMO_PATH_SCHEMA_FILE = "demo-path.schema.json"
#: Worked examples beside the scenarios (validated, not shown in the gallery).
EXAMPLES_DIR = "examples"


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    kind: str  # id | text | workload | parallelism | source | published | tags | string | url | number | metric | ids
    required: bool
    description: str
    max_length: int = 0


SCENARIO_FIELDS = (
    Field("id", "id", True, "kebab-case id, equal to the file name without .yaml", MAX_ID),
    Field("title", "text", True, "card and step title, in every language", 80),
    Field("summary", "text", True, "one line under the title, in every language", 200),
    Field("narrative", "text", True, "a paragraph: what this scenario teaches, in every language", 2000),
    Field("workload", "workload", True, "lab_core workload inputs; omitted ones take their documented defaults"),
    Field("parallelism", "parallelism", False, "pinned layout (published runs: the one they actually used)"),
    Field("source", "source", False, "where the scenario comes from: paper id, table or section, link"),
    Field("published", "published", False, "figures the source reports, shown next to the lab's prediction"),
    Field("notes", "text", False, "caveats: what the lab cannot represent and what was assumed, in every language", 2000),
    Field("tags", "tags", False, f"up to {MAX_TAGS} kebab-case tags"),
)

SOURCE_FIELDS = (
    Field("id", "string", True, "paper id such as arXiv:2104.04473, or repository and path", 120),
    Field("where", "string", True, "table, section or file the figures and layout come from", 200),
    Field("title", "string", False, "title of the work, as published", 300),
    Field("url", "url", False, "an https:// link to the source", 500),
)

PUBLISHED_FIELDS = (
    Field("metric", "metric", True, "which figure (see METRICS)"),
    Field("value", "number", True, "the published value, in the metric's unit"),
    Field("where", "string", True, "table or section of the source that reports it", 200),
    Field("note", "text", False, "how the figure was measured or derived, in every language", 600),
)

DEMO_PATH_FIELDS = (
    Field("steps", "ids", True, "scenario ids in walkthrough order"),
)

PARALLELISM_FIELDS = tuple(f.name for f in dataclasses.fields(Parallelism))
#: A pinned layout must say at least these; the rest take Parallelism's defaults.
PARALLELISM_REQUIRED = ("tp", "pp", "dp")
PARALLELISM_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Parallelism)}


@dataclasses.dataclass(frozen=True)
class Metric:
    """A published figure the lab also predicts.

    ``path``: keys into Report.to_dict(); ``scale`` turns that value into the
    metric's unit; ``per_gpu`` divides by the GPU count first.
    """

    name: str
    unit: str  # key of the catalog's unit patterns
    description: str
    path: tuple
    scale: float = 1.0
    per_gpu: bool = False
    per_step: bool = False
    maximum: float = 1e12


METRICS = {m.name: m for m in (
    Metric("hardware_tflops_per_gpu", "tflops", "achieved TFLOP/s per GPU counting recomputed work "
           "(Megatron's Eq 3 convention)", ("throughput", "hardware_flops_per_step"), 1e-12, per_gpu=True,
           per_step=True, maximum=10000),
    Metric("model_tflops_per_gpu", "tflops", "achieved TFLOP/s per GPU counting the model's FLOPs only (MFU's numerator)",
           ("throughput", "model_flops_per_s_per_gpu"), 1e-12, maximum=10000),
    Metric("mfu_percent", "percent", "model FLOPs utilization, percent of peak", ("throughput", "mfu"), 100.0, maximum=100),
    Metric("step_time_s", "seconds", "seconds per optimizer step (iteration)", ("time", "step_s"), maximum=1e6),
    Metric("tokens_per_s", "tokens_per_s", "tokens processed per second, whole cluster",
           ("throughput", "tokens_per_s"), maximum=1e12),
    Metric("tokens_per_s_per_gpu", "tokens_per_s", "tokens processed per second per GPU",
           ("throughput", "tokens_per_s"), per_gpu=True, maximum=1e9),
    Metric("memory_gib", "gib", "peak memory of the most loaded GPU, GiB (2^30 bytes)",
           ("memory", "total_bytes"), 1.0 / 1073741824.0, maximum=1e5),
    Metric("training_days", "days", "days to train on the workload's training_tokens, without failures",
           ("training", "time_s"), 1.0 / 86400.0, maximum=1e5),
)}


def predicted(metric, report_dict, gpus):
    """The lab's value of ``metric`` from ``Report.to_dict()``, in the metric's unit."""
    value = report_dict
    for key in metric.path:
        value = value[key]
    if value is None:
        return None
    if metric.per_step:
        value = value / report_dict["time"]["step_s"]
    if metric.per_gpu:
        value = value / gpus
    return value * metric.scale
