"""The figure kinds of chapters 7-12 draw what their chapters state: the
load-balanced context-parallel split gives every GPU the same attention
blocks, the all-to-all shares add up, the packing figure's masked share is the
chapter's FLOP share, the mesh outlines one node per gpus_per_node / tp
replicas, and the checkpoint timeline is drawn to scale."""
import re

import pytest

from labsite.catalog import load_catalogs
from labsite.figures import figure_params, render_figure
from labsite.figures.context_parallel import blocks_per_gpu, owner
from labsite.figures.moe_alltoall import link_shares
from labsite.tutorial_values import chapter_data

CATALOGS = load_catalogs()


def draw(kind, lang="en", **params):
    spec = {"kind": kind, "params": params}
    return render_figure(spec, figure_params("test", "here", spec), f"f-{kind}", CATALOGS[lang], "Caption", "Alt")


@pytest.mark.parametrize("cp", [2, 3, 4, 5, 6])
def test_the_causal_split_is_balanced(cp):
    counts = blocks_per_gpu(cp)
    assert len(set(counts)) == 1
    assert sorted(owner(c, cp) for c in range(2 * cp)) == sorted(list(range(cp)) * 2)


@pytest.mark.parametrize("ep,gpn", [(8, 8), (16, 8), (64, 8), (32, 4)])
def test_the_alltoall_shares_add_up(ep, gpn):
    kept, nvlink, fabric = link_shares(ep, gpn)
    assert kept + nvlink + fabric == pytest.approx(1.0)
    svg = draw("moe_alltoall", ep=ep, gpus_per_node=gpn)
    cells = re.findall(r'<rect class="(fig-empty|tc-s0|tc-s1)" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="[\d.]+" rx="0.0"', svg)
    assert cells.count("tc-s1") == ep * ep * fabric and cells.count("fig-empty") == ep


def test_the_packing_figure_states_the_chapters_share():
    values = chapter_data("data").values
    svg = draw("packing", seq=values["pk_seq"][0], docs=values["pk_docs"][0])
    share = values["pk_masked_share"][0] * 100
    assert f"{share:.3g}%" in svg


@pytest.mark.parametrize("tp,gpn,nodes", [(8, 8, 4), (4, 8, 2), (2, 8, 1)])
def test_the_mesh_outlines_nodes_of_whole_replicas(tp, gpn, nodes):
    svg = draw("mesh", tp=tp, pp=2, dp=4, gpus_per_node=gpn, max_replicas=4)
    outlines = re.findall(r'<rect class="mesh-node"[^>]*rx="6.0"', svg)
    assert len(outlines) == 2 * nodes


def test_the_checkpoint_timeline_is_to_scale():
    svg = draw("checkpoint_timeline", interval_s=1800.0, write_s=600.0, restart_s=600.0, failure_at=0.5)
    first = {}
    for cls, width in re.findall(r'<rect class="([a-z0-9-]+)" x="[\d.]+" y="[\d.]+" width="([\d.]+)"', svg):
        first.setdefault(cls, float(width))
    # A write of a third of an interval is drawn a third as wide as the interval before it.
    assert first["tc-s1"] / first["tc-s0"] == pytest.approx(1 / 3, rel=0.02)
