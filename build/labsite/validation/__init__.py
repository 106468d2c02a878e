"""The one validation table: every published figure the model is judged on,
with the lab's value, the error and the tolerance the row must meet.

    from labsite.validation import rows, summary
    table = rows()                       # [Row], in the order they print
    [r for r in table if not r.within()] # what `make validation` flags and the tests fail on

The facts are the repository's own: content/validation/published.yaml
(formulas and measured figures), content/validation/end_to_end.yaml (whole
runs, out of sample) and the published runs of scenarios/*.yaml. The site's
"model vs published runs" page shows the rows that have a ``page`` entry,
``make validation`` (labtools.validation_report) prints all of them, and
tests/model/test_published.py checks ``row.within()`` for each.
"""
from .facts import PUBLISHED, load_facts
from .formulas import activation_rows, bubble_rows, checkpoint_interval_rows, shape_rows, training_time_rows, zero_rows
from .measured import checkpoint_rows, failure_rows, nccl_rows, table4_prediction, table4_rows
from .recovery import goodput_rows, llama3_effective_time, recovery_rows, reliability_rows
from .runs import (END_TO_END, MEMORY_METRICS, EndToEndRun, end_to_end_rows, end_to_end_runs, is_modern_throughput,
                   scenario_rows)
from .table import KINDS, SUMMARY_LINES, PageEntry, Row, Tolerance, error_percent, summary

#: Rows from published.yaml, in the order they print (and the page's groups appear).
FACT_ROWS = (zero_rows, activation_rows, table4_rows, shape_rows, bubble_rows, training_time_rows, failure_rows,
             reliability_rows, checkpoint_interval_rows, checkpoint_rows, recovery_rows, goodput_rows, nccl_rows)

__all__ = ["END_TO_END", "KINDS", "MEMORY_METRICS", "PUBLISHED", "SUMMARY_LINES", "EndToEndRun", "PageEntry", "Row",
           "Tolerance", "end_to_end_rows", "end_to_end_runs", "error_percent", "fact_rows", "is_modern_throughput",
           "llama3_effective_time", "load_facts", "page_rows", "rows", "scenario_rows", "summary", "table4_prediction"]


def fact_rows(facts=None):
    facts = facts or load_facts()
    return [row for build in FACT_ROWS for row in build(facts)]


def rows(scenarios=None):
    """The whole table: published.yaml's facts, the end-to-end runs, the scenario
    files' runs (``scenarios``: the validated scenarios, default scenarios/)."""
    return fact_rows() + end_to_end_rows() + scenario_rows(scenarios)


def page_rows(table=None):
    """The rows the "model vs published runs" page shows, in its order."""
    return [row for row in (rows() if table is None else table) if row.page is not None]
