"""End-to-end runs (content/validation/end_to_end.yaml): the model's bars.

Megatron-style runs of 2021-2023 (the legacy stack, all out of sample): mean
error under MEGATRON_MEAN_LIMIT. Modern runs (H100, H200, B200, A100 with
today's stacks): the groups marked calibrated were fitted in sample; the rest
are out of sample and held to the means below, which are where the model
stands, so a change that makes it worse fails by name. Each run is also a row
of the validation table, within its group's tolerance_percent
(tests/model/test_published.py); this file keeps those tolerances at the bars.
The largest known Megatron-style miss is Narayanan's 7.5B weak-scaling row
(about -11%): the table gives neither micro-batch nor schedule, and the 2021
runs may have reduced 16-bit gradients where the lab assumes fp32 (see the
page's notes).
"""
import pytest

from labsite.catalog import load_catalogs
from labsite.scenarios import METRICS
from labsite.validation import MEMORY_METRICS, end_to_end_rows, end_to_end_runs, is_modern_throughput, summary

MEGATRON_MEAN_LIMIT = 4.0   # percent, mean |error| over the Megatron-style runs
ROW_LIMIT = 15.0            # percent, any one Megatron-style run
REQUIRED_GROUP_KEYS = ("id", "source", "url", "metric", "quantity", "tolerance_percent", "rows")
REQUIRED_RUN_KEYS = ("model", "layers", "hidden", "heads", "gpus", "batch", "tp", "pp", "micro_batch",
                     "published")

# Percent. Modern runs fitted in sample; modern runs out of sample (mean, and any one row).
MODERN_IN_SAMPLE_MEAN = 5.0
MODERN_OUT_OF_SAMPLE_MEAN = 8.5
MODERN_ROW_LIMIT = 40.0
# Percent. Measured peak memory per GPU (torchtitan's reserved-memory readings, see the groups' notes): where
# the model stands, in sample (the allocator's reserved ratio is fitted to two rows), out of sample (issue 14's
# target is 8), and any one row.
# Percent. The held-out runs (kind: held_out, kept away from the model's changes until they were done): where
# the model stands on them, the mean and any one row (the worst, NeMo AutoModel's DeepSeek-V3 on 256 H100s with its
# all-to-all exposed as AutoModel runs it, is -26.8%; each group's tolerance at most the row limit). 12.35% since
# the knob audit of 2026-12 entered every held-out row as its launch configuration ran it (10.6% before).
HELD_OUT_MEAN = 13.0
HELD_OUT_ROW_LIMIT = 40.0
MEMORY_IN_SAMPLE_MEAN = 1.0
MEMORY_MEAN = 3.0
MEMORY_ROW_LIMIT = 10.0

RUNS = end_to_end_runs()
ERRORS = {id(run): abs(row.error) for run, row in zip(RUNS, end_to_end_rows(RUNS))}
MEGATRON = [run for run in RUNS if run.group.get("megatron_style", True)]
MODERN = [run for run in RUNS if run.spec.get("stack", "modern") != "megatron_lm_2021"]
MEMORY = [run for run in MODERN if run.group["metric"] in MEMORY_METRICS]
MEMORY_FITTED = [run for run in MEMORY if run.group.get("kind") == "calibrated"]
MEMORY_PREDICTED = [run for run in MEMORY if run not in MEMORY_FITTED]
MODERN_FITTED = [run for run in RUNS if is_modern_throughput(run) and run.group.get("kind") == "calibrated"]
MODERN_PREDICTED = [run for run in RUNS if is_modern_throughput(run)
                    and run.group.get("kind", "prediction") == "prediction"]
HELD_OUT = [run for run in RUNS if run.group.get("kind") == "held_out"]


def _id(run):
    spec = run.spec
    return f"{run.group['id']}-{spec['model']}-{spec['gpus']}-{spec.get('recompute', '')}"


def _mean(runs):
    return sum(ERRORS[id(run)] for run in runs) / len(runs)


def test_megatron_style_mean_error_is_under_the_bar():
    mean, count = summary(end_to_end_rows(MEGATRON))["megatron"]
    assert count == len(MEGATRON) >= 25
    assert mean < MEGATRON_MEAN_LIMIT, f"mean |error| {mean:.2f}% over {count} runs"


def test_row_tolerances_are_the_bars():
    """A group cannot pass by loosening its own tolerance."""
    for run in RUNS:
        limit = (HELD_OUT_ROW_LIMIT if run in HELD_OUT else MEMORY_ROW_LIMIT if run in MEMORY
                 else MODERN_ROW_LIMIT if run in MODERN
                 else ROW_LIMIT if run in MEGATRON else 20.0)
        assert run.group["tolerance_percent"] <= limit, run.group["id"]


def test_runs_span_a100_from_8_to_thousands_of_gpus():
    gpus = [run.spec["gpus"] for run in MEGATRON]
    assert min(gpus) == 8 and max(gpus) >= 8192
    assert {run.spec["gpu"] for run in MEGATRON} == {"a100_80gb"}


def test_modern_runs_span_sources_and_gpus():
    assert len(MODERN_PREDICTED) >= 25
    assert len({run.group["source"] for run in MODERN_PREDICTED}) >= 3
    assert {run.spec["gpu"] for run in MODERN} >= {"h100_80gb", "h200_141gb", "b200_192gb"}
    assert {run.spec["stack"] for run in MODERN} == {"modern", "torch_native"}


def test_modern_fitted_runs_meet_their_bar():
    assert _mean(MODERN_FITTED) < MODERN_IN_SAMPLE_MEAN, f"{_mean(MODERN_FITTED):.2f}%"


def test_measured_memory_rows_meet_their_bar():
    """Peak memory per GPU against measured readings on H100 and H200."""
    # Meta's 96 GB H100s (the torchtitan_h100 group's preset) and Trainy's H200s.
    assert len(MEMORY) >= 10 and {run.spec["gpu"] for run in MEMORY} >= {"h100_96gb_500w", "h200_141gb"}
    assert len(MEMORY_FITTED) == 2 and len(MEMORY_PREDICTED) >= 8
    assert _mean(MEMORY_FITTED) < MEMORY_IN_SAMPLE_MEAN, f"{_mean(MEMORY_FITTED):.2f}%"
    assert _mean(MEMORY_PREDICTED) < MEMORY_MEAN, f"{_mean(MEMORY_PREDICTED):.2f}%"


def test_held_out_runs_meet_their_bar():
    """Out of sample twice over: at least 25 runs from at least five sources, dense and MoE."""
    assert len(HELD_OUT) >= 25 and len({run.group["source"] for run in HELD_OUT}) >= 5
    assert any("experts" in run.spec for run in HELD_OUT) and any("experts" not in run.spec for run in HELD_OUT)
    assert _mean(HELD_OUT) < HELD_OUT_MEAN, f"{_mean(HELD_OUT):.2f}%"
    assert max(ERRORS[id(run)] for run in HELD_OUT) < HELD_OUT_ROW_LIMIT


def test_modern_out_of_sample_runs_meet_their_bar():
    assert _mean(MODERN_PREDICTED) < MODERN_OUT_OF_SAMPLE_MEAN, f"{_mean(MODERN_PREDICTED):.2f}%"


def test_the_summary_modern_line_is_these_runs():
    """The page's and make validation's "modern" line is the mean this file holds to its bar."""
    mean, count = summary(end_to_end_rows(RUNS))["modern"]
    assert count == len(MODERN_PREDICTED)
    assert mean == pytest.approx(_mean(MODERN_PREDICTED))


@pytest.mark.parametrize("run", RUNS, ids=_id)
def test_every_run_is_complete_and_consistent(run):
    for key in REQUIRED_GROUP_KEYS:
        assert key in run.group, f"group {run.group.get('id')}: {key} missing"
    for key in REQUIRED_RUN_KEYS:
        assert key in run.spec, f"{_id(run)}: {key} missing"
    assert run.group["metric"] in METRICS
    assert run.published > 0
    assert run.spec["gpus"] % (run.spec["tp"] * run.spec["pp"] * run.spec.get("cp", 1)) == 0
    # The layout is one the model accepts: evaluate() raises LabInputError otherwise.
    assert run.predicted() > 0


def test_every_group_and_quantity_has_text_in_both_languages():
    catalogs = load_catalogs()
    for run in RUNS:
        quantity = run.spec.get("quantity", run.group["quantity"])
        note = run.spec.get("note", run.group["id"])
        for lang, tree in catalogs.items():
            texts = tree["validation"]
            assert run.group["id"] in texts["groups"], (lang, run.group["id"])
            assert quantity in texts["quantities"], (lang, quantity)
            assert note in texts["notes"], (lang, note)
