"""Print predicted vs published figures with the error (standalone).

Run from the repository root:  python3 tests/model/validation_report.py
"""
import sys

from published_checks import checks, end_to_end_rows, error_percent, published_path, within

END_TO_END_GROUPS = ("table5", "table1", "table2_ptd", "llama3", "megascale", "table2_zero3")


def main():
    print(f"published figures: {published_path()}")
    print(f"{'fact':34s} {'quantity':48s} {'predicted':>14s} {'published':>14s} {'error %':>9s}  ok")
    failures = 0
    for row in checks():
        fid, quantity, predicted, published, _, _ = row
        ok = within(row)
        failures += not ok
        print(f"{fid:34s} {quantity[:48]:48s} {predicted:14.6g} {published:14.6g} "
              f"{error_percent(predicted, published):9.2f}  {'yes' if ok else 'NO'}")
    print()
    print("End-to-end runs not in published.yaml (content/validation/end_to_end.yaml, out of sample):")
    for group in END_TO_END_GROUPS:
        errors = []
        for source, quantity, predicted, published in end_to_end_rows(group):
            err = error_percent(predicted, published)
            errors.append(abs(err))
            print(f"{source:34s} {quantity:56s} {predicted:10.4g} {published:10.4g} {err:8.2f}")
        print(f"  {group}: mean |error| {sum(errors) / len(errors):.1f}% over {len(errors)} runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
