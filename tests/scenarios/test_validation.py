"""Scenario validation: each error class with a small bad file, the shipped
files, the demo path, number parsing."""
from pathlib import Path

import pytest

from lab_core.inputs import SPEC_BY_NAME

from labsite.errors import BuildError
from labsite.scenarios import SCENARIOS, check_tree, load_all, load_demo_path, load_scenarios
from labsite.scenarios.validate import check_scenario_file
from labsite.scenarios.yamlload import YamlProblem, load_text

FIXTURES = Path(__file__).parent / "fixtures"
BAD = FIXTURES / "bad"


def problems_of(*paths):
    return [str(p) for p in check_tree(SCENARIOS, list(paths)).problems]


def rel(path):
    return path.relative_to(Path.cwd()).as_posix() if path.is_relative_to(Path.cwd()) else path.as_posix()


# (fixture, [expected messages without the "file:" prefix]) — each error class.
CASES = [
    ("yaml-syntax", ["13: yaml: YAML syntax error: mapping values are not allowed here"]),
    ("empty", ["1: yaml: the file is empty"]),
    ("unknown-field", [
        "13: workload.gpu_count: unknown field (allowed: params, gpus,",
        "14: titel: unknown field (did you mean 'title'?) (allowed: id, title, summary, narrative,",
    ]),
    ("wrong-type", [
        "13: workload.gpus: a list is not a number (allowed: 1 … 32768 GPUs; default 8; written like 175B",
        "14: workload.flash_attention: must be true or false, got 'sometimes' (allowed: true or false; default true)",
        "15: tags: must be a list, got 'demo' (allowed: up to 8 kebab-case tags)",
    ]),
    ("out-of-range", [
        "12: workload.params: '3T' is out of range (allowed: 1.25e+08 … 2e+12 parameters)",
        "14: workload.seq_len: 100 is out of range (allowed: 512 … 131072 tokens)",
    ]),
    ("not-a-number", [
        "12: workload.params: '13 billion' is not a number (allowed: 1.25e+08 … 2e+12 parameters; default 1.3e+09; "
        "written like 175B",
    ]),
    ("missing-language", [
        "2: title.zh: is missing (allowed: the text in Simplified Chinese)",
        "6: summary.zh: is empty (allowed: plain text",
        "7: narrative: must be a mapping, got 'Just English.' (allowed: en, zh)",
    ]),
    ("missing-fields", [
        "1: summary: is missing (allowed: one line under the title",
        "1: narrative: is missing",
        "1: workload: is missing",
    ]),
    ("html-injection", [
        "6: summary.en: contains HTML, script or control characters ('<s'); it would be shown escaped (allowed: plain "
        "text",
        "10: narrative.zh: contains HTML, script or control characters ('&lt;')",
        "16: source.url: 'javascript:alert(1)' is not a web link (allowed: an https:// link",
    ]),
    ("impossible-layout", [
        "15: parallelism.tp: 16 is impossible for this workload: tensor parallelism must stay inside one NVLink "
        "node (allowed: a divisor of gpus_per_node=8: 1, 2, 4, 8)",
    ]),
    ("recompute-layers", [
        "19: parallelism.recompute_layers: 11 is impossible for this workload: the largest model chunk holds 10 "
        "layers (0 recomputes all of them) (allowed: 0 to 10)",
    ]),
    ("grouped-query-heads", [
        "14: workload.kv_heads: 6 does not fit the workload: query heads must split evenly into key/value groups "
        "(allowed: a divisor of heads=32)",
    ]),
    ("expert-groups", [
        "15: workload.expert_groups: 12 does not fit the workload: the routed experts split into equal groups "
        "(allowed: a divisor of experts=256)",
    ]),
    ("recompute-modules", [
        "14: workload.recompute_modules: 'layernorm, moe_act' does not fit the workload: moe_act and moe recompute "
        "parts of mixture-of-experts layers (set experts)",
    ]),
    ("mtp-layers", ["14: workload.mtp_layers: 12 is out of range (allowed: 0 … 8 multi-token prediction modules)"]),
    ("recompute-module-name", [
        "14: workload.recompute_modules[1]: 'attention' is not one of the choices (allowed: core_attn, layernorm, "
        "mla_up_proj, moe_act, mlp, moe, shared_experts)",
    ]),
    ("layout-mismatch", [
        "18: parallelism.recompute: 'partial' is not one of the choices "
        "(allowed: none, selective, full)",
    ]),
    ("id-mismatch", ["1: id: 'Another_Name' is not a kebab-case id (allowed: kebab-case id"]),
    ("id-differs", ["1: id: 'another-name' differs from the file name 'id-differs' (allowed: the file name "
                    "without .yaml: id-differs)"]),
    ("repeated-key", ["13: workload.params: is given twice"]),
    ("published-figures", [
        "13: published: needs parallelism as well (allowed: the pinned layout",
        "13: published: needs source as well (allowed: where the scenario comes from",
        "14: published[0].metric: 'tflops' is not one of the choices (allowed: hardware_tflops_per_gpu,",
        "17: published[1].where: is missing",
        "18: published[1].value: 140 is out of range for mfu_percent (allowed: more than 0 and at most 100)",
    ]),
]


@pytest.mark.parametrize("name,expected", CASES, ids=[c[0] for c in CASES])
def test_each_bad_file_lists_every_error_with_its_line(name, expected):
    path = BAD / f"{name}.yaml"
    found = problems_of(path)
    prefix = rel(path) + ":"
    assert all(line.startswith(prefix) for line in found), found
    for message in expected:
        assert any(line.startswith(prefix + message) for line in found), f"{message!r} not in {found}"
    assert len(found) == len(expected), found


def test_every_message_has_the_file_line_field_shape():
    import re
    shape = re.compile(r"^[^:]+\.yaml:\d+: [\w.\[\]]+: .+")
    for path in sorted(BAD.glob("*.yaml")):
        for line in problems_of(path):
            assert shape.match(line), line


def test_duplicate_ids_across_files_are_reported():
    path = FIXTURES / "duplicate" / "single-gpu.yaml"
    assert problems_of(path) == [
        f"{rel(path)}:1: id: 'single-gpu' is already the id of scenarios/single-gpu.yaml "
        "(allowed: an id no other scenario file uses)"]


def test_demo_path_steps_need_a_file_once_each():
    path = FIXTURES / "demo" / "demo-path.yaml"
    found = problems_of(path)
    assert found[0] == f"{rel(path)}:3: steps[1]: 'step-one' is already item 1 (allowed: each one once)"
    assert found[1].startswith(f"{rel(path)}:4: steps[2]: no scenario file {rel(path.parent / 'step-too.yaml')} "
                               "(did you mean 'step-two'?)")
    assert found[2].startswith(f"{rel(path)}:5: steps[3]: must be text, got 42 (allowed: a scenario id")
    assert len(found) == 3


def test_demo_path_step_whose_file_is_broken_says_so(tmp_path):
    (tmp_path / "demo-path.yaml").write_text("steps: [broken]\n", encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("id: broken\n", encoding="utf-8")
    result = check_tree(tmp_path)
    assert any("steps[0]: the scenario file" in str(p) and "is not valid" in str(p) for p in result.problems)


def test_a_missing_demo_path_file_is_an_error(tmp_path):
    result = check_tree(tmp_path)
    assert [p.message for p in result.problems] == ["the demo path file is missing"]


def test_the_build_loader_raises_one_build_error_listing_every_problem(tmp_path):
    (tmp_path / "demo-path.yaml").write_text("steps: [a]\n", encoding="utf-8")
    (tmp_path / "a.yaml").write_text((BAD / "out-of-range.yaml").read_text(encoding="utf-8")
                                     .replace("id: out-of-range", "id: a"), encoding="utf-8")
    with pytest.raises(BuildError) as info:
        load_all(tmp_path)
    text = str(info.value)
    assert "a.yaml:12: workload.params: '3T' is out of range" in text
    assert "a.yaml:14: workload.seq_len: 100 is out of range" in text
    assert "demo-path.yaml:1: steps[0]: the scenario file" in text


def test_shipped_scenarios_and_examples_are_valid():
    result = check_tree(SCENARIOS)
    assert result.ok, "\n".join(map(str, result.problems))
    assert len(result.scenarios) >= 13


def test_demo_path_is_complete_with_six_steps():
    steps = [s.id for s in load_demo_path()]
    assert steps == ["single-gpu", "data-parallel", "zero-sharded", "tensor-pipeline", "full-3d", "at-scale"]


def test_every_shipped_file_points_editors_at_its_schema():
    for path in sorted(SCENARIOS.glob("*.yaml")) + sorted((SCENARIOS / "examples").glob("*.yaml")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        schema = "demo-path.schema.json" if path.name == "demo-path.yaml" else "scenario.schema.json"
        prefix = "../" if path.parent.name == "examples" else "./"
        assert first == f"# yaml-language-server: $schema={prefix}{schema}", path


def test_workload_numbers_never_arrive_as_strings():
    for scenario in load_scenarios():
        for name, value in scenario.workload.items():
            if SPEC_BY_NAME[name].kind == "choice" and isinstance(SPEC_BY_NAME[name].default, str):
                assert isinstance(value, str)
            elif SPEC_BY_NAME[name].kind == "modules":
                assert isinstance(value, list) and all(isinstance(item, str) for item in value), (scenario.id, value)
            else:
                assert isinstance(value, (int, float, bool)) or value is None, (scenario.id, name, value)
        scenario.workload_object()  # builds


@pytest.mark.parametrize("text,value", [
    ("175B", 175_000_000_000), ("1.3e9", 1_300_000_000), ("1_000", 1000), ("'1,024'", 1024), ("4M", 4_000_000),
    ("8K", 8000), ("2048", 2048), ("1.5e+9", 1_500_000_000),
])
def test_numbers_in_every_accepted_form(tmp_path, text, value):
    body = (BAD / "not-a-number.yaml").read_text(encoding="utf-8").replace("id: not-a-number", "id: n")
    path = tmp_path / "n.yaml"
    path.write_text(body.replace("params: 13 billion", f"params: 1.3B\n  global_batch_tokens: {text}")
                    .replace("gpus: 8", "gpus: 1"), encoding="utf-8")
    scenario, problems = check_scenario_file(path)
    if value < 512 or value > 1e9:
        assert problems and "workload.global_batch_tokens" in str(problems[0])
    else:
        assert not problems, problems
        assert scenario.workload["global_batch_tokens"] == value
        assert isinstance(scenario.workload["global_batch_tokens"], int)


@pytest.mark.parametrize("text", ["'1,5M'", "'2,04,8'", "'1.048,576'"])
def test_a_comma_that_does_not_group_thousands_is_a_problem_on_its_line(tmp_path, text):
    """Never read by dropping the comma (1,5M as 15M): the file, line and field, and the forms allowed."""
    body = (BAD / "not-a-number.yaml").read_text(encoding="utf-8").replace("id: not-a-number", "id: n")
    path = tmp_path / "n.yaml"
    path.write_text(body.replace("params: 13 billion", f"params: 1.3B\n  global_batch_tokens: {text}")
                    .replace("gpus: 8", "gpus: 1"), encoding="utf-8")
    scenario, problems = check_scenario_file(path)
    assert scenario is None and len(problems) == 1
    line = body.replace("params: 13 billion", "params: 1.3B").splitlines().index("  params: 1.3B") + 2
    assert str(problems[0]).startswith(f"{path}:{line}: workload.global_batch_tokens: ")
    assert "is not a number" in str(problems[0]) and "1,024" in str(problems[0])


def test_published_runs_pin_their_layout_and_cite_a_source():
    runs = [s for s in load_scenarios() if s.published]
    assert {s.id for s in runs} >= {"gpt3-175b-ptdp", "mt-nlg-530b", "bloom-176b", "opt-175b", "llama3-405b",
                                    "megatron-gpt-1-7b", "megatron-gpt-7-5b", "llama3-405b-128k", "deepseek-v3",
                                    "qwen3-235b-moe"}
    for s in runs:
        assert s.parallelism and s.source and s.source["url"].startswith("https://"), s.id
        assert s.notes, f"{s.id}: say what was assumed"
        w = s.workload_object()
        par = s.parallelism_object()
        assert par.tp * par.cp * par.pp * par.dp == w.gpus, s.id


def test_loader_keeps_lines_and_repeated_keys():
    data = load_text("a: 1\nb:\n  - x\n  - y\na: 2\n")
    assert data.key_lines == {"a": 1, "b": 2}
    assert data["b"].item_lines == [3, 4]
    assert data.repeated == [("a", 5)]
    with pytest.raises(YamlProblem) as info:
        load_text("a: [1,\n")
    assert info.value.line == 2


@pytest.mark.parametrize("value", ["42", "true", "[a, b]", "{a: 1}", "null", "1.5"])
def test_a_text_field_given_another_type_is_one_problem_not_a_traceback(tmp_path, value):
    """A field of plain text (here the source's id) given a number, a list, a mapping or null: the
    schema's "no HTML" rule holds for non-text, and its message once searched it as text and raised
    TypeError (found by mutating the shipped files at random, 2026-12)."""
    body = (SCENARIOS / "bloom-176b.yaml").read_text(encoding="utf-8")
    path = tmp_path / "bloom-176b.yaml"
    path.write_text(body.replace("  id: bigscience-workshop/bigscience train/tr11-176B-ml/README.md",
                                 f"  id: {value}"), encoding="utf-8")
    _, problems = check_scenario_file(path)
    texts = [str(p) for p in problems]
    assert any("bloom-176b.yaml:46: source.id: must be text" in t for t in texts), texts
