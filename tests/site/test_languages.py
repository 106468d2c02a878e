"""Both languages complete: every built Chinese page's visible prose has no
run of five or more English words, and no English page shows Chinese text.

Left out, as the seed page does: code and preformatted text, formulas,
SVG, elements marked as another language (lang="en" on cited titles,
hreflang on the language switch), and attribute values. The seed's English
labels (Workload, the decision headings, the diagram's component names) are
short, and block boundaries end a run, so they never reach five words.
"""
import re
from html.parser import HTMLParser

import pytest

SKIPPED = {"code", "pre", "script", "style", "svg", "math", "kbd", "samp", "template", "title"}
INLINE = {"a", "abbr", "b", "cite", "em", "i", "mark", "q", "s", "small", "span", "strong", "sub", "sup", "u", "time"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
WORD = r"[A-Za-z][A-Za-z'’-]*"
ENGLISH_RUN = re.compile(rf"{WORD}(?:[ ,]+{WORD}){{4,}}")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]+")


class VisibleText(HTMLParser):
    """Runs of visible text of one language context; block boundaries split runs."""

    def __init__(self, page_lang):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.runs = [""]
        self.page_lang = page_lang

    def _hidden(self):
        return any(self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        a = dict(attrs)
        other_lang = (a.get("lang") or a.get("hreflang") or self.page_lang).split("-")[0] != self.page_lang
        classes = a.get("class") or ""
        hidden = tag in SKIPPED or other_lang or "arithmatex" in classes or "hidden" in a or a.get("aria-hidden") == "true"
        self.stack.append(hidden)
        if tag not in INLINE:
            self.runs.append("")

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if self.stack:
            self.stack.pop()
        if tag not in INLINE:
            self.runs.append("")

    def handle_data(self, data):
        if not self._hidden():
            self.runs[-1] += data


def visible_runs(path, lang):
    parser = VisibleText(lang)
    parser.feed(path.read_text(encoding="utf-8"))
    return [" ".join(run.split()) for run in parser.runs if run.strip()]


def pages(site, lang):
    chinese = site / "zh"
    if lang == "zh":
        return sorted(chinese.rglob("*.html"))
    return sorted(p for p in site.rglob("*.html") if chinese not in p.parents)


def other_language_runs(site, lang, pattern):
    """``pattern``'s matches in the visible text of every ``lang`` page, named by page."""
    return [f"{path.relative_to(site)}: {m.group(0)}" for path in pages(site, lang)
            for run in visible_runs(path, lang) for m in pattern.finditer(run)]


def test_chinese_pages_have_no_english_prose(built_site):
    assert other_language_runs(built_site, "zh", ENGLISH_RUN) == []


def test_english_pages_have_no_chinese_text(built_site):
    assert other_language_runs(built_site, "en", CJK) == []


@pytest.mark.parametrize("html, lang, english, chinese", [
    ("<p>这是 tensor parallelism 的例子</p>", "zh", [], ["这是", "的例子"]),
    ("<p>end of the first epoch today</p>", "zh", ["end of the first epoch today"], []),
    ("<p><cite lang='en'>Scaling Laws for Neural Language Models</cite> 第 2 节</p>", "zh", [], ["第", "节"]),
    ("<ul><li>Token corpus</li><li>Data loaders</li><li>Training mesh</li></ul>", "zh", [], []),
    ("<p>Made with <a href='#'>Material for MkDocs</a></p>", "zh", ["Made with Material for MkDocs"], []),
])
def test_the_scan_sees_what_a_reader_sees(tmp_path, html, lang, english, chinese):
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    runs = visible_runs(page, lang)
    assert [m.group(0) for r in runs for m in ENGLISH_RUN.finditer(r)] == english
    assert [m.group(0) for r in runs for m in CJK.finditer(r)] == chinese
