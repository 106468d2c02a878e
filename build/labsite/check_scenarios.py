"""Check scenario files: python -m labsite.check_scenarios [FILES]  (make check-scenarios FILES=...)

With no FILES, checks every scenario in scenarios/, the examples in
scenarios/examples/ and the demo path. With FILES, checks those files in the
context of scenarios/ (ids must stay unique; a demo path's ids must exist).

The format is scenarios/scenario.schema.json (and demo-path.schema.json).
Every problem is listed, one per line:  file:line: field: what is wrong (allowed: …)
Exit status: 0 all valid, 1 problems found, 2 usage error.
"""
import sys
from pathlib import Path

USAGE = "usage: python -m labsite.check_scenarios [FILE.yaml ...]"


def _usage_error(message):
    print(f"check_scenarios: {message}\n{USAGE}", file=sys.stderr)
    return 2


def main(argv):
    from .scenarios import SCENARIOS, check_tree

    files = []
    for arg in argv:
        if arg in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if arg.startswith("-") and arg != "-":
            return _usage_error(f"unknown option {arg}")
        files.append(Path(arg))
    for path in files:
        if not path.is_file():
            return _usage_error(f"no such file: {path}")
        if path.suffix not in (".yaml", ".yml"):
            return _usage_error(f"not a YAML file: {path}")
    result = check_tree(SCENARIOS, files or None)
    if result.problems:
        for problem in result.problems:
            print(problem, file=sys.stderr)
        count, bad = len(result.problems), len({p.file for p in result.problems})
        print(f"{count} problem{'s' if count != 1 else ''} in {bad} file{'s' if bad != 1 else ''} "
              f"({len(result.files)} checked)", file=sys.stderr)
        return 1
    steps = f", demo path of {len(result.demo_path)} steps" if result.demo_path else ""
    count = len(result.files)
    print(f"ok: {count} file{'s' if count != 1 else ''} valid{steps}")
    return 0


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
    except KeyboardInterrupt:
        status = 130
    except Exception as err:  # never a traceback: say what broke and where to look
        print(f"check_scenarios: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        status = 2
    sys.exit(status)
