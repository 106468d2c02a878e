"""Chinese text as the lab prints it: no space between two Chinese characters.

The Chinese catalogs write a space after each number they quote, as Chinese
text does before and after Latin ("2.3 GB 的"); when the number's unit is
Chinese ("2.26 秒"), that space ends up between two Chinese characters,
where Chinese puts none. The view takes those out once the numbers are in
(tighten). The build's data files use the same rule for YAML's folded lines
(build/labsite/folding.py).
"""
import re

# CJK ideographs and radicals, CJK punctuation, full-width forms.
CJK = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef"
_SPACE = re.compile(f"(?<=[{CJK}]) (?=[{CJK}])")


def each_string(node, change):
    """``node`` (a string, or dicts and lists of them) with ``change`` applied to every string."""
    if isinstance(node, str):
        return change(node)
    if isinstance(node, dict):
        return {key: each_string(value, change) for key, value in node.items()}
    if isinstance(node, list):
        return [each_string(value, change) for value in node]
    return node


def _tighten_text(text):
    return _SPACE.sub("", text)


def tighten(node):
    """``node`` (a string, or dicts and lists of them) with every space between two
    CJK characters taken out; other text (English, numbers, markup) is unchanged."""
    return each_string(node, _tighten_text)
