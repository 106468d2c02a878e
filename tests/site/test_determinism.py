"""Two builds of the same tree are byte-identical, except what MkDocs itself
timestamps (the sitemaps' <lastmod>)."""
import filecmp
import gzip
import re

from labtest import build_site

TIMESTAMPED = {"sitemap.xml", "sitemap.xml.gz"}


def _strip_lastmod(data):
    return re.sub(rb"<lastmod>[^<]*</lastmod>", b"", data)


def test_two_builds_are_identical(built_site, tmp_path):
    second = tmp_path / "second"
    result = build_site(second)
    assert result.returncode == 0, result.stderr
    first_files = sorted(p.relative_to(built_site) for p in built_site.rglob("*") if p.is_file())
    second_files = sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert first_files == second_files
    different = []
    for rel in first_files:
        a, b = built_site / rel, second / rel
        if rel.name in TIMESTAMPED:
            read = (lambda p: gzip.decompress(p.read_bytes())) if rel.suffix == ".gz" else (lambda p: p.read_bytes())
            if _strip_lastmod(read(a)) != _strip_lastmod(read(b)):
                different.append(str(rel))
        elif not filecmp.cmp(a, b, shallow=False):
            different.append(str(rel))
    assert not different, different
