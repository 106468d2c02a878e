"""Exercises and cases: a bad chapter file stops the build with a message
naming the file, the exercise or value, and what is allowed; the lab state
an exercise opens is the one its answer is computed from."""
import pytest

from labsite import exercises
from labsite.errors import BuildError
from labsite.tutorial import load_chapter
from labsite.tutorial_values import Case, case, chapter_data

CHAPTER = """
id: demo
sections:
  - id: one
    heading: {{en: One, zh: 一}}
    body: {{en: "Step {{step}}.", zh: "Step {{step}}。"}}
{cases}
exercises:
  - id: ex
    question: {{en: "How long?", zh: "多久？"}}
    lab:
      workload: {workload}
    answer: {answer}
sources:
  - {{name: ZeRO, id: "arXiv:1910.02054", where: "§5", url: "https://arxiv.org/abs/1910.02054"}}
"""


def write(tmp_path, workload="{params: 1.3e+9, gpus: 8}", answer='{en: "It takes {step}.", zh: "要{step}。"}',
          cases=""):
    path = tmp_path / "demo.yaml"
    path.write_text(CHAPTER.format(workload=workload, answer=answer, cases=cases), encoding="utf-8")
    return path


PLAIN = {"step": (1.0, "duration")}
VALUES = dict(PLAIN, verdict=case("fast", "fast", "slow"))


def test_a_good_chapter_loads(tmp_path):
    cases = "cases:\n  verdict:\n    fast: {en: Fast., zh: 快。}\n    slow: {en: Slow., zh: 慢。}"
    assert load_chapter(write(tmp_path, cases=cases), VALUES)["exercises"][0]["id"] == "ex"


@pytest.mark.parametrize("workload,message", [
    ("{params: 1.3e+9, gpu_count: 8}", "lab.workload.gpu_count: not an input of the lab"),
    ("{params: 1.3e+9, gpus: eight}", "lab.workload.gpus: 'eight' is not a number"),
    ("{params: 1.3e+9, gpus: 0}", "lab.workload.gpus"),
])
def test_a_bad_lab_state_names_the_exercise_and_the_input(tmp_path, workload, message):
    with pytest.raises(BuildError, match="exercise ex " + message.replace(".", r"\.").replace("(", r"\(")):
        load_chapter(write(tmp_path, workload=workload), PLAIN)


def test_an_answer_without_a_computed_number_is_refused(tmp_path):
    with pytest.raises(BuildError, match="answer.en: an answer states at least one computed"):
        load_chapter(write(tmp_path, answer='{en: "It is fast.", zh: "很快。"}'), PLAIN)


def test_an_answer_with_only_a_chosen_phrase_is_refused(tmp_path):
    cases = "cases:\n  verdict:\n    fast: {en: Fast., zh: 快。}\n    slow: {en: Slow., zh: 慢。}"
    with pytest.raises(BuildError, match="computed"):
        load_chapter(write(tmp_path, answer='{en: "{verdict}", zh: "{verdict}"}', cases=cases), VALUES)


def test_a_case_value_needs_words_for_every_outcome(tmp_path):
    cases = "cases:\n  verdict:\n    fast: {en: Fast., zh: 快。}"
    with pytest.raises(BuildError, match="cases.verdict: the value chooses among fast, slow; missing slow"):
        load_chapter(write(tmp_path, cases=cases), VALUES)


def test_a_case_must_be_one_of_its_options():
    with pytest.raises(ValueError):
        Case("medium", ("fast", "slow"))


def test_pins_the_lab_plan_does_not_have_stop_the_build(tmp_path, monkeypatch):
    path = write(tmp_path)
    data = {"exercises": [{"id": "ex", "lab": {"workload": {"params": 1.3e9, "gpus": 8}, "pins": {"tp": 8}}}]}
    monkeypatch.setattr(exercises, "_chapter_path", lambda chapter_id: (path, data))
    exercises.exercise_state.cache_clear()
    try:
        with pytest.raises(BuildError, match=r"lab.pins.tp: the lab's plan has tp = 1, not 8"):
            exercises.exercise_state("demo", "ex")
    finally:
        exercises.exercise_state.cache_clear()


def test_every_exercise_answer_is_computed_from_the_state_its_link_opens():
    import lab_core
    for chapter_id in ("memory", "collectives", "data_parallel", "zero", "tensor_parallel"):
        data = chapter_data(chapter_id)
        assert any(name.startswith("ex_") for name in data.values), chapter_id
    state = exercises.exercise_state("data_parallel", "slow-fabric")
    fresh = lab_core.recommend(lab_core.Workload(**state.inputs))
    assert chapter_data("data_parallel").values["ex_slow_fabric_step"][0] == fresh.report.step_s
