"""Line breaks inside Chinese text of the YAML data files.

YAML turns each line break of a folded or multi-line plain scalar into a
space, and Markdown shows a line break inside a paragraph as one. Chinese puts
no space between its characters or after its punctuation, so such a space or
break is the file's layout, not the writer's (a space between Chinese and
Latin text is the writer's, and stays). Every loader of Chinese text takes
the spaces out (lab_view.chinese.tighten), so a writer may wrap lines
anywhere; Markdown prose also loses the line breaks (cjk_tidy).
"""
import re

from lab_view.chinese import CJK as _CJK, each_string, tighten

# Full-width punctuation: after it a Chinese line never has a space.
_FULL_WIDTH_PUNCT = "，。、；：？！（）“”‘’《》【】——…"
# Line breaks only: the spaces between two CJK characters are lab_view.chinese.tighten's.
_CJK_BREAK = re.compile(f"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])"
                        # not before a line that starts a list item, table row, quote or heading
                        f"|(?<=[{_FULL_WIDTH_PUNCT}])[ \t]*\n[ \t]*(?![-+*] |\\d+\\. |[|>#])(?=\\S)")


def unfold_zh(node):
    """``node`` with the spaces between two Chinese characters taken out of the value
    of every ``zh`` key in it (a bilingual file; lab_view.chinese.tighten: line
    breaks a text means, such as a two-line figure label, stay)."""
    if isinstance(node, dict):
        return {key: tighten(value) if key == "zh" else unfold_zh(value) for key, value in node.items()}
    if isinstance(node, list):
        return [unfold_zh(value) for value in node]
    return node


def cjk_tidy(node):
    """Chinese Markdown prose: drop the spaces and line breaks between two CJK
    characters or after full-width punctuation (a browser would show them as
    spaces); dicts and lists recursed."""
    return each_string(tighten(node), lambda text: _CJK_BREAK.sub("", text))
