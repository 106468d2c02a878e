"""The scenario gallery and the Contributing page's generated parts.

Slots:
  gallery            every scenario as a card: demo path, published runs, the rest
  scenario_example   the worked example file (scenarios/examples/), verbatim
  scenario_fields    the scenario format's fields (from scenarios/scenario.schema.json)
  scenario_inputs    the workload inputs with range and default (from lab_core.inputs)
  scenario_metrics   the published figures the lab predicts

Scenario files are validated once per build, before any page is rendered
(labsite.site.SiteBuild), so a bad file stops the build with the same
``file:line: ...`` lines as ``python -m labsite.check_scenarios``.

Other pages can reuse ``card(scenario, ctx)``: the same dict the gallery
renders (title, summary, workload facts, layout, prediction, published vs
predicted, lab link) in the page's language.
"""
from lab_core import GPU_PRESETS, evaluate, plan_json
from lab_core.presets import PRESETS
from lab_core.inputs import INPUT_SPECS, SPEC_BY_NAME
from lab_view import format_quantity
from lab_view.view import stage_layers_text

from ..errors import BuildError
from ..labquery import lab_url
from ..scenarios import METRICS, SCENARIOS, predicted
from ..scenarios.schema import SCENARIO_SCHEMA_FILE, load_schema, object_fields
from ..scenarios.validate import EXAMPLES_DIR, SCHEMAS
from ..slots import slot_renderer

#: Workload inputs shown on a card, with their quantity kind.
CARD_INPUTS = (
    ("params", "params"),
    ("gpus", "count"),
    ("global_batch_tokens", "tokens"),
    ("seq_len", "seq"),
    ("inter_node_gbps", "gbps"),
    ("checkpoint_interval_min", "minutes"),
)
EXAMPLE_FILE = "minimal-example.yaml"


def _fmt(value, kind, units):
    """lab_view's formatting; metric values in percent are given to it as ratios."""
    if kind == "percent":
        return format_quantity(value / 100.0, "percent", units)
    return format_quantity(value, kind, units)


def _layout_text(par, t, report, catalog):
    """The layout a scenario pins, every dimension it uses (tp x cp x pp x dp is the GPU count);
    an uneven pipeline split in the lab's words (lab_view.view.stage_layers_text)."""
    parts = [t["layout_parts"]["tp"].format(n=par["tp"])]
    if par.get("cp", 1) > 1:
        parts.append(t["layout_parts"]["cp"].format(n=par["cp"]))
    parts.append(t["layout_parts"]["pp"].format(n=par["pp"]))
    if par["pp"] > 1 and (par.get("first_stage_layers") or par.get("last_stage_layers")):
        parts.append(t["layout_parts"]["stage_layers"].format(layers=stage_layers_text(par, report, catalog)))
    parts.append(t["layout_parts"]["dp"].format(n=par["dp"]))
    if par.get("ep", 1) > 1:
        parts.append(t["layout_parts"]["ep"].format(n=par["ep"]))
    if par.get("zero"):
        parts.append(t["layout_parts"]["zero"].format(n=par["zero"]))
    parts.append(t["recompute"][par.get("recompute", "none")])
    if par.get("sequence_parallel"):
        parts.append(t["layout_parts"]["sequence_parallel"])
    parts.append(t["layout_parts"]["micro_batch"].format(n=par.get("micro_batch", 1)))
    if par.get("interleave", 1) > 1:
        parts.append(t["layout_parts"]["interleave"].format(n=par["interleave"]))
    return " · ".join(parts)


def _difference(pred, pub, units):
    change = (pred - pub) / pub * 100.0
    sign = "+" if change > 0.05 else ("−" if change < -0.05 else "±")
    return sign + format_quantity(abs(change) / 100.0, "percent", units)


def _plan(scenario):
    """``(stage, parallelism dict, report dict)`` the planner recommends for a scenario's workload."""
    result = plan_json(dict(scenario.workload))
    if not result["ok"]:  # a validated workload always plans; say so if the model disagrees
        raise BuildError(scenario.path, f"the planner rejected the workload: {result['error']}")
    plan = result["plan"]
    return plan["stage"], plan["parallelism"], plan["report"]


def card(scenario, ctx, step=None):
    """Everything a card shows for ``scenario`` in ``ctx``'s language (plain data)."""
    lang, t = ctx.lang, ctx.catalog["scenarios"]
    units = t["units"]
    w = scenario.workload_object()
    facts = []
    for name, kind in CARD_INPUTS:
        value = getattr(w, name)
        facts.append({"label": t["inputs"][name], "value": _fmt(value, kind, units)})
    facts.insert(2, {"label": t["inputs"]["gpu"], "value": GPU_PRESETS[w.gpu].name})
    stage = None
    if scenario.parallelism is not None:
        report = evaluate(w, scenario.parallelism_object()).to_dict()
        layout = {"pinned": True, "text": _layout_text(scenario.parallelism, t, report, ctx.catalog)}
    else:
        stage_id, par, report = _plan(scenario)
        layout = {"pinned": False, "text": _layout_text(par, t, report, ctx.catalog)}
        # As in the lab: the full-3D stage is not called "with activation checkpointing" when the plan keeps its activations.
        plain = f"{stage_id}_no_recompute"
        stage = t["stages"][plain if par["recompute"] == "none" and plain in t["stages"] else stage_id]
    memory = report["memory"]
    fits = memory["fits"]
    prediction = [
        {"label": t["prediction_labels"]["memory"],
         "value": t["memory_of"].format(used=_fmt(memory["total_bytes"], "bytes_gb", units),
                                        device=_fmt(memory["device_bytes"], "bytes_gb", units)),
         "level": "ok" if fits else "critical", "note": t["fits"] if fits else t["does_not_fit"]},
        {"label": t["prediction_labels"]["step_time"], "value": _fmt(report["time"]["step_s"], "seconds", units),
         "note": None},
        {"label": t["prediction_labels"]["tflops"],
         "value": _fmt(predicted(METRICS["model_tflops_per_gpu"], report, w.gpus), "tflops", units)},
        {"label": t["prediction_labels"]["mfu"], "value": format_quantity(report["throughput"]["mfu"], "percent", units)},
    ]
    published = []
    for figure in scenario.published:
        metric = METRICS[figure["metric"]]
        value = predicted(metric, report, w.gpus)
        published.append({
            "label": t["metrics"][metric.name],
            "published": _fmt(figure["value"], metric.unit, units),
            "predicted": _fmt(value, metric.unit, units),
            "difference": _difference(value, figure["value"], units),
            "where": figure["where"],
            "note": figure.get("note", {}).get(lang),
        })
    return {
        "id": scenario.id,
        "step": step,
        "title": scenario.title[lang],
        "summary": scenario.summary[lang],
        "narrative": scenario.narrative[lang],
        "notes": scenario.notes[lang] if scenario.notes else None,
        "tags": list(scenario.tags),
        "facts": facts,
        "layout": layout,
        "stage": stage,
        "prediction": prediction,
        "published": published,
        "source": scenario.source,
        "lab_url": lab_url(ctx.link("lab/"), scenario.workload),
    }


def gallery_sections(ctx):
    """``[(section key, [card])]``: the demo path in order, published runs by GPU count, the rest by id."""
    scenarios, steps = ctx.build.scenarios
    on_path = set(steps)
    demo = [card(scenarios[sid], ctx, step=index + 1) for index, sid in enumerate(steps)]
    runs = sorted((s for s in scenarios.values() if s.published and s.id not in on_path),
                  key=lambda s: (s.workload_object().gpus, s.id))
    others = [s for s in scenarios.values() if not s.published and s.id not in on_path]
    sections = [("demo_path", demo), ("published_runs", [card(s, ctx) for s in runs]),
                ("more", [card(s, ctx) for s in others])]
    return [(key, cards) for key, cards in sections if cards]


@slot_renderer("gallery")
def render_gallery(ctx):
    return ctx.env.get_template("scenario_gallery.html").render(
        t=ctx.catalog["scenarios"], sections=gallery_sections(ctx), lang=ctx.lang)


# --- the Contributing page ------------------------------------------------------


def example_text():
    """The worked example as a contributor copies it into scenarios/ (schema line pointing beside it)."""
    text = (SCENARIOS / EXAMPLES_DIR / EXAMPLE_FILE).read_text(encoding="utf-8")
    return text.replace(f"$schema=../{SCENARIO_SCHEMA_FILE}", f"$schema=./{SCENARIO_SCHEMA_FILE}", 1)


@slot_renderer("scenario_example")
def render_example(ctx):
    return ctx.env.get_template("scenario_code.html").render(
        code=example_text(), caption=ctx.catalog["contributing"]["example_caption"].format(file=EXAMPLE_FILE),
        copy=ctx.catalog["contributing"]["copy"], code_id="scenario-example")


@slot_renderer("scenario_fields")
def render_fields(ctx):
    t = ctx.catalog["contributing"]
    fields = object_fields(load_schema(str(SCHEMAS / SCENARIO_SCHEMA_FILE)))
    rows = [{"name": name, "required": t["required"] if required else t["optional"], "text": t["fields"][name]}
            for name, required in fields]
    return ctx.env.get_template("scenario_table.html").render(
        head=[t["head"]["field"], t["head"]["required"], t["head"]["meaning"]],
        rows=[[{"code": r["name"]}, {"text": r["required"]}, {"text": r["text"]}] for r in rows])


def _spec_range(spec, t, units):
    if spec.kind == "bool":
        return t["bool_values"], t["true"] if spec.default else t["false"]
    if spec.kind == "choice":
        return ", ".join(str(c) for c in spec.choices), str(spec.default)
    if spec.kind == "modules":
        return ", ".join(spec.choices), "[" + ", ".join(spec.default) + "]"
    def number(value):
        return _fmt(value, "params" if abs(value) >= 1e6 else "plain", units)

    low, high = number(spec.lowest), number(spec.highest)
    # Inputs derived from something else than params say from what (derived_inputs).
    default = t["derived_inputs"].get(spec.name, t["derived"]) if spec.derive_if_zero else number(spec.default)
    return t["range"].format(low=low, high=high), default


@slot_renderer("scenario_inputs")
def render_inputs(ctx):
    t = ctx.catalog["contributing"]
    units = ctx.catalog["scenarios"]["units"]
    rows = []
    for spec in INPUT_SPECS:
        allowed, default = _spec_range(spec, t, units)
        rows.append([{"code": spec.name}, {"text": t["inputs"][spec.name]}, {"text": allowed}, {"text": default}])
    return ctx.env.get_template("scenario_table.html").render(
        head=[t["head"]["input"], t["head"]["meaning"], t["head"]["allowed"], t["head"]["default"]], rows=rows)


@slot_renderer("scenario_presets")
def render_presets(ctx):
    t = ctx.catalog["contributing"]
    names = ctx.catalog["presets"]["names"]
    rows = [[{"code": preset_id}, {"text": names[preset_id]},
             {"text": f'{preset["source"]["id"]}, {preset["source"]["where"]}'}] for preset_id, preset in PRESETS.items()]
    return ctx.env.get_template("scenario_table.html").render(
        head=[t["head"]["preset"], t["head"]["model_name"], t["head"]["shape_source"]], rows=rows)


@slot_renderer("scenario_metrics")
def render_metrics(ctx):
    t = ctx.catalog["contributing"]
    names = ctx.catalog["scenarios"]["metrics"]
    units = ctx.catalog["scenarios"]["units"]
    rows = [[{"code": m.name}, {"text": names[m.name]}, {"text": units[m.unit].format(n="x")},
             {"text": t["metric_notes"][m.name]}] for m in METRICS.values()]
    return ctx.env.get_template("scenario_table.html").render(
        head=[t["head"]["metric"], t["head"]["figure"], t["head"]["unit"], t["head"]["meaning"]], rows=rows)


assert all(name in SPEC_BY_NAME for name, _ in CARD_INPUTS)
