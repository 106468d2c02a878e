"""The lab slot: sliders, diagram, meters, plan and decisions, precomputed for
the default workload, with the demo path's scenario cards whose results are
precomputed too (written as JSON next to the lab's assets)."""
import hashlib
import json

from lab_view import Session

from .. import assets
from ..labpage import lab_page_data, session_config
from ..slots import slot_renderer
from ..validation.accuracy import quoted_run_kinds

CARD_VIEW_DIR = "assets/lab/views"


def rules_short(rules, lang):
    return [{"id": r["id"], "applies": r["applies"], "title": r["title"][lang],
             "source": f'{r["source"]["name"]} · {r["source"]["id"]}'} for r in rules]


def runtime_catalog_extras(rules, lang, rules_href, validation_href="../validation/"):
    """Catalog entries the build makes from data: the rules (for "rules that apply") and how far
    the model was from published runs by kind of run (validation.accuracy, for the figures' note)."""
    return {"rules_short": rules_short(rules, lang), "rules_href": rules_href,
            "run_kinds": [kind.to_dict() for kind in quoted_run_kinds()], "validation_href": validation_href}


def runtime_session_config(layout, catalog, lang, rules, rules_href="../rules/", validation_href="../validation/"):
    """The exact lab_view.Session configuration the lab page ships for ``lang``."""
    return session_config(layout, catalog, runtime_catalog_extras(rules, lang, rules_href, validation_href))


def _card_results(ctx, config, script):
    """Each card's precomputed result as JSON (fetched over http), plus one
    classic script with all of them for file://, where fetch is refused.
    Returns the cards; the script's URL goes to script["url"]."""
    cards, results = [], {}
    for step, scenario in enumerate(ctx.build.demo_path, start=1):
        inputs = dict(config["defaults"])
        inputs.update(scenario.workload)
        result = Session(config["session"]).evaluate(inputs)
        data = json.dumps(result, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        name = f"{CARD_VIEW_DIR}/{ctx.lang}/{scenario.id}.{hashlib.sha256(data).hexdigest()[:10]}.json"
        ctx.build.generated[name] = data
        results[scenario.id] = result
        cards.append({"id": scenario.id, "step": step, "title": scenario.title[ctx.lang],
                      "summary": scenario.summary[ctx.lang], "inputs": result["inputs"], "view": ctx.root + name})
    code = ("LabPage.registerCards(" + json.dumps(results, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            + ");\n").encode("utf-8")
    name = f"{CARD_VIEW_DIR}/{ctx.lang}/cards.{hashlib.sha256(code).hexdigest()[:10]}.js"
    ctx.build.generated[name] = code
    script["url"] = ctx.root + name
    return cards


@slot_renderer("lab")
def render_lab(ctx):
    pyzip_url = f"{ctx.root}{assets.PYZIP_DIR}/{ctx.build.pyzip_name}"
    extras = runtime_catalog_extras(ctx.build.rules, ctx.lang, ctx.link("rules/"), ctx.link("validation/"))
    script = {}
    data = lab_page_data(ctx.build.layout, ctx.catalog, ctx.lang, ctx.root, pyzip_url,
                         catalog_extras=extras, card_builder=lambda config: _card_results(ctx, config, script),
                         rules_href=extras["rules_href"], dev_server=ctx.build.dev_server,
                         pyzip_bytes=len(ctx.build.pyzip))
    data["runtime"]["cardsScript"] = script.get("url", "")
    return ctx.env.get_template("lab.html").render(t=ctx.catalog, root=ctx.root, **data)
