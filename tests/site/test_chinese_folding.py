"""Line breaks inside Chinese text of the YAML files (labsite.folding): YAML
turns each into a space, which Chinese does not put between its characters.
The loaders take them out, so a writer may wrap Chinese lines anywhere; a
space between Chinese and Latin text is the writer's and stays."""
import pytest

from labsite.bilingual import load_yaml
from labsite.catalog import _flatten, load_catalogs
from labsite.folding import unfold_zh
from labsite.pages.rules import ASSUMPTIONS_FILE, RULES_FILE
from labsite.scenarios import load_scenarios
from labsite.tutorial import chapter_files
from labtest import spaces_between_chinese, strings_in
from lab_view.chinese import tighten

@pytest.mark.parametrize("folded,read", [
    ("论文还会在 每个 stage 的输入", "论文还会在每个 stage 的输入"),
    ("以 FP32 累加。 以下是假设", "以 FP32 累加。以下是假设"),
    ("用十进制 GB 表示 （1 GB = 10⁹ bytes）", "用十进制 GB 表示（1 GB = 10⁹ bytes）"),
    ("对 TP 只字未提，而 PyTorch 的 tensor", "对 TP 只字未提，而 PyTorch 的 tensor"),
    ("two English  words", "two English  words"),
])
def test_a_fold_space_between_chinese_goes_and_one_beside_latin_stays(folded, read):
    assert tighten(folded) == read


def test_only_the_chinese_of_a_bilingual_node_is_unfolded():
    node = {"en": "a 中 文", "zh": "中 文", "items": [{"zh": "更 多", "en": "更 多"}], "n": 3}
    assert unfold_zh(node) == {"en": "a 中 文", "zh": "中文", "items": [{"zh": "更多", "en": "更 多"}], "n": 3}


def _chinese(node):
    """Every string under a "zh" key of a bilingual node."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from (strings_in(value) if key == "zh" else _chinese(value))
    elif isinstance(node, list):
        for value in node:
            yield from _chinese(value)


def test_the_chinese_catalogs_read_unfolded():
    texts = list(strings_in(list(_flatten(load_catalogs()["zh"]).values())))
    assert texts and spaces_between_chinese(texts) == []


def test_the_bilingual_files_read_unfolded():
    texts = [text for path in (RULES_FILE, ASSUMPTIONS_FILE, *chapter_files()) for text in _chinese(load_yaml(path))]
    assert texts and spaces_between_chinese(texts) == []


def test_the_scenarios_read_unfolded():
    texts = [scenario.text(name, "zh") for scenario in load_scenarios()
             for name in ("title", "summary", "narrative", "notes") if scenario.text(name, "zh")]
    assert texts and spaces_between_chinese(texts) == []
