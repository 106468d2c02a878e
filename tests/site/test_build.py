"""The site builds strictly, in both languages, with its runtime assets, and
loads nothing from another origin."""
import re

import pytest

from labsite.catalog import LANGUAGES, load_catalogs
from labsite.errors import BuildError
from labtest import language_dir

PAGES = ("index.html", "lab/index.html")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_exists_in_both_languages(built_site, lang, page):
    html = (language_dir(built_site, lang) / page).read_text(encoding="utf-8")
    assert f'<html lang="{lang}"' in html


def test_every_markdown_page_has_its_twin(repo_root):
    docs = repo_root / "docs"
    english = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md") if not p.name.endswith(".zh.md")}
    chinese = {p.relative_to(docs).as_posix().replace(".zh.md", ".md") for p in docs.rglob("*.zh.md")}
    assert english == chinese


def test_lab_page_carries_the_precomputed_result(built_site):
    """The first paint is exactly what lab_view computes for the defaults."""
    from markupsafe import escape

    from lab_view import Session
    from labsite.labpage import default_inputs, load_lab_layout
    from labsite.pages.lab import runtime_session_config
    from labsite.pages.rules import load_rules

    layout, rules = load_lab_layout(), load_rules()
    for lang, catalog in load_catalogs().items():
        href = "../rules/" if lang == "en" else "../../zh/rules/"
        view = Session(runtime_session_config(layout, catalog, lang, rules, href)).evaluate(default_inputs())["view"]
        html = (language_dir(built_site, lang) / "lab/index.html").read_text(encoding="utf-8")
        for meter in view["meters"].values():
            assert escape(meter["text"]) in html, (lang, meter["text"])
        for fragment in (view["decisions"], view["memory_bar"], view["time_bar"], view["diagram"]["mesh"], view["rules"]):
            assert fragment in html, lang
        for text in view["figures"].values():
            assert f">{escape(text)}<" in html, (lang, text)


def test_pyodide_and_python_packages_are_shipped(built_site):
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm"):
        assert (built_site / "assets/pyodide" / name).stat().st_size > 0
    # Pyodide's full source standard library and its lock file stay out: the
    # build ships a trimmed, precompiled one, and the worker loads no package.
    assert not (built_site / "assets/pyodide/python_stdlib.zip").exists()
    assert not (built_site / "assets/pyodide/pyodide-lock.json").exists()
    (stdlib,) = (built_site / "assets/pyodide").glob("python_stdlib.*.zip")
    zips = list((built_site / "assets/lab").glob("py.*.zip"))
    assert len(zips) == 1
    html = (built_site / "lab/index.html").read_text(encoding="utf-8")
    assert zips[0].name in html and stdlib.name in html


def test_pages_without_the_lab_do_not_load_pyodide(built_site):
    for lang in LANGUAGES:
        html = (language_dir(built_site, lang) / "index.html").read_text(encoding="utf-8")
        assert "assets/lab/" not in html and "pyodide" not in html


_EXTERNAL = re.compile(
    r"""(?:<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\bsrc=["']?(?P<src>[^"'\s>]+))"""
    r"""|(?:<link\b[^>]*\bhref=["']?(?P<href>[^"'\s>]+))"""
    r"""|(?:@import\s+(?:url\()?["']?(?P<imp>[^"')\s;]+))"""
    r"""|(?:url\(\s*["']?(?P<url>[^"')\s]+))""",
    re.IGNORECASE,
)


def _is_other_origin(url):
    return bool(re.match(r"^(?:[a-z][a-z0-9+.-]*:)?//", url, re.IGNORECASE)) and not url.startswith("data:")


def test_no_resource_is_loaded_from_another_origin(built_site):
    offenders = []
    for path in built_site.rglob("*"):
        if path.suffix not in (".html", ".css", ".js", ".mjs"):
            continue
        if "assets/pyodide" in path.as_posix():
            continue  # Pyodide's own loader only fetches from its indexURL, which is this site
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in _EXTERNAL.finditer(text):
            url = next(v for v in match.groupdict().values() if v)
            if path.suffix == ".html" and match.group("href") and "stylesheet" not in match.group(0) and "preload" not in match.group(0) and "modulepreload" not in match.group(0) and "icon" not in match.group(0):
                continue  # plain <link rel=alternate/canonical> navigation, not a fetched resource
            if _is_other_origin(url):
                offenders.append(f"{path.relative_to(built_site)}: {url}")
    assert not offenders, "\n".join(offenders[:20])


def test_missing_translation_key_fails_naming_key_and_file(tmp_path):
    for lang in ("en", "zh"):
        (tmp_path / lang).mkdir()
    (tmp_path / "en" / "page.yaml").write_text("a:\n  b: one\n  c: two\n", encoding="utf-8")
    (tmp_path / "zh" / "page.yaml").write_text("a:\n  b: 一\n", encoding="utf-8")
    with pytest.raises(BuildError) as info:
        load_catalogs(tmp_path)
    assert "zh/page.yaml" in str(info.value) and "a.c" in str(info.value)


def test_missing_catalog_file_fails_naming_it(tmp_path):
    for lang in ("en", "zh"):
        (tmp_path / lang).mkdir()
        (tmp_path / lang / "site.yaml").write_text("x: y\n", encoding="utf-8")
    (tmp_path / "en" / "extra.yaml").write_text("z: w\n", encoding="utf-8")
    with pytest.raises(BuildError) as info:
        load_catalogs(tmp_path)
    assert "zh/extra.yaml" in str(info.value)


def test_the_shipped_catalogs_have_identical_keys():
    catalogs = load_catalogs()
    assert set(catalogs) == set(LANGUAGES)
