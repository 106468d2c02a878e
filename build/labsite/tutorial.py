"""The tutorial's chapters: bilingual text in content/tutorial/*.yaml, numbers
from lab_core (the tutorial_values package), checked so that no number is typed by hand.

A chapter file carries both languages side by side (as content/rules.yaml
does), so a section cannot exist in one language only:

    id: memory                      # names the function in tutorial_values.CHAPTERS
    sections:
      - id: weights                 # anchor id, identical in both languages
        heading: {en: ..., zh: ...}
        body: {en: ..., zh: ...}    # Markdown; {name} = a lab_core value
        assumption: {en: ..., zh: ...}   # optional: a labelled teaching assumption
        chart: memory               # optional: a chart of the chapter, drawn after the body
    cases:                          # optional: text that depends on a computed number
      loader_verdict:               # tutorial_values returns ("keeps_up", "case") for it
        keeps_up: {en: ..., zh: ...}
        starved: {en: ..., zh: ...}
    sources:
      - {name: ..., id: "arXiv:1910.02054", where: "§5.1, Fig. 1", url: "https://arxiv.org/abs/1910.02054"}

A sentence that states a conclusion depends on the number behind it ("the
loaders keep up" only while the ratio is below one), so it is a case: the
chapter's function picks the case from the number and the page shows that
case's text, whose own {placeholders} are filled like the body's.

What counts as a hand-typed number (``hand_typed_numbers``): any digit in the
prose except inside ``{placeholders}`` (filled by lab_core), inside backticks
(formulas and code, e.g. `s·b·h·(34 + 5·a·s/h)`), in a citation (arXiv ids,
doi:…, "Table 2", "Fig. 1", "Eq. 4", "§3.1", "Sec. 5", "Appendix A", 表 5,
图 1, 式 7, 第 N 节), or in a name: a word that joins letters and digits
(A100, H100, fp32, bf16, 1F1B, 3D, ZeRO-3), GPT-3, Llama 3, "stage N" /
"N-bit" (names of ZeRO stages and number formats).
"""
import re
import string
from pathlib import Path

from .bilingual import load_yaml, require_languages
from .catalog import LANGUAGES
from .errors import BuildError
from .paths import CONTENT

CHAPTER_DIR = CONTENT / "tutorial"
SOURCE_URL = re.compile(r"^https://(arxiv\.org/abs/\d{4}\.\d{4,5}(v\d+)?|doi\.org/10\.\d{4,9}/\S+)$")
SECTION_ID = re.compile(r"^[a-z][a-z0-9_-]*$")

_ALLOWED = [
    r"\{[a-z0-9_]+\}",                                   # lab_core placeholders
    r"`[^`]*`",                                          # formulas and code
    r"arXiv:\d{4}\.\d{4,5}(v\d+)?",                      # citations
    r"doi:\S+",
    r"\b(Tables?|Fig\.|Figs\.|Figure|Figures|Eq\.|Eqs\.|Sec\.|Section|Appendix|Chapter)\s*[A-Z]?\d+(\.\d+)*[a-z]?"
    r"(\s*(,|and|–|-|/)\s*[A-Z]?\d+(\.\d+)*)*",
    r"§\s*\d+(\.\d+)*",
    r"[(（](19|20)\d\d[)）]",                           # publication years: Young (1974)
    r"(表|图|式|公式|附录)\s*[A-Z]?\d+(\.\d+)*",
    r"第\s*\d+\s*(节|章)",
    r"\bGPT-\d\b", r"\bLlama\s?\d\b", r"\b[Ss]tages?[\s-]\d(\s?(–|-|/|,|and|和|到|至|、)\s?\d)*\b", r"\b\d+-bit\b",
    r"阶段\s?\d", r"\bZeRO-\d\b",
    r"\b[A-Za-z]+\d+[A-Za-z0-9]*\b",                     # A100, H100, fp32, bf16, NVLink4
    r"\b(1F1B|[234]D)\b",                               # schedule and parallelism names
]
_ALLOWED_RE = re.compile("|".join(f"(?:{p})" for p in _ALLOWED), re.ASCII)
_DIGIT = re.compile(r"[0-9０-９⁰¹²³⁴⁵⁶⁷⁸⁹]")


def hand_typed_numbers(text):
    """Snippets of ``text`` that contain a digit outside the allowed zones."""
    stripped = _ALLOWED_RE.sub(lambda m: " " * len(m.group(0)), text)
    found = []
    for match in _DIGIT.finditer(stripped):
        start = max(0, match.start() - 20)
        found.append(text[start:match.end() + 20].replace("\n", " "))
    return found


def placeholders(text):
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def chapter_files():
    return sorted(CHAPTER_DIR.glob("[0-9][0-9]-*.yaml"))


def _check_text(path, node, here, values):
    """No hand-typed number, and every placeholder computed (when ``values`` is given)."""
    for lang in LANGUAGES:
        bad = hand_typed_numbers(node[lang])
        if bad:
            raise BuildError(path, f"{here}.{lang}: hand-typed number in “{bad[0]}” — "
                                   "compute it in labsite/tutorial_values/ and use a {placeholder}")
        if values is not None:
            missing = placeholders(node[lang]) - set(values)
            if missing:
                raise BuildError(path, f"{here}.{lang} uses {', '.join(sorted(missing))}, "
                                       f"which tutorial_values does not compute")


def _check_cases(path, cases, values):
    """Each case group: named variants in every language; a case value names one of them."""
    if not isinstance(cases, dict):
        raise BuildError(path, "cases must map a name to its variants")
    for name, variants in cases.items():
        if not isinstance(variants, dict) or len(variants) < 2:
            raise BuildError(path, f"case {name} needs at least two variants")
        for key, node in variants.items():
            _check_text(path, require_languages(node, f"{path.name}: case {name}.{key}", "text"),
                        f"case {name}.{key}", values)
        if values is not None:
            if name not in values or values[name][1] != "case":
                raise BuildError(path, f"case {name}: tutorial_values must return it as (variant, \"case\")")
            if values[name][0] not in variants:
                raise BuildError(path, f"case {name}: tutorial_values chose {values[name][0]!r}, "
                                       f"not one of {', '.join(variants)}")
    if values is not None:
        for name, (_, kind) in values.items():
            if kind == "case" and name not in cases:
                raise BuildError(path, f"value {name} is a case, but the chapter has no case {name}")


def load_chapter(path, values=None):
    """One chapter, validated. ``values`` (from tutorial_values) checks the placeholders."""
    data = load_yaml(path)
    where = f"{path.name}"
    if not isinstance(data, dict) or not data.get("id"):
        raise BuildError(path, "a chapter needs an id")
    _check_cases(path, data.get("cases") or {}, values)
    seen = set()
    for section in data.get("sections", []):
        sid = section.get("id", "")
        here = f"{where}: section {sid or '?'}"
        if not SECTION_ID.match(sid):
            raise BuildError(path, f"section id {sid!r} must match {SECTION_ID.pattern}")
        if sid in seen:
            raise BuildError(path, f"duplicate section id {sid!r}")
        seen.add(sid)
        for field in ("heading", "body") + (("assumption",) if "assumption" in section else ()):
            node = require_languages(section.get(field), here, field)
            _check_text(path, node, f"section {sid} {field}", values)
    if not data.get("sections"):
        raise BuildError(path, "a chapter needs sections")
    sources = data.get("sources") or []
    if not sources:
        raise BuildError(path, "a chapter cites its sources")
    for source in sources:
        for key in ("name", "id", "where", "url"):
            if not source.get(key):
                raise BuildError(path, f"source {source.get('id', '?')}: {key} is required")
        if not SOURCE_URL.match(source["url"]):
            raise BuildError(path, f"source url {source['url']!r} must be https://arxiv.org/abs/NNNN.NNNNN or https://doi.org/10.…")
    data["slug"] = Path(path).stem
    return data


_CJK = "\u2e80-\u9fff\u3000-\u303f\uff00-\uffef"
_CJK_BREAK = re.compile(f"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])|(?<=[{_CJK}]) (?=[{_CJK}])")


def cjk_tidy(node):
    """Drop the line breaks / spaces YAML leaves between two CJK characters
    (a browser would show them as spaces); recurse through dicts and lists."""
    if isinstance(node, str):
        return _CJK_BREAK.sub("", node)
    if isinstance(node, dict):
        return {key: cjk_tidy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [cjk_tidy(value) for value in node]
    return node
