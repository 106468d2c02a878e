"""The "model vs published runs" page's notes take the errors they quote from
the rows they sit under (pages.validation.fill_note), in both languages; a note
whose prose no longer matches its rows stops the build with its place."""
import re

import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from labsite.pages.validation import fill_note
from labtest import language_dir

PLACEHOLDER = re.compile(r"\{(?:err|range|most):[^}]*\}")


def _row(model, gpus, error, **variants):
    return {"model": model, "gpus": gpus, "error_value": error, "variants": variants}


ROWS = [_row("DeepSeek-V3", 256, -14.61, slow=-30.1), _row("GPT-OSS-120B", 64, 9.74, slow=-5.2),
        _row("Qwen3-30B-A3B", 8, 62.79, slow=-6.7), _row("DeepSeek-V3", 1024, -10.25, slow=-17.2)]


def test_figures_come_from_the_rows():
    assert fill_note("{err:+Qwen3-30B-A3B}% fast, {err:-DeepSeek-V3@256}% slow", ROWS, "g") == "63% fast, 15% slow"
    assert fill_note("{range:-DeepSeek-V3}%", ROWS, "g") == "10–15%"
    assert fill_note("up to {most:+}%", ROWS, "g") == "up to 63%"
    assert fill_note("{range:±}%", ROWS, "g") == "10–63%"
    assert fill_note("{range:-}%", ROWS[:1], "g") == "15%"
    assert fill_note("no figures: 57% faster", ROWS, "g") == "no figures: 57% faster"
    # ~VARIANT: the rows re-run with a variant of their group's settings.
    assert fill_note("{range:-~slow}%, {err:-DeepSeek-V3@1024~slow}%", ROWS, "g") == "5–30%, 17%"


@pytest.mark.parametrize("note, message", [
    ("{err:-Qwen3-30B-A3B}", "says the lab misses below the published figure, but Qwen3-30B-A3B on 8 GPUs is +62.8%"),
    ("{range:-}", "GPT-OSS-120B on 64 GPUs is +9.7%"),
    ("{err:-DeepSeek-V3}", "names 2 rows"),
    ("{err:+Mixtral}", "names 0 rows"),
    ("{err:+Qwen3-30B-A3B@16}", "names 0 rows"),
    ("{err:+Qwen3-30B-A3B~slow}", "but Qwen3-30B-A3B on 8 GPUs is -6.7% with slow"),
    ("{range:-~fast}", "the group has no variant 'fast'"),
])
def test_a_note_that_no_longer_matches_its_rows_stops_the_build(note, message):
    with pytest.raises(ValueError) as caught:
        fill_note(note, ROWS, "mbridge_2604_moe")
    assert "validation note mbridge_2604_moe: " in str(caught.value) and message in str(caught.value)


def test_each_note_quotes_the_same_figures_in_every_language():
    notes = {lang: load_catalogs()[lang]["validation"]["notes"] for lang in LANGUAGES}
    quoted = 0
    for key, text in notes[LANGUAGES[0]].items():
        figures = PLACEHOLDER.findall(text)
        quoted += len(figures)
        for lang in LANGUAGES[1:]:
            assert sorted(PLACEHOLDER.findall(notes[lang][key])) == sorted(figures), (lang, key)
    assert quoted >= 10


def test_the_built_page_shows_figures_not_placeholders(built_site):
    for lang in LANGUAGES:
        html = (language_dir(built_site, lang) / "validation" / "index.html").read_text(encoding="utf-8")
        assert not PLACEHOLDER.search(html), lang
        assert re.search(r"\d+–\d+%", html), lang


def test_a_variant_is_the_row_re_run_with_the_group_settings_and_its_own():
    """end_to_end.yaml `variants`: a group's what-if settings, refined per row (fms_fsdp reads each row's
    network per GPU); the row's variant error is that run's, evaluated by the model like any row."""
    from labsite.validation.runs import end_to_end_runs, end_to_end_rows
    from labsite.validation.table import error_percent
    runs = [run for run in end_to_end_runs() if run.group["id"] in ("fms_fsdp", "moe_mbridge_h100_pred")]
    rows = end_to_end_rows(runs)
    for run, row in zip(runs, rows):
        for name in run.group["variants"]:
            again = run.variant(name)
            assert row.page.variants[name] == pytest.approx(error_percent(again.predicted(), run.published))
            assert row.page.variants[name] != pytest.approx(row.error)
    speeds = {run.spec["gpus"]: (run.spec["inter_node_gbps"], run.variant("per_gpu_nic").spec["inter_node_gbps"])
              for run in runs if run.group["id"] == "fms_fsdp"}
    assert speeds == {96: (100, 800), 128: (50, 400)}
    assert [run.variant("per_node").spec["moe_dispatcher"] for run in runs
            if run.group["id"] == "moe_mbridge_h100_pred"] == ["per_node"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_row_label_names_context_and_expert_parallelism(lang):
    """A row's layout is tp x cp x pp x dp: Llama 3's 128K row is told from its 8K row on the
    same 16,384 GPUs by its CP 16, DeepSeek-V3's by its EP 64 (labels without them read as
    TP x PP alone)."""
    from labsite.pages.validation import row_view
    from labsite.validation.runs import end_to_end_rows

    catalog = load_catalogs()[lang]
    rows = end_to_end_rows()
    for row in rows:
        label = row.page.label
        quantity = row_view(row, lang, catalog)["quantity"]
        if "tp" not in label or "{tp}" not in catalog["validation"]["quantities"][row.page.quantity]:
            continue
        for dim in ("cp", "ep"):
            size = label.get(dim) or 1
            assert (f"{dim.upper()} {size:,}" in quantity) == (size > 1), (quantity, label)
    llama3 = [row_view(row, lang, catalog)["quantity"] for row in rows if row.page.group == "llama3"]
    assert len(set(llama3)) == len(llama3)
