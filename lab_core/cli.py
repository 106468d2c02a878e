"""Command line: python -m lab_core evaluate --params 175e9 --gpus 1024 ... [--json].

Same numbers as lab_core.evaluate(); bad flags or values print the input
error on stderr and exit with status 2 (no traceback). ``plan`` and
``compare`` (the recommended plan, its launch configuration, two plans side
by side) are in cli_plan.py.
"""
import argparse
import json
import sys

from .errors import LabInputError
from .evaluate import evaluate
from .inputs import BOOL_WORDS, INPUT_SPECS
from .parallelism import RECOMPUTE_MODES, Parallelism
from .workload import Workload

PARALLEL_FLAGS = (("tp", int), ("pp", int), ("cp", int), ("dp", int), ("ep", int), ("zero", int), ("dp_shard", int),
                  ("micro_batch", int), ("interleave", int), ("recompute_layers", int), ("first_stage_layers", int),
                  ("last_stage_layers", int))


class _Parser(argparse.ArgumentParser):
    """No abbreviated flags: `--tp 0` must never be read as `--tp-comm-overlap 0`."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    argv = ()

    def error(self, message):
        raise LabInputError("arguments", " ".join(self.argv), "see --help", "bad_flag", message)


def _number(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}")
    return int(value) if value == int(value) and abs(value) < 2 ** 53 else value


def _bool(text):
    value = BOOL_WORDS.get(text.strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"not a boolean: {text!r}")
    return value


def build_parser():
    parser = _Parser(prog="python -m lab_core", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    ev = sub.add_parser("evaluate", help="evaluate one workload and parallelism")
    # Dispatched before this parser runs (cli_plan.py); listed for --help.
    sub.add_parser("plan")
    sub.add_parser("compare")
    ev.error = parser.error
    for spec in INPUT_SPECS:
        flag = "--" + spec.name.replace("_", "-")
        if spec.kind == "bool":
            ev.add_argument(flag, dest=spec.name, type=_bool, help=f"{spec.unit} (default {spec.default})")
        elif spec.kind == "choice" and isinstance(spec.default, str):
            ev.add_argument(flag, dest=spec.name, type=str, help=f"one of {', '.join(spec.choices)}")
        elif spec.kind == "modules":
            ev.add_argument(flag, dest=spec.name, type=str,
                            help=f"comma-separated, any of {', '.join(spec.choices)} (default {','.join(spec.default)})")
        else:
            ev.add_argument(flag, dest=spec.name, type=_number, help=f"{spec.unit} (default {spec.default:g})")
    for name, kind in PARALLEL_FLAGS:
        ev.add_argument("--" + name.replace("_", "-"), dest=name, type=_number)
    ev.add_argument("--recompute", choices=RECOMPUTE_MODES, default="none")
    ev.add_argument("--sequence-parallel", dest="sequence_parallel", action="store_true")
    ev.add_argument("--json", action="store_true", help="print Report.to_dict() as JSON")
    return parser


# What a layout flag left out means (a flag given as 0 stays 0, for Parallelism to judge).
LAYOUT_DEFAULTS = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero": 0, "dp_shard": 0, "micro_batch": 1, "interleave": 1,
                   "recompute_layers": 0, "first_stage_layers": 0, "last_stage_layers": 0}


def _layout(args, gpus):
    """Parallelism's fields from the flags given, LAYOUT_DEFAULTS for the rest; dp, when not
    given, from the GPUs the model-parallel degrees leave (at least 1)."""
    fields = dict(LAYOUT_DEFAULTS)
    fields.update({name: getattr(args, name) for name, _ in PARALLEL_FLAGS if getattr(args, name) is not None})
    if "dp" not in fields:
        degrees = (fields["tp"], fields["pp"], fields["cp"])
        model = degrees[0] * degrees[1] * degrees[2] if all(isinstance(d, int) and d > 0 for d in degrees) else 1
        fields["dp"] = max(1, gpus // model)
    return fields


def _table(report):
    lines = []
    for group, values in report.to_dict().items():
        lines.append(f"[{group}]")
        for key, value in values.items():
            text = f"{value:.6g}" if isinstance(value, float) else str(value)
            lines.append(f"  {key:32s} {text}")
    return "\n".join(lines)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("plan", "compare"):
        from .cli_plan import main as plan_main
        return plan_main(argv[0], argv[1:])
    try:
        parser = build_parser()
        parser.argv = argv
        args = parser.parse_args(argv)
        if args.command != "evaluate":
            raise LabInputError("command", args.command, "evaluate", "unknown_command")
        data = {spec.name: getattr(args, spec.name) for spec in INPUT_SPECS
                if getattr(args, spec.name) is not None}
        workload = Workload.from_dict(data)
        parallelism = Parallelism(**_layout(args, workload.gpus), recompute=args.recompute,
                                  sequence_parallel=args.sequence_parallel)
        report = evaluate(workload, parallelism)
    except LabInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=False))
    else:
        print(_table(report))
    return 0
