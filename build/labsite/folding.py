"""Line breaks inside Chinese text of the YAML data files.

YAML turns each line break of a folded or multi-line plain scalar into a space.
Chinese puts no space between its characters or after its punctuation, so a
space with one on either side is the fold's, not the writer's (a space between
Chinese and Latin text is the writer's, and stays). Every loader of Chinese
text takes them out, so a writer may wrap lines anywhere.
"""
import re

_CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
_FOLD_SPACE = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")


def unfold_chinese(node):
    """``node`` with the fold spaces taken out of every string in it (a Chinese catalog)."""
    if isinstance(node, str):
        return _FOLD_SPACE.sub("", node)
    if isinstance(node, dict):
        return {key: unfold_chinese(value) for key, value in node.items()}
    if isinstance(node, list):
        return [unfold_chinese(value) for value in node]
    return node


def unfold_zh(node):
    """``node`` with unfold_chinese applied to the value of every ``zh`` key in it (a bilingual file)."""
    if isinstance(node, dict):
        return {key: unfold_chinese(value) if key == "zh" else unfold_zh(value) for key, value in node.items()}
    if isinstance(node, list):
        return [unfold_zh(value) for value in node]
    return node
