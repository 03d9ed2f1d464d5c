"""Lesson steps that ask first: the built-in ones ask about the value their own page then shows,
their answers are what the question's command prints, and lessons --check names a step whose
question cannot be asked or whose written answer is wrong."""

from __future__ import annotations

import json

import pytest

from explorer.cli import main
from explorer.devices.catalog import load_catalog
from explorer.lessons.builtin import builtin_lessons, builtin_paths
from explorer.lessons.files import load_lesson
from explorer.lessons.predict import step_question
from explorer.quiz.model import read_key
from tests.cli_json import run_json


def test_five_built_in_lessons_ask_first_and_each_question_is_followed_by_its_variant():
    asking = [i for i in builtin_lessons() if i.predict_steps]
    assert {i.name[:2] for i in asking} >= {"01", "02", "03", "09", "14"}
    devices = load_catalog()
    for path in builtin_paths():
        lesson = load_lesson(path)
        questions = [(n, step_question(s, devices)) for n, s in enumerate(lesson.steps)]
        asked = [(n, q) for n, q in questions if q is not None]
        for n, q in asked:  # the answer is what the command prints for the step's own launch
            assert read_key(run_json(q.command), q.answer_key) == q.answer, (path.stem, n + 1)
        firsts = [q for n, q in asked if not any(m == n - 1 for m, _ in asked)]
        for q in firsts:  # a question opens a pair: the next step asks the same concept of other numbers
            later = [r for _, r in asked if r.concept == q.concept and r.params != q.params]
            assert later, (path.stem, q.id)


def test_the_latency_question_is_the_latency_view_of_the_step():
    lesson = load_lesson(next(p for p in builtin_paths() if p.stem.startswith("14")))
    q = step_question(lesson.steps[1], load_catalog())
    assert q is not None and q.params == {"warps": 16, "mem_latency": 29, "alu": 0, "schedulers": 4}
    assert q.answer == pytest.approx(4 / 30)


def _lesson(tmp_path, predict: object) -> str:
    step = {
        "panel": "visualizer",
        "title": "t",
        "narration": ["n"],
        "state": {
            "device": "GTX 1650",
            "device_kind": "catalog",
            "grid": "98",
            "block": "1024",
            "n": "100000",
        },
        "predict": predict,
    }
    path = tmp_path / "l.json"
    path.write_text(
        json.dumps({"format": "device-explorer-lesson", "version": 1, "title": "x", "steps": [step]})
    )
    return str(path)


@pytest.mark.parametrize(
    ("predict", "said"),
    [
        ({"topic": "waves", "concept": "waves", "answer": 7}, None),
        (
            {"topic": "waves", "concept": "waves", "answer": 6},
            "the answer written is 6; the model gives 7 waves",
        ),
        ({"topic": "warp-magic", "concept": "x"}, "predict's topic is 'warp-magic'"),
        ({"topic": "banks", "concept": "conflict"}, "a visualizer step cannot show a banks question's value"),
        ({"topic": "waves", "concept": "waves", "bogus": 1}, "predict has bogus"),
        ("seven", "predict must be an object"),
    ],
)
def test_lessons_check_names_a_question_that_cannot_be_asked_or_a_wrong_answer(
    tmp_path, capsys, predict, said
):
    code = main(["lessons", "--check", _lesson(tmp_path, predict)])
    out = capsys.readouterr().out
    if said is None:
        assert code == 0, out
    else:
        assert code == 1 and f"step 1: predict: {said}" in out, out


def test_lessons_json_counts_the_steps_that_ask(capsys):
    assert main(["lessons", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_name = {i["name"][:2]: i["predict_steps"] for i in data["lessons"]}
    assert by_name["03"] == 5 and by_name["13"] == 0
