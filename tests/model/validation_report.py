"""Print predicted vs published figures with the error (standalone).

Run from the repository root:  python3 tests/model/validation_report.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from published_checks import (checks, end_to_end_rows, error_percent,  # noqa: E402
                              published_path, within, zero3_rows)


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
    print("End-to-end runs not in published.yaml (reported, not asserted):")
    errors = []
    for source, quantity, predicted, published in end_to_end_rows():
        err = error_percent(predicted, published)
        errors.append(abs(err))
        print(f"{source:34s} {quantity:48s} {predicted:14.6g} {published:14.6g} {err:9.2f}")
    print(f"mean |error| of end-to-end iteration time: {sum(errors) / len(errors):.1f}% over {len(errors)} runs")
    print()
    print("ZeRO-3 without model parallelism (reported, asserted loosely):")
    z_errors = []
    for source, quantity, predicted, published in zero3_rows():
        err = error_percent(predicted, published)
        z_errors.append(abs(err))
        print(f"{source:34s} {quantity:48s} {predicted:14.6g} {published:14.6g} {err:9.2f}")
    print(f"mean |error| of ZeRO-3 TFLOP/s: {sum(z_errors) / len(z_errors):.1f}% over {len(z_errors)} runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
