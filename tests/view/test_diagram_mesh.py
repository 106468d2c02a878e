"""The whiteboard mesh draws context and expert parallelism, not only TP x PP x DP:
CP as rows of sequence shards in each stage, one expert-parallel group as a
dashed outline whose extent follows the folding of EP into TP x CP x DP."""
import re

import pytest

from lab_view.diagram import MAX_SEQUENCE_ROWS, MAX_SHARDS, render_mesh
from labsite.catalog import load_catalogs


@pytest.fixture(scope="module")
def texts():
    return load_catalogs()["en"]["diagram"]


def _rects(svg, cls):
    return [dict((k, float(v)) for k, v in re.findall(r' (x|y|width|height)="([0-9.]+)"', m))
            for m in re.findall(rf'<rect class="{cls}"([^>]*)/>', svg)]


def _stages(svg):
    return len(re.findall(r'<g class="wb-stage"', svg))


@pytest.mark.parametrize("tp, cp", [(1, 1), (8, 1), (8, 16), (2, 2), (4, 8)])
def test_each_stage_has_tp_shards_in_cp_rows(texts, tp, cp):
    svg = render_mesh(tp, 4, 2, texts, cp=cp)
    per_stage = min(tp, MAX_SHARDS) * min(cp, MAX_SEQUENCE_ROWS)
    assert len(_rects(svg, "wb-shard")) == per_stage * _stages(svg)
    rows = {r["y"] for r in _rects(svg, "wb-shard")}
    assert len(rows) == min(cp, MAX_SEQUENCE_ROWS) * 4


def test_no_expert_outline_without_expert_parallelism(texts):
    assert not _rects(render_mesh(8, 8, 16, texts, cp=2, ep=1), "wb-ep")


def test_expert_group_inside_a_replica_covers_part_of_its_stage(texts):
    svg = render_mesh(8, 4, 8, texts, ep=4)
    (group,) = _rects(svg, "wb-ep")
    (box,) = _rects(svg, "wb-replica-box")[:1]
    assert group["width"] < box["width"] / 2 + 6


def test_expert_group_across_replicas_spans_columns_but_not_the_last_unless_all(texts):
    some = _rects(render_mesh(1, 16, 128, texts, ep=16), "wb-ep")[0]
    everyone = _rects(render_mesh(2, 8, 32, texts, ep=64), "wb-ep")[0]
    boxes = _rects(render_mesh(1, 16, 128, texts, ep=16), "wb-replica-box")
    last = boxes[-1]
    assert some["x"] + some["width"] < last["x"]
    assert everyone["x"] + everyone["width"] > last["x"] + last["width"] / 2


def _caption_ys(svg):
    return [float(y) for y in re.findall(r'<text class="wb-caption" x="[0-9.]+" y="([0-9.]+)"', svg)]


@pytest.mark.parametrize("pp", [1, 2, 4, 5, 16, 126])
def test_replica_numbers_sit_below_the_stages_inside_the_box(texts, pp):
    """The replica's number (#1, #2, ...) is a 16-unit caption whose glyphs stand about
    12 units above its baseline: with the stage column full (five rows, the last elided)
    it once touched the lowest stage's border."""
    svg = render_mesh(2, pp, 64, texts)
    lowest = max(r["y"] + r["height"] for r in _rects(svg, "wb-stage-box"))
    box = _rects(svg, "wb-replica-box")[0]
    for baseline in _caption_ys(svg):
        assert baseline - 12.0 >= lowest + 4.0
        assert baseline + 4.0 <= box["y"] + box["height"]


@pytest.mark.parametrize("dp", [1, 2, 3, 64])
def test_replica_outlines_stay_inside_the_frame(texts, dp):
    """The outermost replicas' outlines (1.5-unit strokes) are drawn whole: the frame clipped
    half of the first column's left side and the last column's right side."""
    from lab_view.diagram import VIEW_H, VIEW_W

    for box in _rects(render_mesh(2, 4, dp, texts), "wb-replica-box"):
        assert box["x"] >= 0.75 and box["y"] >= 0.75
        assert box["x"] + box["width"] <= VIEW_W - 0.75 and box["y"] + box["height"] <= VIEW_H - 0.75
