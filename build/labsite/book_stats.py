"""How long each chapter is, as a reader sees it: English words and Chinese
characters (汉字) of the rendered prose — headings, sections, teaching
assumptions, figure captions, exercises and their answers, with every
placeholder filled; sources and the text drawn inside pictures not counted.

    python -m labsite.book_stats      # one line per chapter
"""
import html
import re

from .catalog import load_catalogs

_TAG = re.compile(r"<svg.*?</svg>|<[^>]+>", re.S)
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.\-/][A-Za-z0-9]+)*")
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")


def chapter_text(chapter, lang, catalog, chapters=None, tag=" "):
    """The chapter's reader-visible prose in ``lang`` as plain text (``chapters``: the book,
    for the words of chapter links; loaded when not given). Each HTML tag becomes ``tag``:
    a space keeps words apart for counting, nothing shows the text as a browser lays it out."""
    from .pages.tutorial import chapter_context, chapter_refs, load_chapters
    refs = chapter_refs(chapters or load_chapters(), catalog, lambda path: "../../" + path)
    context = chapter_context(chapter, lang, catalog, refs)
    pieces = []
    for section in context["sections"]:
        pieces += [section["heading"], section["body"], section["assumption"]]
        pieces += re.findall(r"<figcaption>(.*?)</figcaption>", section["figure"] + section["chart"], re.S)
    for exercise in context["exercises"]:
        pieces += [exercise["question"], exercise["answer"]]
    return html.unescape(_TAG.sub(tag, "\n".join(pieces)))


def english_words(text):
    return len(_WORD.findall(text))


def chinese_characters(text):
    return len(_HAN.findall(text))


def counts(chapters=None):
    """``{chapter id: (English words, Chinese characters, figures, exercises)}`` in reading order."""
    from .pages.tutorial import load_chapters
    catalogs = load_catalogs()
    result = {}
    chapters = chapters or load_chapters()
    for chapter in chapters:
        en = english_words(chapter_text(chapter, "en", catalogs["en"], chapters))
        zh = chinese_characters(chapter_text(chapter, "zh", catalogs["zh"], chapters))
        figures = sum(1 for section in chapter["sections"] if section.get("figure"))
        result[chapter["id"]] = (en, zh, figures, len(chapter.get("exercises") or []))
    return result


def main():
    print(f"{'chapter':<18}{'en words':>10}{'zh 汉字':>9}{'figures':>9}{'exercises':>11}")
    for chapter_id, (en, zh, figures, exercises) in counts().items():
        print(f"{chapter_id:<18}{en:>10,}{zh:>10,}{figures:>9}{exercises:>11}")


if __name__ == "__main__":
    main()
