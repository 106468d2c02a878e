"""The parallelism decision says what context parallelism buys and costs
(issue 15: "Context parallelism x16: one 128K sequence's activations are X GB
per GPU without it"), in both languages, only for plans that use it."""
import pytest

from lab_core import Workload
from lab_core.planner import recommend, vocabulary
from lab_core.presets import preset_inputs
from lab_view.view import decision_items
from labsite.catalog import LANGUAGES, load_catalogs

LLAMA3_128K = dict(preset_inputs("llama3-405b"), seq_len=131072, gpus=16384, gpu="h100_80gb",
                   global_batch_tokens=16777216, inter_node_gbps=400, state_bytes_per_param=18, stack="modern",
                   cp_all_gather=True)
SHORT = dict(LLAMA3_128K, seq_len=4096)


@pytest.fixture(scope="module")
def catalogs():
    return load_catalogs()


def _parallelism(plan):
    return next(d for d in plan.decisions if d["id"] == "parallelism")


def test_context_numbers_compare_the_plan_with_whole_sequences():
    plan = recommend(Workload(**LLAMA3_128K))
    par, numbers = plan.parallelism, _parallelism(plan)["numbers"]
    assert par.cp > 1
    assert numbers["cp_tokens"] * par.cp == numbers["seq_len"] == 131072
    # Every activation term of a layer scales with the tokens a GPU holds, so whole
    # sequences cost about cp times as much (the logits' share is on the last stage only).
    ratio = numbers["activations_without_cp_bytes"] / numbers["activations_bytes"]
    assert 0.8 * par.cp <= ratio <= par.cp * 1.05
    assert 0.0 < numbers["cp_comm_exposed_s"] <= numbers["cp_comm_total_s"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_context_sentence_only_with_context_parallelism(catalogs, lang):
    catalog = catalogs[lang]
    note = catalog["decisions"]["parallelism"]["context_note"]
    lead = note.split("{")[0].strip()
    for inputs, expected in ((LLAMA3_128K, True), (SHORT, False)):
        plan = recommend(Workload(**inputs))
        assert (plan.parallelism.cp > 1) == expected
        why = next(i["why"] for i in decision_items(plan.to_dict(), catalog) if i["id"] == "parallelism")
        assert (lead in why) == expected
        if expected:
            assert "128K" in why and "{" not in why


@pytest.mark.parametrize("lang", LANGUAGES)
def test_context_sentence_names_the_exchange_the_plan_uses(catalogs, lang):
    """Llama 3's all-gather before attention and Megatron-Core's default ring are told apart."""
    catalog = catalogs[lang]
    exchanges = catalog["decisions"]["parallelism"]["cp_exchange"]
    for gather, exchange in ((True, "all_gather"), (False, "ring")):
        plan = recommend(Workload(**dict(LLAMA3_128K, cp_all_gather=gather)))
        assert _parallelism(plan)["numbers"]["cp_exchange"] == exchange
        why = next(i["why"] for i in decision_items(plan.to_dict(), catalog) if i["id"] == "parallelism")
        lead = exchanges[exchange].split("{")[0]
        other = exchanges["ring" if gather else "all_gather"].split("{")[0]
        assert lead in why and other not in why and "{" not in why


@pytest.mark.parametrize("lang", LANGUAGES)
def test_interconnect_sentence_lists_what_crosses_the_fabric(catalogs, lang):
    """Llama 3 at 128K (TP 8 x CP 16 x PP x DP): the gradient sync, the CP exchange and pipeline
    sends, each in the catalog's words and joined as the language joins a list; a one-item list
    has no joiner."""
    catalog = catalogs[lang]
    texts = catalog["decisions"]["interconnect"]
    replicas = {"params": 8e9, "gpus": 64, "gpu": "h100_80gb", "seq_len": 4096, "global_batch_tokens": 2 ** 21}
    for inputs, expected in ((LLAMA3_128K, ["sync", "cp", "pp"]), (replicas, ["sync"])):
        plan = recommend(Workload(**inputs)).to_dict()
        decision = next(d for d in plan["decisions"] if d["id"] == "interconnect")
        traffic = decision["numbers"]["fabric_traffic"]
        assert traffic == expected, plan["parallelism"]
        why = next(i["why"] for i in decision_items(plan, catalog) if i["id"] == "interconnect")
        phrases = [texts["fabric_traffic"][part] for part in traffic]
        assert all(phrase in why for phrase in phrases) and "{" not in why
        assert (texts["fabric_traffic_last"] in why) == (len(traffic) > 1)


# DeepSeek-V3's shape as the lab's sliders and advanced inputs give it (BF16, the default fabric),
# its expert all-to-all not overlapped (with the overlap the step waits less and the meter reads "warn").
DEEPSEEK_V3_SHAPE = dict(params=671e9, layers=61, hidden=7168, experts=256, experts_per_token=8, expert_ffn_hidden=3072,
                         shared_experts=1, dense_layers=3, gpus=2048, gpu="h800_80gb", seq_len=4096,
                         global_batch_tokens=62914560, moe_comm_overlap=False)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_interconnect_sentence_names_where_the_step_waits(catalogs, lang):
    """A plan whose step waits most on NVLink (DeepSeek-V3's shape on 2,048 H800) or on the bubble
    (a deep pipeline over few sequences) says so in each language: the traffic on each link
    in the catalog's words, the seconds, no placeholder left."""
    catalog = catalogs[lang]
    texts = catalog["decisions"]["interconnect"]
    cases = ((DEEPSEEK_V3_SHAPE, "nvlink_bound"),
             ({"params": 70e9, "gpus": 512, "gpu": "h100_80gb", "seq_len": 4096, "global_batch_tokens": 2 ** 17},
              "bubble_bound"))
    for inputs, reason in cases:
        plan = recommend(Workload(**inputs)).to_dict()
        decision = next(d for d in plan["decisions"] if d["id"] == "interconnect")
        assert decision["reason"] == reason, decision["numbers"]
        why = next(i["why"] for i in decision_items(plan, catalog) if i["id"] == "interconnect")
        assert "{" not in why and why.startswith(texts["reasons"][reason].split("{")[0])
        for link in ("fabric_traffic", "nvlink_traffic") if reason == "nvlink_bound" else ("fabric_traffic",):
            assert all(texts["fabric_traffic"][part] in why for part in decision["numbers"][link]), link


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_id_the_planner_emits_has_words_in_each_catalog(catalogs, lang):
    """vocabulary() is what the catalogs must cover: each decision's options and reasons,
    and each kind of fabric traffic."""
    vocab = vocabulary()
    decisions = catalogs[lang]["decisions"]
    missing = [(decision, "reasons", reason) for decision, reasons in vocab["decision_reasons"].items()
               for reason in reasons if reason not in decisions[decision]["reasons"]]
    missing += [(decision, "options", option) for decision, options in vocab["decision_options"].items()
                for option in options if option not in decisions[decision]["options"]]
    missing += [("interconnect", "fabric_traffic", part) for part in vocab["fabric_traffic"]
                if part not in decisions["interconnect"]["fabric_traffic"]]
    assert missing == []


DEEPSEEK = dict(preset_inputs("deepseek-v3"), gpus=2048, gpu="h800_80gb", global_batch_tokens=15360 * 4096,
                inter_node_gbps=400, precision="fp8", moe_dispatcher="per_node")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_expert_sentence_counts_the_copies_a_dispatch_sends_across_nodes(catalogs, lang):
    """DeepSeek-V3 at EP 64 over 8 nodes with the per-node dispatcher: 3.5 copies of each token cross
    nodes with its node-limited routing (4 of 8 groups), 4.63 without it (moe.py); an expert group
    inside one node sends none across nodes, and the sentence then says nothing of it."""
    catalog = catalogs[lang]
    clause = catalog["decisions"]["parallelism"]["expert_fabric"].split("{")[0].strip(" ,，")
    layout = {"tp": 1, "cp": 1, "pp": 16, "dp": 128, "ep": 64, "first_stage_layers": 2, "last_stage_layers": 3}
    for groups, copies in ((8, "3.5"), (0, "4.63")):
        plan = recommend(Workload(**dict(DEEPSEEK, expert_groups=groups)), pins=layout)
        assert _parallelism(plan)["numbers"]["ep_fabric_copies"] == pytest.approx(float(copies), abs=0.005)
        why = next(i["why"] for i in decision_items(plan.to_dict(), catalog) if i["id"] == "parallelism")
        assert clause in why and copies in why and "{" not in why, why
    in_node = recommend(Workload(**DEEPSEEK), pins=dict(layout, ep=8))
    assert _parallelism(in_node)["numbers"]["ep_fabric_copies"] == 0.0
    why = next(i["why"] for i in decision_items(in_node.to_dict(), catalog) if i["id"] == "parallelism")
    assert clause not in why and "{" not in why
