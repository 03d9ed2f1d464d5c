"""``device-explorer lessons``: every built-in lesson with its title, file and number of steps."""

from __future__ import annotations

import json

from explorer import cli
from explorer.lessons import load_lesson
from explorer.lessons.builtin import builtin_paths


def test_lessons_json_lists_every_builtin_lesson(capsys):
    assert cli.main(["lessons", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["lessons"]
    assert [item["path"] for item in listed] == [str(p) for p in builtin_paths()]
    for item in listed:
        lesson = load_lesson(item["path"])
        assert item["title"] == lesson.title
        assert item["steps"] == len(lesson.steps)
        assert item["problems"] == []


def test_lessons_text_names_title_path_and_steps(capsys):
    assert cli.main(["lessons"]) == 0
    out = capsys.readouterr().out
    for path in builtin_paths():
        lesson = load_lesson(path)
        assert f"{len(lesson.steps):>2} steps  {lesson.title}" in out
        assert str(path) in out
