"""A failed build says what is wrong in one clean message, never a traceback:
the real ``mkdocs build`` on a copy of the repository with a bad file added.
Every problem of every bad file is in that one message."""
from pathlib import Path

import pytest

from labtest import build_site

BAD = Path(__file__).resolve().parents[1] / "scenarios" / "fixtures" / "bad"
HEADER = "# yaml-language-server: $schema=./scenario.schema.json\n"
VALID = (HEADER + "id: {id}\ntitle: {{en: A title, zh: 标题}}\nsummary: {{en: A summary., zh: 摘要。}}\n"
         "narrative: {{en: A paragraph., zh: 一段话。}}\nworkload:\n  params: 13B\n")

# (case, {file name in scenarios/: text}, [lines the message must hold])
CASES = [
    ("yaml-syntax", {"yaml-syntax.yaml": (BAD / "yaml-syntax.yaml").read_text(encoding="utf-8")},
     ["scenarios/yaml-syntax.yaml:13: yaml: YAML syntax error: mapping values are not allowed here"]),
    ("empty-file", {"empty.yaml": ""}, ["scenarios/empty.yaml:1: yaml: the file is empty"]),
    ("list-not-mapping", {"listed.yaml": "- id: listed\n- title: x\n"},
     ["scenarios/listed.yaml:1: file: must be a mapping, got a list (allowed: id, title, summary"]),
    ("unknown-field", {"unknown-field.yaml": (BAD / "unknown-field.yaml").read_text(encoding="utf-8")},
     ["scenarios/unknown-field.yaml:14: titel: unknown field (did you mean 'title'?)"]),
    ("negative-number", {"negative.yaml": VALID.format(id="negative") + "  gpus: -4\n"},
     ["scenarios/negative.yaml:8: workload.gpus: -4 is out of range (allowed: 1 … 32768 GPUs)"]),
    ("text-not-number", {"not-a-number.yaml": (BAD / "not-a-number.yaml").read_text(encoding="utf-8")},
     ["scenarios/not-a-number.yaml:12: workload.params: '13 billion' is not a number (allowed: 1.25e+08 … 2e+12"]),
    ("absurd-number", {"absurd.yaml": VALID.format(id="absurd").replace("params: 13B", "params: 3T")
                       + "  seq_len: 1e9\n"},
     ["scenarios/absurd.yaml:7: workload.params: '3T' is out of range (allowed: 1.25e+08 … 2e+12 parameters)",
      "scenarios/absurd.yaml:8: workload.seq_len: '1e9' is out of range (allowed: 512 … 131072 tokens)"]),
    ("copied-id", {"single-gpu-copy.yaml": VALID.format(id="single-gpu")},
     ["scenarios/single-gpu-copy.yaml:2: id: 'single-gpu' differs from the file name 'single-gpu-copy'"]),
    ("missing-chinese", {"missing-language.yaml": (BAD / "missing-language.yaml").read_text(encoding="utf-8")},
     ["scenarios/missing-language.yaml:2: title.zh: is missing (allowed: the text in Simplified Chinese)",
      "scenarios/missing-language.yaml:6: summary.zh: is empty"]),
    ("every-file-at-once", {"negative.yaml": VALID.format(id="negative") + "  gpus: -4\n", "empty.yaml": "",
                            "demo-path.yaml": "steps: [single-gpu, no-such-step]\n"},
     ["scenarios: 3 problems in 3 scenario files:", "scenarios/negative.yaml:8: workload.gpus: -4 is out of range",
      "scenarios/empty.yaml:1: yaml: the file is empty",
      "scenarios/demo-path.yaml:1: steps[1]: no scenario file scenarios/no-such-step.yaml"]),
]


def _build_with(tree, tmp_path, files):
    """Build ``tree`` with ``files`` written into it (restored afterwards); the build's output."""
    saved = {}
    for name, text in files.items():
        path = tree / name
        saved[path] = path.read_bytes() if path.exists() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    try:
        result = build_site(tmp_path / "site", source_root=tree)
    finally:
        for path, data in saved.items():
            path.unlink() if data is None else path.write_bytes(data)
    return result


def _assert_one_clean_message(result, tmp_path, expected):
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Traceback" not in output and 'File "' not in output, output
    for line in expected:
        assert line in output, f"{line!r} not in:\n{output}"
    assert not (tmp_path / "site" / "index.html").exists(), "nothing is written before the content is valid"


@pytest.mark.parametrize("case,files,expected", CASES, ids=[case[0] for case in CASES])
def test_a_bad_scenario_file_stops_the_build_with_one_clean_message(tree_copy, tmp_path, case, files, expected):
    files = {f"scenarios/{name}": text for name, text in files.items()}
    _assert_one_clean_message(_build_with(tree_copy, tmp_path, files), tmp_path, expected)


def test_a_missing_chinese_catalog_text_stops_the_build_naming_the_key(tree_copy, tmp_path):
    name = "content/i18n/zh/site.yaml"
    text = (tree_copy / name).read_text(encoding="utf-8")
    assert "\n  lang_name: " in text
    without = "\n".join(line for line in text.splitlines() if not line.startswith("  lang_name: ")) + "\n"
    result = _build_with(tree_copy, tmp_path, {name: without})
    _assert_one_clean_message(result, tmp_path, [f"{name}: missing translation key(s) present in en/site.yaml: "
                                                 "site.lang_name"])
