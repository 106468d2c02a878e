"""The gradient-sync decision says when the reduction is not overlapped (Workload.grad_reduce_overlap
off): it names the switch and quotes the exposed seconds, in both languages; with the switch on the
same plan keeps its own reason."""
import pytest

from lab_core import Workload, evaluate
from lab_core.planner import recommend
from lab_core.presets import preset_inputs
from lab_view.view import decision_items
from labsite.catalog import LANGUAGES, load_catalogs

LLAMA3_70B = dict(preset_inputs("llama3-70b"), gpus=512, gpu="h100_80gb", global_batch_tokens=4 * 1024 * 1024)


def _sync(plan):
    return next(d for d in plan.decisions if d["id"] == "gradient_sync")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_off_says_why_the_reduction_is_exposed(lang):
    catalog = load_catalogs()[lang]
    on = recommend(Workload(**LLAMA3_70B))
    off = recommend(Workload(**LLAMA3_70B, grad_reduce_overlap=False))
    assert _sync(on)["reason"] != "not_overlapped"
    decision = _sync(off)
    assert decision["reason"] == "not_overlapped"
    numbers = decision["numbers"]
    # The same plan with the overlap on hides more of it.
    assert numbers["dp_comm_exposed_s"] > evaluate(Workload(**LLAMA3_70B), off.parallelism).dp_comm_s
    why = next(i["why"] for i in decision_items(off.to_dict(), catalog) if i["id"] == "gradient_sync")
    assert "{" not in why
    # It names the lab's own switch.
    assert catalog["input_labels"]["grad_reduce_overlap"].lower() in why.lower()
