"""The source-backed rules page: rules with worked examples computed by
lab_core, then the teaching assumptions with the values the model uses."""
import string

from lab_view import format_quantity
from lab_view.chinese import tighten
from lab_view.view import PLAN_FEATURES

from ..bilingual import load_yaml, require_languages
from ..errors import BuildError
from ..examples import EXAMPLES
from ..paths import CONTENT
from ..refs import resolve
from ..slots import slot_renderer

RULES_FILE = CONTENT / "rules.yaml"
ASSUMPTIONS_FILE = CONTENT / "assumptions.yaml"


def _placeholders(text):
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def load_rules():
    """Validated rules with their example values (raw numbers + kinds)."""
    rules = load_yaml(RULES_FILE)["rules"]
    seen = set()
    for rule in rules:
        where = f"{RULES_FILE.name}: rule {rule.get('id', '?')}"
        if rule["id"] in seen:
            raise BuildError(where, "duplicate id")
        seen.add(rule["id"])
        for field in ("title", "claim", "example_text"):
            require_languages(rule.get(field), where, field)
        for key in ("name", "id", "where", "url"):
            if not rule.get("source", {}).get(key):
                raise BuildError(where, f"source.{key} is required: every rule cites its primary source")
        unknown = [feature for feature in rule.get("applies") or [] if feature not in PLAN_FEATURES]
        if unknown or not rule.get("applies"):
            raise BuildError(where, f"applies: {', '.join(map(repr, unknown)) or 'nothing'} is not a plan feature "
                                    f"(allowed: {', '.join(PLAN_FEATURES)})")
        if rule["example"] not in EXAMPLES:
            raise BuildError(where, f"example {rule['example']!r} is not defined (allowed: {', '.join(sorted(EXAMPLES))})")
        rule["values"] = EXAMPLES[rule["example"]]()
        for lang in ("en", "zh"):
            needed = _placeholders(rule["example_text"][lang])
            missing = needed - set(rule["values"])
            if missing:
                raise BuildError(where, f"example_text.{lang} uses {', '.join(sorted(missing))}, which the example does not compute")
    return rules


def example_sentence(rule, lang, units):
    """The rule's example with its numbers in (lab_view.chinese.tighten: a Chinese unit
    then Chinese text with no space between)."""
    values = {name: format_quantity(value, kind, units) for name, (value, kind) in rule["values"].items()}
    return tighten(rule["example_text"][lang].format(**values))


def load_assumptions():
    items = load_yaml(ASSUMPTIONS_FILE)["assumptions"]
    for item in items:
        where = f"{ASSUMPTIONS_FILE.name}: assumption {item.get('id', '?')}"
        require_languages(item.get("text"), where, "text")
        item["number"] = resolve(item["value"]["from"], where)
    return items


def assumption_sentence(item, lang, units):
    return tighten(item["text"][lang].format(value=format_quantity(item["number"], item["value"]["kind"], units)))


@slot_renderer("rules")
def render_rules(ctx):
    units = ctx.catalog["units"]
    rules = [
        {"rule": rule, "title": rule["title"][ctx.lang], "claim": rule["claim"][ctx.lang],
         "example": example_sentence(rule, ctx.lang, units)}
        for rule in ctx.build.rules
    ]
    assumptions = [assumption_sentence(item, ctx.lang, units) for item in ctx.build.assumptions]
    return ctx.env.get_template("rules.html").render(t=ctx.catalog, rules=rules, assumptions=assumptions)
