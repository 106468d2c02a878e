"""python -m lab_core plan | compare: the lab's answer on the command line.

    python -m lab_core plan --params 70e9 --gpus 512 [--gpu h100_80gb] [--preset llama3-70b]
        [--pin tp=8 ...] [--format text|json|megatron|torchtitan|deepspeed] [--lang en|zh] [--units gb|gib]
    python -m lab_core compare [A's flags] --vs [what B changes]

The same path as the page: lab_view.Session reads every value as the page's
boxes do ("70B", "8K", "400 Gb/s"), plans within the pins, and words the
answer and any error from the catalogs of the chosen language; exports come
from lab_core.export. Words need the project's catalogs (content/i18n, read
with labsite's loader: the repository's environment from ``make setup``).
Bad flags or values print one line and exit with status 2.
"""
import argparse
import json
import sys

from .errors import LabInputError
from .export import FORMATS
from .inputs import INPUT_SPECS
from .presets import PRESET_IDS, preset_inputs

LANGUAGES = ("en", "zh")
UNITS = ("gb", "gib")
PLAN_FORMATS = ("text",) + FORMATS
COMPARE_FORMATS = ("text", "json")
VS = "--vs"


class _Usage(Exception):
    """A command line argparse cannot read (argparse's message), or a compare without --vs (None)."""


class _Parser(argparse.ArgumentParser):
    """No abbreviated flags: `--tp 0` must never be read as `--tp-comm-overlap 0`."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise _Usage(message)


def _prescan(argv, flag, default):
    for i, word in enumerate(argv):
        if word == flag and i + 1 < len(argv):
            return argv[i + 1]
        if word.startswith(flag + "="):
            return word.split("=", 1)[1]
    return default


def build_parser(command, help_texts):
    parser = _Parser(prog=f"python -m lab_core {command}", description=help_texts[command])
    for spec in INPUT_SPECS:
        parser.add_argument("--" + spec.name.replace("_", "-"), dest=spec.name, metavar="VALUE",
                            help=help_texts["input"].format(unit=spec.unit))
    parser.add_argument("--preset", help=help_texts["preset"].format(presets=", ".join(PRESET_IDS)))
    parser.add_argument("--pin", action="append", default=[], metavar="FIELD=VALUE", help=help_texts["pin"])
    formats = PLAN_FORMATS if command == "plan" else COMPARE_FORMATS
    parser.add_argument("--format", choices=formats, help=help_texts["format"])
    parser.add_argument("--lang", choices=LANGUAGES, help=help_texts["lang"])
    parser.add_argument("--units", choices=UNITS, help=help_texts["units"])
    return parser


def _pins(words, pins, fields):
    """``pins`` updated by ``--pin field=value`` words (``field=auto`` unpins)."""
    for word in words:
        field, sep, value = word.partition("=")
        if not sep or field not in fields or not value:
            raise LabInputError("pin", word, ", ".join(fields), "bad_pin")
        if value == "auto":
            pins.pop(field, None)
        else:
            pins[field] = value
    return pins


def _state(args, base, fields):
    """(preset, typed inputs, pins) of parsed flags over ``base`` (A's, for B)."""
    preset, typed, pins = base
    if args.preset is not None:
        if args.preset not in PRESET_IDS:
            raise LabInputError("preset", args.preset, ", ".join(PRESET_IDS), "unknown_choice")
        preset = args.preset
    typed = dict(typed, **{spec.name: getattr(args, spec.name) for spec in INPUT_SPECS
                           if getattr(args, spec.name) is not None})
    return preset, typed, _pins(args.pin, dict(pins), fields)


class _Lab:
    """The session and words of one language (loaded on demand: the catalogs are YAML)."""

    def __init__(self, lang):
        from labsite.catalog import load_catalogs
        from labsite.labpage import default_inputs, load_lab_layout, session_config
        from lab_view import Session
        from lab_view.pins import PIN_FIELDS

        self.words = load_catalogs()[lang]
        extras = {"rules_short": [], "rules_href": "", "cli": self.words["cli"]}
        self.session = Session(session_config(load_lab_layout(), self.words, extras))
        self.defaults = default_inputs()
        self.pin_fields = PIN_FIELDS

    def evaluate(self, state, units, compare=None):
        preset, typed, pins = state
        inputs = dict(self.defaults, **(preset_inputs(preset) if preset else {}))
        result = self.session.evaluate(inputs, typed, False, pins, units, compare)
        if not result["ok"]:
            raise _Rejected(result["error"]["text"])
        return result

    def error_text(self, err):
        from lab_view.view import render_error
        if err.reason == "bad_pin":
            return self.words["cli"]["bad_pin"].format(text=err.value, fields=err.allowed)
        return render_error(err.to_dict(), self.words, self.session.kinds)["text"]


class _Rejected(Exception):
    """The lab rejected the inputs; the message is the page's sentence."""


def _plan(lab, args, state):
    from lab_view.text import plan_text
    units = args.units or UNITS[0]
    result = lab.evaluate(state, units)
    fmt = args.format or "text"
    if fmt == "text":
        return plan_text(result, lab.session.plan_result(result["inputs"], result["pins"]), lab.session.words(units))
    extras = lab.session.extras({"inputs": result["inputs"], "pins": result["pins"]}, units, export_format=fmt)
    return extras["export"]["text"]


def _compare(lab, args, b_args, state_a):
    from lab_view.text import compare_text
    units = b_args.units or args.units or UNITS[0]
    a = lab.evaluate(state_a, units)
    state_b = _state(b_args, state_a, lab.pin_fields)
    b = lab.evaluate(state_b, units, {"inputs": a["inputs"], "pins": a["pins"]})
    if (b_args.format or args.format or "text") == "json":
        out = {"a": {"inputs": a["inputs"], "pins": a["pins"]}, "b": {"inputs": b["inputs"], "pins": b["pins"]},
               "rows": b["compare"].get("rows", []), "summary": b["compare"]["summary"]}
        return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
    return compare_text(b["compare"], lab.session.words(units))


def main(command, argv):
    """Run ``plan`` or ``compare`` with ``argv``; return the exit status."""
    lang = _prescan(argv, "--lang", LANGUAGES[0])
    lab = _Lab(lang if lang in LANGUAGES else LANGUAGES[0])
    texts = lab.words["cli"]
    try:
        a_argv, b_argv = (argv, None) if command == "plan" else _split(argv)
        parser = build_parser(command, texts["help"])
        args = parser.parse_args(a_argv)
        b_args = parser.parse_args(b_argv) if b_argv is not None else None
        state = _state(args, (None, {}, {}), lab.pin_fields)
        out = _plan(lab, args, state) if command == "plan" else _compare(lab, args, b_args, state)
    except _Usage as err:
        text = texts["bad_flag"].format(message=err, command=command) if str(err) else texts["needs_vs"].format(vs=VS)
        print(texts["error"].format(text=text), file=sys.stderr)
        return 2
    except LabInputError as err:
        print(texts["error"].format(text=lab.error_text(err)), file=sys.stderr)
        return 2
    except _Rejected as err:
        print(texts["error"].format(text=str(err)), file=sys.stderr)
        return 2
    sys.stdout.write(out)
    return 0


def _split(argv):
    if VS not in argv:
        raise _Usage("")
    i = argv.index(VS)
    return argv[:i], argv[i + 1:]
