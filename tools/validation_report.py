"""Print the validation table: every published figure next to the lab's value,
the error, the row's tolerance and whether it is met; then the summary the
site's "Model vs published runs" page shows, and issue 14's targets on the
end-to-end runs (TARGETS: each mean, the rows past its row limit, NOT MET where missed).

Run: python -m labtools.validation_report   (make validation)
Exit status 1 when a row is outside its tolerance.
python -m labtools.validation_report --breakdown GROUP[,GROUP...] prints, for each
end-to-end run of those groups, where its step time goes instead (breakdown_lines).
"""
import sys

import lab_core

from labsite.paths import ROOT
from labsite.validation import (END_TO_END, MEMORY_METRICS, PUBLISHED, SUMMARY_LINES, end_to_end_rows, end_to_end_runs,
                                fact_rows,
                                page_rows, scenario_rows, summary)
from labsite.validation.accuracy import run_kinds


def kind_lines(end_to_end, rows):
    """The kinds of run of labsite.validation.accuracy, one line each ('-': any)."""
    lines = [f"  {'stack':16s} {'model':6s} {'GPUs':9s} {'runs':>5s} {'median':>7s} {'9 in 10':>8s} {'signed':>7s}"]
    for kind in run_kinds(end_to_end, rows):
        model = "-" if kind.moe is None else ("moe" if kind.moe else "dense")
        lines.append(f"  {kind.stack or '-':16s} {model:6s} {kind.architecture or '-':9s} {kind.runs:5d} "
                     f"{100 * kind.median:7.2f} {100 * kind.bound:8.2f} {100 * kind.bias:+7.2f}")
    return lines


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


# (label, Report.to_dict()["time"] key) of the step's parts, per step (evaluate.py's sum).
BREAKDOWN = (("forward", "forward_s"), ("backward", "backward_s"), ("recompute", "recompute_s"),
             ("tp", "tp_comm_s"), ("cp", "cp_comm_s"), ("ep", "ep_comm_s"), ("p2p", "pp_p2p_s"),
             ("bubble", "pipeline_bubble_s"), ("zero3 gathers", "zero_comm_s"), ("dp sync", "dp_comm_s"),
             ("optimizer", "optimizer_s"))


def breakdown_lines(groups):
    """Two lines per run of the named end-to-end groups: its error, then each part
    of the lab's step in seconds, exposed / total for the collectives. The ZeRO-3 /
    DP exposed parts include what hidden traffic costs the compute it overlaps
    (calibration.COMM_CONTENTION, charged to dp sync on the modern stacks)."""
    out = []
    for run in end_to_end_runs():
        if run.group["id"] not in groups:
            continue
        spec, report = run.spec, lab_core.evaluate(run.workload(), run.parallelism()).to_dict()
        time = report["time"]
        error = 100.0 * (run.predicted() / run.published - 1.0)
        out.append(f"{run.group['id']} {spec['model']} gpus {spec['gpus']} tp {spec['tp']} pp {spec['pp']} "
                   f"dp {run.dp} micro-batch {spec.get('micro_batch')} x {time['micro_batches']} "
                   f"{spec.get('recompute', '')} {spec.get('precision', 'bf16')}: error {error:+.1f}%, "
                   f"step {time['step_s']:.3f} s, dp link {time['dp_link']}")
        parts = []
        for label, key in BREAKDOWN:
            total = time.get(key.replace("_s", "_total_s"))
            shown = f"{time[key]:.3f}" + (f"/{total:.3f}" if total is not None else "")
            parts.append(f"{label} {shown}")
        out.append("    " + ", ".join(parts))
    return out


# The bars issue 14 set on the end-to-end runs: (label, which rows, mean limit, any-row limit), percent.
TARGETS = (("modern predictions", lambda run, row: row.modern and row.kind == "prediction", 6.0, 15.0),
           ("Megatron-style runs", lambda run, row: row.megatron, 4.0, None),
           ("measured memory", lambda run, row: run.group["metric"] in MEMORY_METRICS, None, 8.0),
           ("held-out runs", lambda run, row: row.kind == "held_out", 8.0, None))


def target_lines(runs, rows):
    """One line per TARGETS bar: the mean and the rows above the row limit, and whether both are met."""
    out = []
    for label, chosen, mean_limit, row_limit in TARGETS:
        picked = [row for run, row in zip(runs, rows) if chosen(run, row)]
        mean = sum(abs(row.error) for row in picked) / len(picked)
        text, met, above = f"  {label:20s} mean {mean:5.2f}% over {len(picked)} rows", True, []
        if mean_limit is not None:
            text += f" (target < {mean_limit:g}%)"
            met = mean < mean_limit
        if row_limit is not None:
            above = sorted((row for row in picked if abs(row.error) > row_limit), key=lambda row: -abs(row.error))
            text += f"; {len(above)} above {row_limit:g}%"
            met = met and not above
        out.append(text + ("" if met else "  NOT MET"))
        out.extend(f"      {row.fact} {row.what}: {row.error:+.1f}%" for row in above)
    return out


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--breakdown":
        print("\n".join(breakdown_lines(set(sys.argv[2].split(",")))))
        return 0
    end_to_end = end_to_end_runs()
    facts, runs, scenarios = fact_rows(), end_to_end_rows(end_to_end), scenario_rows()
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
    print("By kind of run, as the lab quotes them under its figures (out-of-sample speed rows; error %):")
    print("\n".join(kind_lines(end_to_end, runs)))
    print("Targets (issue 14) on the end-to-end runs:")
    print("\n".join(target_lines(end_to_end, runs)))
    outside = [row for row in table if not row.within()]
    print(f"{len(table) - len(outside)} of {len(table)} rows within their tolerance")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
