"""Out-of-sample end-to-end runs (content/validation/end_to_end.yaml): the model's bar.

None of these runs was used to fit a constant of lab_core. The issue's bar is
the best public peer: a mean iteration-time (or throughput) error under 5% on
Megatron-style runs. Each run is also a row of the validation table, within
its group's tolerance_percent (tests/model/test_published.py), so a change
that trades one paper for another shows up by name. The largest known miss is
Narayanan's 7.5B weak-scaling row (about -11%): the table gives neither
micro-batch nor schedule, and the 2021 runs may have reduced 16-bit gradients
where the lab assumes fp32 (see the page's notes).
"""
import pytest

from labsite.catalog import load_catalogs
from labsite.scenarios import METRICS
from labsite.validation import end_to_end_rows, end_to_end_runs, summary

MEGATRON_MEAN_LIMIT = 5.0   # percent, mean |error| over the Megatron-style runs
REQUIRED_GROUP_KEYS = ("id", "source", "url", "metric", "quantity", "tolerance_percent", "rows")
REQUIRED_RUN_KEYS = ("model", "layers", "hidden", "heads", "gpus", "batch", "tp", "pp", "micro_batch",
                     "published")

RUNS = end_to_end_runs()
MEGATRON = [run for run in RUNS if run.group.get("megatron_style", True)]


def _id(run):
    spec = run.spec
    return f"{run.group['id']}-{spec['model']}-{spec['gpus']}-{spec.get('recompute', '')}"


def test_megatron_style_mean_error_is_under_the_bar():
    mean, count = summary(end_to_end_rows(RUNS))["megatron"]
    assert count == len(MEGATRON) >= 25
    assert mean < MEGATRON_MEAN_LIMIT, f"mean |error| {mean:.2f}% over {count} runs"


def test_runs_span_a100_and_h100_from_8_to_thousands_of_gpus():
    gpus = [run.spec["gpus"] for run in MEGATRON]
    devices = {run.spec["gpu"] for run in MEGATRON}
    assert min(gpus) == 8 and max(gpus) >= 8192
    assert devices == {"a100_80gb", "h100_80gb"}


@pytest.mark.parametrize("run", RUNS, ids=_id)
def test_every_run_is_complete_and_consistent(run):
    for key in REQUIRED_GROUP_KEYS:
        assert key in run.group, f"group {run.group.get('id')}: {key} missing"
    for key in REQUIRED_RUN_KEYS:
        assert key in run.spec, f"{_id(run)}: {key} missing"
    assert run.group["metric"] in METRICS
    assert run.published > 0
    assert run.spec["gpus"] % (run.spec["tp"] * run.spec["pp"]) == 0
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
