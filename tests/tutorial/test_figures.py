"""The tutorial's figures: every kind draws in both languages from lab_core
numbers, deterministically, as SVG a screen reader can name and the
Content-Security-Policy allows (classes, never a style attribute)."""
import re

import pytest

from lab_core import memory, pipeline
from lab_view.schedule import gpipe_order, interleaved_order, simulate_orders, stage_order
from labsite.catalog import LANGUAGES, load_catalogs
from labsite.figures import FIGURE_KINDS, figure_params, figure_style, render_figure
from labsite.figures.ring_allreduce import ring_states

CATALOGS = load_catalogs()


def draw(kind, lang, **params):
    spec = {"kind": kind, "params": params}
    return render_figure(spec, figure_params("test", "here", spec), f"f-{kind}", CATALOGS[lang], "Caption", "Alt text")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("kind", sorted(FIGURE_KINDS))
def test_every_kind_draws_an_accessible_themed_svg(kind, lang):
    first = draw(kind, lang)
    assert first == draw(kind, lang)
    svg = re.search(r"<svg[^>]*>", first).group(0)
    assert 'role="img"' in svg and 'aria-labelledby="f-' in svg
    assert re.search(r"<title id=\"f-[^\"]+-title\">[^<]+</title><desc id=\"f-[^\"]+-desc\">Alt text</desc>", first)
    assert "<figcaption>Caption</figcaption>" in first
    assert "style=" not in first and not re.search(r"\b(nan|inf)\b", first)
    assert re.findall(r'class="([^"]+)"', first)


def test_the_figures_stylesheet_styles_by_class_and_follows_the_theme():
    css = figure_style()
    assert "currentColor" in css and "var(--md-default-fg-color)" in css
    for kind in FIGURE_KINDS.values():
        assert kind.css in css


def test_unknown_params_are_refused_with_the_allowed_list():
    with pytest.raises(Exception, match="unknown for kind schedule.*allowed: pp"):
        figure_params("file.yaml", "section x", {"kind": "schedule", "params": {"stages": 4}})


@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (4, 8, 3), (8, 16, 2), (4, 12, 4)])
def test_the_simulated_schedules_have_the_models_bubble(p, m, v):
    ideal = 3.0 * m
    _, one = simulate_orders([stage_order(s, p, m) for s in range(p)])
    _, gpipe = simulate_orders([gpipe_order(s, p, m) for s in range(p)])
    _, inter = simulate_orders([interleaved_order(s, p, m, v) for s in range(p)], v)
    assert (one - ideal) / ideal == pytest.approx(pipeline.bubble_fraction(p, m))
    assert (gpipe - ideal) / ideal == pytest.approx(pipeline.bubble_fraction(p, m))
    assert (inter - ideal) / ideal == pytest.approx(pipeline.bubble_fraction(p, m, v))


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_the_ring_ends_with_every_chunk_summed_everywhere(n):
    states = ring_states(n)
    assert len(states) == 2 * (n - 1) + 1
    after_reduce_scatter = states[n - 1][2]
    for rank in range(n):
        assert after_reduce_scatter[rank].count(n) == 1
    assert all(cell == n for row in states[-1][2] for cell in row)


def test_zero_figure_states_the_models_bytes():
    svg = draw("zero_stages", "en", params=7.5e9, dp=64)
    for stage in range(4):
        gb = memory.model_state_bytes_per_gpu(7.5e9, 16, 64, stage) / 1e9
        assert f"{gb:.3g} GB" in svg or f"{gb:.1f} GB" in svg or f"{round(gb)} GB" in svg
