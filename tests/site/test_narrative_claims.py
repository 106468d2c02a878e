"""Hand-written scenario text (card summaries, walkthrough narratives, gallery
entries) is checked against the plan it describes: the lab's recommended plan,
or the scenario's pinned layout. Each claim below is a phrase a writer uses
(in English or Chinese) and what it requires of that plan; a card whose text
and plan disagree fails here, naming the scenario, language and phrase.

The shape panel and walkthrough shape text need no such check: they are
generated from the plan (lab_view.narrative)."""
import re

import pytest

from lab_core.planner import plan_json
from labsite.labpage import default_inputs
from labsite.scenarios import load_scenarios

# (claim, pattern by language, test of the plan's parallelism; a pattern's
# group 1, when present, is a number the plan must match).
CLAIMS = (
    ("every GPU holds a full replica (no ZeRO sharding)",
     {"en": r"(?:every|each) GPU holds a full replica", "zh": r"每块 GPU 都有一份完整副本|每块 GPU 持有完整副本"},
     lambda par, n: par["dp"] > 1 and par["zero"] == 0),
    ("gradients are all-reduced (ZeRO-0 data parallelism)",
     {"en": r"gradients are all-reduced|all-reduce averages the gradients",
      "zh": r"对 gradient 做 all-reduce|用一次 all-reduce 把 gradient 求平均"},
     lambda par, n: par["dp"] > 1 and par["zero"] == 0),
    ("ZeRO stage named for this plan",
     {"en": r"\(ZeRO-(\d)\)", "zh": r"（ZeRO-(\d)）"},
     lambda par, n: par["zero"] == n),
    ("tensor-parallel degree",
     {"en": r"split across (?:the )?(\d+) GPUs", "zh": r"切到[^。；]*?(\d+) 块 GPU"},
     lambda par, n: par["tp"] == n),
    ("pipeline-stage count",
     {"en": r"(\d+) pipeline stages", "zh": r"(\d+) 个 pipeline stage"},
     lambda par, n: par["pp"] == n),
    ("activations recomputed",
     {"en": r"activations are recomputed", "zh": r"重算 activation"},
     lambda par, n: par["recompute"] != "none"),
    # The bubble (p-1)/m is relative to the ideal step time (arXiv:2104.04473 Sec 2.2.1), not "of its time".
    ("bubble as a share of the step",
     {"en": r"\(p−1\)/m of (?:its|the step's) time", "zh": r"\(p−1\)/m 的时间"},
     lambda par, n: False),
)


def plan_of(scenario):
    if scenario.parallelism:
        return scenario.parallelism
    inputs = default_inputs()
    inputs.update(scenario.workload)
    return plan_json(inputs)["plan"]["parallelism"]


def disagreements(scenario, par):
    found = []
    for field in ("title", "summary", "narrative"):
        for lang, text in getattr(scenario, field).items():
            flat = " ".join(text.split())
            for claim, patterns, holds in CLAIMS:
                for match in re.finditer(patterns[lang], flat):
                    number = int(match.group(1)) if match.groups() else None
                    if not holds(par, number):
                        found.append(f"{scenario.id} {field}.{lang}: “{match.group(0)}” ({claim}) vs {par}")
    return found


@pytest.mark.parametrize("scenario", load_scenarios(), ids=lambda s: s.id)
def test_scenario_text_agrees_with_its_plan(scenario):
    assert disagreements(scenario, plan_of(scenario)) == []


def test_the_check_catches_the_texts_it_was_written_for():
    """The claims fail on the sentences the lab used to print (issue 13)."""
    class Old:
        id, title, narrative = "old", {"en": "", "zh": ""}, {"en": "a step idles for (p−1)/m of its time", "zh": ""}
        summary = {"en": "every GPU holds a full replica and gradients are all-reduced; each layer is split "
                         "across the 8 GPUs of a node", "zh": "每块 GPU 都有一份完整副本"}
    zero1_tp4 = {"tp": 4, "pp": 1, "dp": 64, "zero": 1, "recompute": "none"}
    assert len(disagreements(Old, zero1_tp4)) == 5
