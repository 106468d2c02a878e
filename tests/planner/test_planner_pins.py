"""Pins: recommend(workload, pins) searches only plans that match every pin,
finds the best of them, and names a bad pin with the nearest valid values."""
import random

import pytest

from lab_core import LabInputError, Workload
from lab_core.planner import plan_json, recommend
from lab_core.planner.assumptions import TIE_TOLERANCE
from lab_core.planner.pins import PIN_FIELDS, parse_pins
from lab_core.planner.search import search, simplicity_key
from lab_core.planner.space import space_for
from planner_brute import brute
from test_planner_search_exact import NEW_DIMENSIONS, _workloads

GPT3 = {"params": 175e9, "gpus": 1024, "global_batch_tokens": 1536 * 2048}


def _error(inputs, pins):
    out = plan_json(inputs, pins)
    assert out["ok"] is False, out
    return out["error"]


@pytest.mark.parametrize("pins,field,allowed", [
    ({"tp": 3}, "tp", "1, 2, 4, 8"),
    ({"pp": 5}, "pp", "1, 2, 3, 4, 6, 7, 8, 12"),
    ({"tp": 8, "cp": 1, "pp": 8, "dp": 8}, "dp", "16"),
    ({"ep": 2}, "ep", "1"),
    ({"cp": 3}, "cp", "1, 2, 4, 8, 16, 32, 64, 128"),
    ({"micro_batch": 7}, "micro_batch", "1, 2, 3, 4, 6, 8, 12, 16"),
    ({"interleave": 2, "pp": 1}, "interleave", "1"),
    ({"pp": 8, "first_stage_layers": 11}, "first_stage_layers", "5, 12, 19, 26, 33, 40, 47, 54"),
    ({"sequence_parallel": True, "tp": 1}, "sequence_parallel", "false"),
])
def test_invalid_pin_names_field_value_and_nearest_valid_values(pins, field, allowed):
    err = _error(GPT3, pins)
    assert err["field"] == field and err["value"] == pins[field] and err["reason"] == "inconsistent"
    assert err["allowed"] == allowed


def test_zero_pin_without_ranks_to_shard_is_refused():
    err = _error({"params": 1.3e9, "gpus": 64}, {"zero": 3, "dp": 1})
    assert (err["field"], err["allowed"]) == ("zero", "0")


@pytest.mark.parametrize("pins,reason", [({"nonsense": 1}, "unknown_field"), ({"tp": "x"}, "not_a_number"),
                                         ({"tp": 2.5}, "not_an_integer"), ({"zero": 4}, "unknown_choice"),
                                         ({"recompute": "some"}, "unknown_choice"),
                                         ({"sequence_parallel": 1}, "not_a_bool")])
def test_badly_typed_pins_are_errors(pins, reason):
    assert _error(GPT3, pins)["reason"] == reason


def test_recommend_raises_one_lab_input_error():
    with pytest.raises(LabInputError) as caught:
        recommend(Workload(**GPT3), {"tp": 3})
    assert caught.value.field == "tp" and "1, 2, 4, 8" in caught.value.allowed


def test_pins_in_inputs_or_argument_are_the_same():
    by_argument = plan_json(GPT3, {"tp": 4, "zero": 1})
    in_inputs = plan_json(dict(GPT3, pins={"tp": 4, "zero": 1}))
    assert by_argument == in_inputs
    plan = by_argument["plan"]
    assert plan["pins"] == {"tp": 4, "zero": 1}
    assert plan["parallelism"]["tp"] == 4 and plan["parallelism"]["zero"] == 1
    assert plan_json(GPT3)["plan"]["pins"] == {}


def test_every_pin_field_is_a_parallelism_field():
    par = recommend(Workload(**GPT3)).parallelism.to_dict()
    assert set(PIN_FIELDS) <= set(par)


def test_pins_of_the_unpinned_best_give_the_same_plan():
    w = Workload(**GPT3)
    free = recommend(w)
    pinned = recommend(w, {name: getattr(free.parallelism, name) for name in PIN_FIELDS})
    assert pinned.parallelism == free.parallelism
    assert pinned.goodput_tokens_per_s == free.goodput_tokens_per_s


def test_pinned_value_outside_the_searched_candidates_is_used():
    # 126 layers on 8 stages with NeMo's 15/15 ends is not a split the planner tries on its own.
    w = Workload(params=405e9, gpus=1024, gpu="h100_80gb", global_batch_tokens=512 * 8192, seq_len=8192,
                 layers=126, hidden=16384, heads=128, kv_heads=8, ffn_hidden=79872, vocab=128256, dropout=False)
    plan = recommend(w, {"pp": 8, "first_stage_layers": 15, "last_stage_layers": 15, "cp": 2})
    par = plan.parallelism
    assert (par.pp, par.first_stage_layers, par.last_stage_layers, par.cp) == (8, 15, 15, 2)


def test_nothing_fits_with_pins_gives_the_closest_plan_with_them():
    plan = recommend(Workload(params=1e12, gpus=8), {"tp": 8, "recompute": "full"})
    assert not plan.fits
    assert plan.parallelism.tp == 8 and plan.parallelism.recompute == "full"
    assert plan.no_fit["closest_parallelism"]["tp"] == 8
    assert plan.no_fit["min_gpus_layout"]["tp"] == 8
    assert plan.to_dict()["pins"] == {"tp": 8, "recompute": "full"}


def test_a_pinned_micro_batch_some_grids_cannot_split_into_still_answers():
    """8 sequences on 2 GPUs: micro-batch 8 runs only without data parallelism. With nothing
    fitting the search showed the least-memory grid's floor, a DP 2 grid at micro-batch 8,
    and evaluating it raised (found by random pins; 'micro_batch: 8 ... allowed: 1, 2, 4'
    came out of recommend() as if the reader's pin were wrong)."""
    w = Workload(params=538e6, gpus=2, inter_node_gbps=772.0, gpu="b200_192gb", stack="megatron_lm_2021",
                 seq_len=32768, global_batch_tokens=262144, layers=62, pipeline_schedule="dualpipev")
    plan = recommend(w, {"recompute": "none", "micro_batch": 8})
    assert plan.parallelism.micro_batch == 8 and plan.parallelism.dp == 1
    assert plan.parallelism.recompute == "none"


def test_a_micro_batch_the_pipeline_schedule_cannot_run_is_refused_by_name():
    """DualPipe needs an even count of micro-batches, at least 2 pp: with TP 8 and a first stage
    of 5 layers the pinned grids are pipelines whose replicas cannot run micro-batch 2. The
    pins were accepted and recommend() failed inside ('NoneType' has no attribute 'report');
    now the pin is refused with the sizes that run."""
    w = Workload(params=962e6, gpus=128, inter_node_gbps=25.8, gpu="a100_80gb", stack="torch_native",
                 flash_attention=False, seq_len=16384, global_batch_tokens=131072, pipeline_schedule="dualpipe")
    with pytest.raises(LabInputError) as info:
        recommend(w, {"micro_batch": 2, "tp": 8, "first_stage_layers": 5})
    assert info.value.field == "micro_batch" and info.value.reason == "inconsistent"
    allowed = [int(x) for x in info.value.allowed.split(", ")]
    assert 2 not in allowed
    plan = recommend(w, {"micro_batch": allowed[0], "tp": 8, "first_stage_layers": 5})
    assert plan.parallelism.micro_batch == allowed[0]


def _pinned_cases(n, seed):
    rng = random.Random(seed)
    kws = _workloads(8, 7) + NEW_DIMENSIONS[:8]
    out = []
    while len(out) < n:
        kw = rng.choice(kws)
        w = Workload(**kw)
        fitting, reports, _ = brute(w)
        plans = [par for par in reports]
        if not plans:
            continue
        par = rng.choice(plans)
        # The search's pins: recompute_layers is set on the search's plan afterwards (trim.py, tested there).
        names = rng.sample([name for name in PIN_FIELDS if name != "recompute_layers"], rng.choice([1, 2, 3]))
        out.append((kw, {name: getattr(par, name) for name in names}))
    return out


# One end of an uneven split pinned alone, at the value of a searched split whose other end is not
# the middle stages' share (found by random pins: both were refused as "not allowed").
ONE_END_PINNED = [
    # 30 layers on 4 stages: Megatron's embedding- and loss-aware split is 7, 8, 8, 7.
    (dict(params=296e9, gpus=16, inter_node_gbps=73.9, gpu="h800_80gb", stack="megatron_lm_2021", dropout=False,
          seq_len=8192, global_batch_tokens=385880, layers=30), {"pp": 4, "last_stage_layers": 7, "micro_batch": 47}),
    # 28 layers and three prediction modules on 4 stages: a split with layers moved from the last stage to the first.
    (dict(params=4.32e9, gpus=16, inter_node_gbps=130.0, flash_attention=False, gpu="h800_80gb", stack="modern",
          dropout=False, seq_len=512, global_batch_tokens=664233, mtp_layers=3),
     {"last_stage_layers": 6, "ep": 1, "pp": 4}),
]


def test_one_end_of_a_searched_split_can_be_pinned_alone():
    kw, pins = ONE_END_PINNED[0]
    plan = recommend(Workload(**kw), {"pp": 4, "last_stage_layers": 7})
    assert (plan.parallelism.first_stage_layers, plan.parallelism.last_stage_layers) == (7, 7)
    with pytest.raises(LabInputError) as info:
        recommend(Workload(**kw), {"pp": 4, "last_stage_layers": 8})
    assert "7" in info.value.allowed.split(", ")


@pytest.mark.parametrize("kw,pins", _pinned_cases(24, 5) + ONE_END_PINNED, ids=lambda x: str(x.get("gpus", x)))
def test_pinned_search_matches_exhaustive_search_over_pinned_plans(kw, pins):
    w = Workload(**kw)
    pinned = parse_pins(w, pins, space_for(w))
    result = search(w, pinned)
    fitting, _, _ = brute(w, pinned.grids(space_for(w), w.gpus))
    matching = [(g, par) for g, par, _ in fitting if pinned.match(par)]
    if not matching:
        assert result.chosen is None
        assert result.closest is None or pinned.match(result.closest.parallelism)
        return
    best = max(g for g, _ in matching)
    assert result.best.score == pytest.approx(best, rel=1e-12)
    assert pinned.match(result.chosen.parallelism)
    band = [par for g, par in matching if g >= best * (1.0 - TIE_TOLERANCE)]
    assert simplicity_key(result.chosen.parallelism) == min(simplicity_key(par) for par in band)
