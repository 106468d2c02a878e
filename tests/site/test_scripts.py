"""The lab's scripts are shipped under content-hashed names (labsite.scripts):
imports renamed, a dependency's change renames its importers, no plain copy
left in the site, and the lab page names the hashed files."""
import json
import re

import pytest

from labsite import scripts


@pytest.fixture
def sources(tmp_path, monkeypatch):
    monkeypatch.setattr(scripts, "SOURCE_DIR", tmp_path)
    (tmp_path / "leaf.js").write_text("export const x = 1;\n", encoding="utf-8")
    (tmp_path / "main.js").write_text('import { x } from "./leaf.js";\nconst later = import("./leaf.js");\n', encoding="utf-8")
    return tmp_path


def test_imports_are_renamed_and_a_dependency_renames_its_importers(sources):
    before = scripts.built()
    leaf_name, main_name = before["leaf"][0], before["main"][0]
    assert re.fullmatch(r"leaf\.[0-9a-f]{12}\.js", leaf_name)
    assert f'from "./{leaf_name}"' in before["main"][1] and f'import("./{leaf_name}")' in before["main"][1]
    (sources / "leaf.js").write_text("export const x = 2;\n", encoding="utf-8")
    after = scripts.built()
    assert after["leaf"][0] != leaf_name and after["main"][0] != main_name


def test_an_import_of_a_missing_script_is_an_error(sources):
    (sources / "main.js").write_text('import { y } from "./gone.js";\n', encoding="utf-8")
    with pytest.raises(ValueError, match="gone.js"):
        scripts.built()


def test_site_has_only_hashed_lab_scripts_and_the_page_names_them(built_site):
    names = {p.name for p in (built_site / "assets/lab").glob("*.js")}
    assert names and all(re.fullmatch(r"[a-z-]+\.[0-9a-f]{12}\.js", name) for name in names)
    assert {name.split(".")[0] for name in names} >= {"lab", "lab-static", "search-after-lab", "worker", "downloads"}
    html = (built_site / "lab/index.html").read_text(encoding="utf-8")
    (lab,) = re.findall(r'<script type="module" src="\.\./assets/lab/(lab\.[0-9a-f]{12}\.js)"', html)
    classic = re.findall(r'<script (?:defer )?src="\.\./assets/lab/([a-z-]+\.[0-9a-f]{12}\.js)"', html)
    assert lab in names and set(classic) <= names and len(classic) == 2
    preloaded = set(re.findall(r'<link rel="modulepreload" href="\.\./assets/lab/([a-z]+\.[0-9a-f]{12}\.js)">', html))
    assert {name.split(".")[0] for name in preloaded} == {"progress", "runtime"} and preloaded <= names
    config = json.loads(re.search(r'id="lab-config">(.*?)</script>', html, re.S).group(1))
    assert config["boot"]["worker"].rsplit("/", 1)[-1] in names
    worker = (built_site / "assets/lab" / config["boot"]["worker"].rsplit("/", 1)[-1]).read_text(encoding="utf-8")
    (downloads,) = re.findall(r'from "\./(downloads\.[0-9a-f]{12}\.js)"', worker)
    assert downloads in names
