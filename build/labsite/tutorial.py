"""The tutorial's chapters: bilingual text in content/tutorial/chapters/*.yaml,
numbers from lab_core (the tutorial_values package), checked so that no number
is typed by hand.

content/tutorial/book.yaml lists the chapters in reading order (their slugs:
the file names, and the pages docs/tutorial/<slug>.md). A chapter file carries
both languages side by side (as content/rules.yaml does), so a section cannot
exist in one language only:

    id: memory                      # names the @chapter function in labsite/tutorial_values/
    sections:
      - id: weights                 # anchor id, identical in both languages
        heading: {en: ..., zh: ...}
        body: {en: ..., zh: ...}    # Markdown; {name} = a lab_core value, {ref_<id>} = a link to chapter <id>
        assumption: {en: ..., zh: ...}   # optional: a labelled teaching assumption
        chart: memory               # optional: a chart of the chapter, drawn after the body
        figure:                     # optional: a picture drawn from lab_core numbers (labsite.figures)
          kind: zero_stages
          params: {params: 7.5e+9, dp: 64}
          caption: {en: ..., zh: ...}
          alt: {en: ..., zh: ...}   # the text alternative: what the picture shows, in words
    cases:                          # optional: words chosen by a computed number
      verdict:                      # the value "verdict" (kind "case") picks one of these
        hidden: {en: ..., zh: ...}
        exposed: {en: ..., zh: ...}
    exercises:                      # predict, then check in the lab
      - id: slow-fabric
        question: {en: ..., zh: ...}
        lab:
          workload: {params: 1.3e+9, gpus: 64, inter_node_gbps: 25}   # the lab opens at these inputs
          pins: {tp: 1, pp: 1}      # optional: the layout the lab's plan must have (checked)
        answer: {en: ..., zh: ...}  # at least one {placeholder}: the answer is computed
    sources:
      - {name: ..., id: "arXiv:1910.02054", where: "§5.1, Fig. 1", url: "https://arxiv.org/abs/1910.02054"}

What counts as a hand-typed number (``hand_typed_numbers``): any digit in the
prose except inside ``{placeholders}`` (filled by lab_core), inside backticks
(formulas and code, e.g. `s·b·h·(34 + 5·a·s/h)`), in a citation (arXiv ids,
doi:…, "Table 2", "Fig. 1", "Eq. 4", "§3.1", "Sec. 5", "Appendix A", 表 5,
图 1, 式 7, 第 N 节), in a name: a word that joins letters and digits
(A100, H100, fp32, bf16, 1F1B, 3D, ZeRO-3), GPT-3, Llama 3, a year (2021), "stage N" /
"N-bit" (names of ZeRO stages and number formats), or an ordinal that names
one of several things ("GPU 0", "rank 3", "micro-batch 1", "chunk 2").
"""
import re
import string
from pathlib import Path

from .bilingual import load_yaml, require_languages
from .catalog import LANGUAGES
from .errors import BuildError
from .paths import CONTENT

TUTORIAL_DIR = CONTENT / "tutorial"
CHAPTER_DIR = TUTORIAL_DIR / "chapters"
BOOK = TUTORIAL_DIR / "book.yaml"
SOURCE_URL = re.compile(r"^https://(arxiv\.org/abs/\d{4}\.\d{4,5}(v\d+)?|doi\.org/10\.\d{4,9}/\S+)$")
SECTION_ID = re.compile(r"^[a-z][a-z0-9_-]*$")
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
#: Placeholders every chapter may use besides its values: ``{ref_<chapter id>}``, a link to that chapter.
REF_PREFIX = "ref_"

_ALLOWED = [
    r"\{[a-z0-9_]+\}",                                   # lab_core placeholders
    r"`[^`]*`",                                          # formulas and code
    r"arXiv:\d{4}\.\d{4,5}(v\d+)?",                      # citations
    r"doi:\S+",
    r"\b(Tables?|Fig\.|Figs\.|Figure|Figures|Eq\.|Eqs\.|Sec\.|Section|Appendix|Chapter)\s*[A-Z]?\d+(\.\d+)*[a-z]?"
    r"(\s*(,|and|–|-|/)\s*[A-Z]?\d+(\.\d+)*)*",
    r"§\s*\d+(\.\d+)*(\s*(–|-|,|and|和|、|与)\s*§?\d+(\.\d+)*)*",
    r"[(（](19|20)\d\d[)）]",                           # publication years: Young (1974)
    r"\b20[0-2]\d(–20[0-2]\d)?\b",                         # years of this century: the 2021 stack, 2021–2023
    r"(表|图|式|公式|附录)\s*[A-Z]?\d+(\.\d+)*",
    r"第\s*\d+\s*(节|章)",
    r"\b(Llama\s?\d(\.\d)?|GPT-\d|Qwen\d?(\.\d)?|Mixtral)\s\d+(\.\d+)?B\b",  # model names: Llama 3 405B
    r"\bGPT-\d\b", r"\bFlashAttention-\d\b", r"\bLlama\s?\d\b", r"\b[Ss]tages?[\s-]\d(\s?(–|-|/|,|and|or|和|或|到|至|、)\s?\d)*\b", r"\b\d+-bit\b",
    r"阶段\s?\d", r"\bZeRO-\d\b",
    # Ordinals that name one of several things: GPU 0, rank 3, micro-batch 1, chunk 2.
    r"\b(GPU|rank|micro-batch|chunk|node|step|layer|device)\s\d{1,2}\b",
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


def book_slugs():
    """The chapters' slugs in reading order (content/tutorial/book.yaml)."""
    data = load_yaml(BOOK)
    slugs = data.get("chapters") if isinstance(data, dict) else None
    if not isinstance(slugs, list) or not slugs:
        raise BuildError(BOOK, "chapters: expected the list of chapter slugs in reading order")
    for slug in slugs:
        if not isinstance(slug, str) or not SLUG.match(slug):
            raise BuildError(BOOK, f"chapter slug {slug!r} must match {SLUG.pattern}")
    if len(set(slugs)) != len(slugs):
        raise BuildError(BOOK, "a chapter is listed twice")
    return slugs


def chapter_files():
    """The chapter files in reading order; each file in the folder is listed once."""
    slugs = book_slugs()
    present = {path.stem for path in CHAPTER_DIR.glob("*.yaml")}
    missing = [slug for slug in slugs if slug not in present]
    if missing:
        raise BuildError(BOOK, f"listed chapter {missing[0]!r} has no file {CHAPTER_DIR.name}/{missing[0]}.yaml")
    unlisted = sorted(present - set(slugs))
    if unlisted:
        raise BuildError(CHAPTER_DIR / f"{unlisted[0]}.yaml", f"not listed in {BOOK.name} (chapters: reading order)")
    return [CHAPTER_DIR / f"{slug}.yaml" for slug in slugs]


def _prose(path, where, node, field, allowed):
    """Check one bilingual text: both languages, no hand-typed number, known placeholders."""
    node = require_languages(node, where, field)
    for lang in LANGUAGES:
        bad = hand_typed_numbers(node[lang])
        if bad:
            raise BuildError(path, f"{where} {field}.{lang}: hand-typed number in “{bad[0]}” — "
                                   "compute it in labsite/tutorial_values/ and use a {placeholder}")
        if allowed is not None:
            missing = placeholders(node[lang]) - allowed
            if missing:
                raise BuildError(path, f"{where} {field}.{lang} uses {', '.join(sorted(missing))}, "
                                       f"which its chapter's tutorial_values function does not compute")
    return node


def _check_figure(path, where, figure, allowed):
    from .figures import FIGURE_KINDS
    if not isinstance(figure, dict) or not isinstance(figure.get("kind"), str):
        raise BuildError(path, f"{where} figure: expected {{kind, params, caption, alt}}")
    if figure["kind"] not in FIGURE_KINDS:
        raise BuildError(path, f"{where} figure: unknown kind {figure['kind']!r} "
                               f"(allowed: {', '.join(sorted(FIGURE_KINDS))})")
    if not isinstance(figure.get("params", {}), dict):
        raise BuildError(path, f"{where} figure.params: expected a mapping")
    for field in ("caption", "alt"):
        _prose(path, where, figure.get(field), f"figure.{field}", allowed)


def _check_cases(path, cases, values, allowed):
    if not isinstance(cases, dict):
        raise BuildError(path, "cases: expected {value name: {case: {en, zh}}}")
    for name, options in cases.items():
        if not isinstance(options, dict) or not options:
            raise BuildError(path, f"cases.{name}: expected one text per case")
        for option, node in options.items():
            _prose(path, f"cases.{name}.{option}", node, "text", allowed)
    if values is None:
        return
    for name, (value, kind) in values.items():
        if kind != "case":
            continue
        if name not in cases:
            raise BuildError(path, f"cases.{name} is missing: the value {name} chooses among "
                                   f"{', '.join(value.options)}")
        missing = [option for option in value.options if option not in cases[name]]
        extra = sorted(set(cases[name]) - set(value.options))
        if missing or extra:
            raise BuildError(path, f"cases.{name}: the value chooses among {', '.join(value.options)}"
                                   + (f"; missing {', '.join(missing)}" if missing else "")
                                   + (f"; unknown {', '.join(extra)}" if extra else ""))


def _unique_id(path, kind, item, seen):
    """The id of a section or an exercise, checked: well formed and not used before in the chapter."""
    found = item.get("id", "") if isinstance(item, dict) else ""
    if not isinstance(found, str) or not SECTION_ID.match(found):
        raise BuildError(path, f"{kind} id {found!r} must match {SECTION_ID.pattern}")
    if found in seen:
        raise BuildError(path, f"duplicate {kind} id {found!r}")
    seen.add(found)
    return found


def _computed(text, values):
    """The placeholders of ``text`` that state a number (not a chapter link, not a chosen phrase)."""
    return {name for name in placeholders(text) if not name.startswith(REF_PREFIX)
            and (values is None or values[name][1] != "case")}


def _check_exercises(path, exercises, values, allowed):
    from .exercises import parse_lab
    if not isinstance(exercises, list):
        raise BuildError(path, "exercises: expected a list of {id, question, lab, answer}")
    seen = set()
    for exercise in exercises:
        where = f"exercise {_unique_id(path, 'exercise', exercise, seen)}"
        _prose(path, where, exercise.get("question"), "question", allowed)
        answer = _prose(path, where, exercise.get("answer"), "answer", allowed)
        for lang in LANGUAGES:
            if not _computed(answer[lang], values):
                raise BuildError(path, f"{where} answer.{lang}: an answer states at least one computed "
                                       "{placeholder} (the reader checks it against the lab)")
        parse_lab(path, where, exercise.get("lab"))


def load_chapter(path, values=None, refs=()):
    """One chapter, validated. ``values`` (from tutorial_values) checks the
    placeholders; ``refs``: the chapter ids ``{ref_<id>}`` may name."""
    data = load_yaml(path)
    if not isinstance(data, dict) or not data.get("id"):
        raise BuildError(path, "a chapter needs an id")
    allowed = None if values is None else set(values) | {REF_PREFIX + ref for ref in refs}
    seen = set()
    for section in data.get("sections", []):
        where = f"section {_unique_id(path, 'section', section, seen)}"
        for field in ("heading", "body") + (("assumption",) if "assumption" in section else ()):
            _prose(path, where, section.get(field), field, allowed)
        if "figure" in section:
            _check_figure(path, where, section["figure"], allowed)
    if not data.get("sections"):
        raise BuildError(path, "a chapter needs sections")
    _check_cases(path, data.get("cases") or {}, values, allowed)
    _check_exercises(path, data.get("exercises") or [], values, allowed)
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
