"""The step-by-step walkthrough (分步讲解): the demo path's scenarios in order,
each with its workload, the recommended shape, the five meters and the six
decisions — the very view the lab shows for that workload (lab_view), so a
card and the lab opened from its link agree to the digit."""
from lab_core.planner.meters import METERS
from lab_view import Session

from ..labpage import default_inputs
from ..labquery import lab_url
from ..slots import slot_renderer
from .lab import runtime_session_config

#: Workload inputs a step lists, in order.
STEP_INPUTS = ("params", "gpus", "global_batch_tokens", "seq_len", "inter_node_gbps", "checkpoint_interval_min")


def walkthrough_steps(ctx):
    """``[{"id", "step", "title", "narrative", "facts", "view", "lab_url"}]`` in the page's language."""
    config = runtime_session_config(ctx.build.layout, ctx.catalog, ctx.lang, ctx.build.rules, ctx.link("rules/"))
    steps = []
    for number, scenario in enumerate(ctx.build.demo_path, start=1):
        inputs = dict(default_inputs(), **scenario.workload)
        result = Session(config).evaluate(inputs)
        view = result["view"]
        facts = [{"label": ctx.catalog["input_labels"][name], "value": view["values"][name]} for name in STEP_INPUTS]
        if inputs["gpu"] != default_inputs()["gpu"]:
            facts.append({"label": ctx.catalog["input_labels"]["gpu"], "value": ctx.catalog["choices"]["gpu"][inputs["gpu"]]})
        steps.append({
            "id": scenario.id, "step": number, "title": scenario.title[ctx.lang],
            "narrative": scenario.narrative[ctx.lang], "facts": facts, "view": view,
            "lab_url": lab_url(ctx.link("lab/"), scenario.workload),
        })
    return steps


@slot_renderer("walkthrough")
def render_walkthrough(ctx):
    return ctx.env.get_template("walkthrough.html").render(
        t=ctx.catalog, steps=walkthrough_steps(ctx), meter_names=METERS)
