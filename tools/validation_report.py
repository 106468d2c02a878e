"""Print the validation table: every published figure next to the lab's value,
the error, the row's tolerance and whether it is met; then the summary the
site's "Model vs published runs" page shows.

Run: python -m labtools.validation_report   (make validation)
Exit status 1 when a row is outside its tolerance.
"""
import sys

from labsite.paths import ROOT
from labsite.validation import (END_TO_END, PUBLISHED, SUMMARY_LINES, end_to_end_rows, fact_rows, page_rows,
                                scenario_rows, summary)


def _verdict(row):
    return f"{'yes' if row.within() else 'NO'} ({row.tolerance})"


def _fact_line(row):
    return (f"{row.fact:34s} {row.what[:48]:48s} {row.predicted:14.6g} {row.published:14.6g} "
            f"{row.error:9.2f}  {_verdict(row)}")


def _run_line(row):
    return (f"{row.page.source:34s} {row.fact} {row.what:{55 - len(row.fact)}s} {row.predicted:10.4g} "
            f"{row.published:10.4g} {row.error:8.2f}  {_verdict(row)}")


def _group_means(rows):
    groups = {}
    for row in rows:
        groups.setdefault(row.fact, []).append(abs(row.error))
    return groups


def main():
    facts, runs, scenarios = fact_rows(), end_to_end_rows(), scenario_rows()
    print(f"published figures: {PUBLISHED.relative_to(ROOT)}")
    print(f"{'fact':34s} {'quantity':48s} {'predicted':>14s} {'published':>14s} {'error %':>9s}  ok (tolerance)")
    for row in facts:
        print(_fact_line(row))
    print()
    print(f"End-to-end runs not in published.yaml ({END_TO_END.relative_to(ROOT)}):")
    means = _group_means(runs)
    for index, row in enumerate(runs):
        print(_run_line(row))
        if index + 1 == len(runs) or runs[index + 1].fact != row.fact:
            errors = means[row.fact]
            print(f"  {row.fact}: mean |error| {sum(errors) / len(errors):.1f}% over {len(errors)} runs")
    print()
    print("Published runs of the scenario files (scenarios/*.yaml, out of sample):")
    for row in scenarios:
        print(_fact_line(row))
    table = facts + runs + scenarios
    stats = summary(page_rows(table))
    print()
    print('Summary, as on the site\'s "Model vs published runs" page (mean |error| of its rows):')
    for line in SUMMARY_LINES:
        mean, count = stats[line]
        print(f"  {line:10s} {mean:6.2f}% over {count} rows")
    misses, predictions = stats["misses"]
    print(f"  {misses} of {predictions} out-of-sample predictions miss by more than 10%")
    outside = [row for row in table if not row.within()]
    print(f"{len(table) - len(outside)} of {len(table)} rows within their tolerance")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
