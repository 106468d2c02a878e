"""The lab's pipeline schedule panel draws the plan's own schedule, in both
languages: plain 1F1B, or interleaved 1F1B with the plan's model chunks, and
the bubble it quotes is the model's for the real p, m and v."""
import pytest

from lab_core import Parallelism, Workload, evaluate
from lab_view import Session
from lab_view.schedule import MAX_CHUNKS, render_schedule
from labsite.catalog import LANGUAGES, load_catalogs
from labsite.labpage import default_inputs, load_lab_layout, session_config
from lab_view.quantities import format_quantity

EXTRAS = {"rules_short": [], "rules_href": "../rules/"}
# 70B on 64 H100s (72 layers in the lab's shape): pipelines with several chunks per stage.
WORKLOAD = {"params": 70e9, "gpus": 64, "global_batch_tokens": 2 ** 21, "seq_len": 4096, "gpu": "h100_80gb"}


@pytest.fixture(scope="module")
def sessions():
    layout = load_lab_layout()
    return {lang: Session(session_config(layout, catalog, EXTRAS)) for lang, catalog in load_catalogs().items()}


def schedule_of(session, pins):
    result = session.evaluate(dict(default_inputs(), **WORKLOAD), pins=pins)
    assert result["ok"], result
    return result["view"]["schedule"], result


def bubble_text(session, pp, micro_batches, v):
    from lab_core.pipeline import bubble_fraction

    return format_quantity(bubble_fraction(pp, micro_batches, v), "percent", session.catalog["units"])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_interleaved_plan_is_drawn_interleaved(sessions, lang):
    session = sessions[lang]
    texts = session.catalog["lab"]["schedule"]
    schedule, result = schedule_of(session, {"tp": "8", "pp": "4", "interleave": "2", "micro_batch": "1"})
    micro = 2 ** 21 // 4096 // (64 // 32)
    assert result["view"]["plan"]["fits"]
    assert not schedule["single_chunk"]
    assert 'class="pp-fwd pp-chunk"' in schedule["svg"] and 'class="pp-bwd pp-chunk"' in schedule["svg"]
    assert texts["aria_interleaved"] in schedule["svg"]
    expected = texts["caption_interleaved"].format(p=4, m=f"{micro:,}", bubble=bubble_text(session, 4, micro, 2),
                                                   p_drawn=4, m_drawn=12, v=2, v_drawn=2)
    assert schedule["caption"] == expected


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_plain_pipeline_is_drawn_as_1f1b(sessions, lang):
    session = sessions[lang]
    texts = session.catalog["lab"]["schedule"]
    schedule, _ = schedule_of(session, {"tp": "8", "pp": "4", "interleave": "1", "micro_batch": "1"})
    micro = 2 ** 21 // 4096 // 2
    assert schedule["single_chunk"] and "pp-chunk" not in schedule["svg"]
    assert texts["aria"] in schedule["svg"]
    assert schedule["caption"] == texts["caption"].format(p=4, m=f"{micro:,}", bubble=bubble_text(session, 4, micro, 1),
                                                          p_drawn=4, m_drawn=12)


def test_many_chunks_are_drawn_as_two_and_the_caption_keeps_the_plans(sessions):
    session = sessions["en"]
    schedule, _ = schedule_of(session, {"tp": "8", "pp": "4", "interleave": "6", "micro_batch": "1"})
    assert "Interleaved 1F1B, 6 model chunks per GPU" in schedule["caption"]
    assert f"× {MAX_CHUNKS} chunks" in schedule["caption"]


@pytest.mark.parametrize("pp, micro_batches, v", [(16, 240, 2), (8, 8, 2), (4, 12, 3), (12, 24, 2)])
def test_the_drawing_has_every_chunk_of_every_micro_batch_drawn(pp, micro_batches, v):
    texts = load_catalogs()["en"]["lab"]["schedule"]
    svg, drawn = render_schedule(pp, micro_batches, texts, v)
    stages, micro, chunks = drawn["stages_drawn"], drawn["micro_drawn"], drawn["chunks_drawn"]
    assert stages == min(pp, 8) and chunks == min(v, MAX_CHUNKS) and micro % stages == 0 and micro <= 12
    # A forward and a backward block per micro-batch, chunk and stage; half of them on the lighter odd chunk.
    blocks = svg.count('class="pp-fwd') + svg.count('class="pp-bwd')
    assert blocks == 2 * stages * micro * chunks
    assert svg.count("pp-chunk") == stages * micro * 2 * (chunks // 2)


def test_the_interleaved_schedule_the_lab_draws_has_the_smaller_bubble():
    """The simulation behind the picture agrees with the model's bubble (arXiv:2104.04473 Sec 2.2.2):
    its idle share shrinks by the number of chunks."""
    from lab_view.schedule import interleaved_order, simulate, simulate_orders

    p, m, v = 4, 8, 2
    _, plain = simulate(p, m)
    _, interleaved = simulate_orders([interleaved_order(s, p, m, v) for s in range(p)], v)
    ideal = 3.0 * m
    assert (plain - ideal) / ideal == pytest.approx((p - 1) / m)
    assert (interleaved - ideal) / ideal == pytest.approx((p - 1) / (v * m))
    report = evaluate(Workload(params=70e9, gpus=64, global_batch_tokens=2 ** 21, seq_len=4096, gpu="h100_80gb"),
                      Parallelism(tp=8, pp=4, dp=2, micro_batch=1, interleave=2, zero=1, sequence_parallel=True))
    assert report.to_dict()["time"]["bubble_fraction"] == pytest.approx(3 / (2 * 256))
