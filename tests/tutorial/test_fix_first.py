"""The "fix first" findings of issue 17 on chapters 5-9 and the chapters added
with them, each as a check that would have caught it:

- a conclusion written as fixed text around a computed number ("the GPUs would
  need 0.95 times what the loaders deliver, and the whole cluster would wait");
- a small share printed as 0% ("100 GB per second of storage read bandwidth (0%)");
- a running example that disagrees with its published run (a 413B, 128-layer
  "Llama 3 405B"; the scenario has 126 layers);
- a sentence starting in lower case;
- the Young/Daly goodput chart drawn past the mean time to interrupt, where
  the first-order model does not hold;
- a system named in the prose but missing from the sources (CheckFreq), and a
  citation of a section that does not cover the claim (Narayanan et al. §5 for
  data loading).
"""
import html
import re

import pytest

from labsite import book_stats
from labsite.catalog import load_catalogs
from labsite.pages.tutorial import chapter_context, format_value, load_chapters
from labsite.scenarios import load_scenario
from labsite.tutorial_values import chapter_data

CHAPTERS = load_chapters()
CATALOGS = load_catalogs()
IDS = [chapter["id"] for chapter in CHAPTERS]
BY_ID = dict(zip(IDS, CHAPTERS))


def test_the_loader_sentences_follow_the_ratio():
    values = chapter_data("data").values
    for ratio, verdict in (("loader_ratio", "loader_verdict"), ("slow_ratio", "slow_verdict")):
        expected = "keeps_up" if values[ratio][0] <= 1.0 else "starved"
        assert values[verdict][0].key == expected, (ratio, values[ratio][0])
    page = chapter_context(BY_ID["data"], "en", CATALOGS["en"])
    text = " ".join(s["body"] for s in page["sections"])
    cases = BY_ID["data"]["cases"]["slow_verdict"]
    chosen = values["slow_verdict"][0].key
    other = next(key for key in cases if key != chosen)
    assert cases[chosen]["en"].split("{")[0].strip() in html.unescape(text)
    assert cases[other]["en"].split("{")[0].strip() not in html.unescape(text)


@pytest.mark.parametrize("value,shown", [(0.00053, "0.053%"), (0.0000123, "0.0012%"), (0.0123, "1.23%"), (0.0, "0%")])
def test_small_shares_keep_their_digits(value, shown):
    assert format_value(value, "percent", CATALOGS["en"]["units"]) == shown


@pytest.mark.parametrize("chapter_id", IDS)
def test_no_nonzero_share_is_printed_as_zero(chapter_id):
    units = CATALOGS["en"]["units"]
    zero = units["percent"].format(n="0")
    for name, (value, kind) in chapter_data(chapter_id).values.items():
        if kind == "percent" and value != 0.0:
            assert format_value(value, kind, units) != zero, (chapter_id, name, value)


def test_chapter_8_runs_the_published_llama_3_405b():
    published = load_scenario("llama3-405b").workload
    values = chapter_data("failures").values
    assert values["layers"][0] == published["layers"]
    workload = chapter_data("failures").workload
    for name in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "gpus"):
        assert workload[name] == published[name], name


_LOWER_START = re.compile(r"(?<![A-Z][a-z])(?<!et al)(?<!e\.g)(?<!i\.e)[.!?]\s+([a-z][a-z]+)\b")


def _prose_without_code_and_links(chapter, lang):
    context = chapter_context(chapter, lang, CATALOGS[lang])
    parts = [s["heading"] + " " + s["body"] + " " + s["assumption"] for s in context["sections"]]
    parts += [e["question"] + " " + e["answer"] for e in context["exercises"]]
    text = " ".join(parts)
    # Code spans and chapter links stand for names (bf16, nccl-tests, "chapter 7"): not sentence words.
    text = re.sub(r"<code>.*?</code>|<a [^>]*>.*?</a>", "X", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


BOOK_B = ("pipeline", "activations", "three_d", "failures", "data", "long_context", "moe", "design")


@pytest.mark.parametrize("chapter_id", BOOK_B)
def test_sentences_start_with_a_capital(chapter_id):
    text = _prose_without_code_and_links(BY_ID[chapter_id], "en")
    found = [text[max(0, m.start() - 25):m.end() + 10] for m in _LOWER_START.finditer(text)]
    assert not found, found[:3]


def test_the_lower_case_check_catches_what_it_looks_for():
    assert _LOWER_START.search("a stage. the pre-training of Llama 3")
    assert not _LOWER_START.search("Narayanan et al. showed it. The next")


@pytest.mark.parametrize("chapter_id", ["failures"])
def test_goodput_charts_stop_at_the_mean_time_to_interrupt(chapter_id):
    data = chapter_data(chapter_id)
    mtti_minutes = data.values["mtti"][0] / 60.0
    lines = [chart for chart in data.charts if chart["type"] == "line"]
    assert lines
    for chart in lines:
        for series in chart["series"]:
            limit = series.get("label_values", {}).get("mtti", (mtti_minutes * 60.0,))[0] / 60.0
            assert max(x for x, _ in series["points"]) <= limit * (1 + 1e-9), (chart["id"], series)
            assert max(x for x, _ in series["points"]) >= limit * (1 - 1e-9), "the curve reaches M"


# Names that are products, companies, formats or people, not publications a claim rests on.
NOT_PUBLICATIONS = {"ByteDance", "DeepSeek", "DeepSpeed", "GeLU", "GeLUs", "InfiniBand", "NaN", "NaNs", "NeMo",
                    "PyTorch", "RoCE", "SwiGLU", "ZeRO", "MoE", "Megatron-Core", "Megatron-LM", "Megatron-Bridge",
                    "McCandlish", "NVLink", "FlashAttention", "PaLM", "Tectonic"}
_CAMEL = re.compile(r"\b[A-Z][a-z]+[A-Z][A-Za-z]*\b|\b[A-Z][a-z]+-[A-Z]\w*\b")


@pytest.mark.parametrize("chapter_id", BOOK_B)
def test_every_system_named_in_the_prose_is_a_source(chapter_id):
    chapter = BY_ID[chapter_id]
    cited = " ".join(s["name"] + " " + str(s["where"]) for s in chapter["sources"])
    text = book_stats.chapter_text(chapter, "en", CATALOGS["en"], CHAPTERS)
    named = {m.group(0) for m in _CAMEL.finditer(text)} - NOT_PUBLICATIONS
    missing = sorted(name for name in named if name not in cited)
    assert not missing, f"named in the prose but not among the sources: {missing}"


def test_the_named_system_check_would_have_caught_checkfreq():
    assert _CAMEL.search("snapshot state (CheckFreq, GEMINI, MegaScale)").group(0) == "CheckFreq"


def test_the_data_chapter_cites_no_section_about_something_else():
    # Narayanan et al. (arXiv:2104.04473) has no data-loading section; its §5 is the evaluation.
    cited = {source["id"] for source in BY_ID["data"]["sources"]}
    assert "arXiv:2104.04473" not in cited
