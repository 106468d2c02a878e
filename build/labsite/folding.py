"""Line breaks inside Chinese text of the YAML data files.

YAML turns each line break of a folded or multi-line plain scalar into a
space, and Markdown shows a line break inside a paragraph as one. Chinese puts
no space between its characters or after its punctuation, so such a space or
break is the file's layout, not the writer's (a space between Chinese and
Latin text is the writer's, and stays). Every loader of Chinese text takes
the spaces out (unfold_chinese), so a writer may wrap lines anywhere; Markdown
prose also loses the line breaks (cjk_tidy).
"""
import re

_CJK = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef"
# Full-width punctuation: after it a Chinese line never has a space.
_FULL_WIDTH_PUNCT = "，。、；：？！（）“”‘’《》【】——…"
_CJK_SPACE = re.compile(f"(?<=[{_CJK}]) (?=[{_CJK}])")
_CJK_BREAK = re.compile(f"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])|(?<=[{_CJK}]) (?=[{_CJK}])"
                        # not before a line that starts a list item, table row, quote or heading
                        f"|(?<=[{_FULL_WIDTH_PUNCT}])[ \t]*\n[ \t]*(?![-+*] |\\d+\\. |[|>#])(?=\\S)")


def _each_string(node, change):
    """``node`` with ``change`` applied to every string in it (dicts and lists recursed)."""
    if isinstance(node, str):
        return change(node)
    if isinstance(node, dict):
        return {key: _each_string(value, change) for key, value in node.items()}
    if isinstance(node, list):
        return [_each_string(value, change) for value in node]
    return node


def unfold_chinese(node):
    """``node`` with the spaces between two Chinese characters taken out of every
    string (line breaks a text means, such as a two-line figure label, stay)."""
    return _each_string(node, lambda text: _CJK_SPACE.sub("", text))


def unfold_zh(node):
    """``node`` with unfold_chinese applied to the value of every ``zh`` key in it (a bilingual file)."""
    if isinstance(node, dict):
        return {key: unfold_chinese(value) if key == "zh" else unfold_zh(value) for key, value in node.items()}
    if isinstance(node, list):
        return [unfold_zh(value) for value in node]
    return node


def cjk_tidy(node):
    """Chinese Markdown prose: drop the spaces and line breaks between two CJK
    characters or after full-width punctuation (a browser would show them as
    spaces)."""
    return _each_string(node, lambda text: _CJK_BREAK.sub("", text))
