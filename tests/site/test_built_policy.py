"""The built site keeps its own rules without a browser: every page carries
the Content-Security-Policy first in its head, every inline script it runs
is allowed by hash, no page has an inline <style>, no page links an alternate
whose sitemap.xml would 404, and a sitemap is written only with a site_url."""
import base64
import hashlib
import re

import yaml

from labtest import ROOT, build_site

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)([^>]*)>(.*?)</script>", re.S)
POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')


def configured_policy():
    class Loader(yaml.SafeLoader):
        pass
    Loader.add_constructor("!ENV", lambda loader, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)
    return config["extra"]["content_security_policy"]


def test_every_page_runs_only_what_the_policy_allows(built_site):
    policy = configured_policy()
    assert "'unsafe-inline'" not in policy.split("style-src-attr")[0] and "'unsafe-eval'" not in policy
    missing = {}
    for page in built_site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        head = html.split("<head>", 1)[1].lstrip()
        assert head.startswith('<meta http-equiv="Content-Security-Policy"'), page
        assert POLICY.search(html).group(1).replace("&#39;", "'") == policy
        assert "<style" not in html, page
        assert not re.search(r'<link rel="alternate" href', html), page
        for attrs, body in INLINE_SCRIPT.findall(html):
            if "application/json" in attrs:
                continue  # data, not run
            digest = "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
            if digest not in policy:
                missing.setdefault(digest, str(page.relative_to(built_site)))
    assert missing == {}, f"add these hashes to extra.content_security_policy in mkdocs.yml: {missing}"


def test_no_sitemap_entry_without_a_site_url(built_site):
    sitemap = (built_site / "sitemap.xml").read_text(encoding="utf-8")
    assert "None" not in sitemap and "<loc>" not in sitemap


def test_the_site_url_gives_absolute_sitemap_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_SITE_URL", "https://lab.example.org/")
    result = build_site(tmp_path / "site")
    assert result.returncode == 0, result.stderr
    sitemap = (tmp_path / "site" / "sitemap.xml").read_text(encoding="utf-8")
    locs = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    assert locs and all(loc.startswith("https://lab.example.org/") for loc in locs)
    assert "https://lab.example.org/zh/lab/" in sitemap
