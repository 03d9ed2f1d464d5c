"""``device-explorer lessons``: every built-in lesson with its title, file and number of steps."""

from __future__ import annotations

import json

import pytest

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


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["gui", "--step", "2"], "--step needs --lesson FILE"),
        (["gui", "--lesson", "01", "--step", "99"], "--step is 99; it must be at most 5"),
        (["gui", "--lesson", "01", "--step", "0"], "--step is 0; it must be at least 1"),
        (["gui", "--lesson", "nothing-like-it"], "no lesson file or built-in lesson 'nothing-like-it'"),
        (
            ["screenshot", "--lesson", "/dev/zero", "--out", "x.png"],
            "/dev/zero is not a lesson file: it is a device",
        ),
    ],
)
def test_bad_lesson_arguments_are_one_line_before_any_window(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv, check_only=True) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_screenshot_renders_a_lesson_step(tmp_path, capsys):
    out = tmp_path / "step.png"
    assert (
        cli.main(["screenshot", "--lesson", "01", "--step", "5", "--out", str(out), "--size", "1024x768"])
        == 0
    )
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert (image.width(), image.height()) == (1024, 768)


def test_gui_request_carries_the_lesson_and_step():
    from explorer.commands.gui import parse_gui

    args = cli.build_parser().parse_args(["gui", "--lesson", "02", "--step", "3"])
    req = parse_gui(args)
    assert req.lesson is not None and req.lesson.step == 2
    assert req.lesson.lesson.title.startswith("Waves and the tail effect")


def test_lessons_check_finds_what_would_not_show_as_written(tmp_path, capsys):
    """A lesson's narration in a format that eats nothing, and ``lessons --check FILE``
    to name what would not show as its writer meant, with the step and the line."""
    path = tmp_path / "draft.json"
    steps = [
        {"panel": "memory", "narration": ["x = 10*32+5 = 325 is shown as typed.", "", "**Look for:** it"]},
        {"panel": "memory", "narration": ["the *idle* lanes", "a **bold start"], "title": "t"},
        {"panel": "memory", "state": {"view": "banks", "stride": -1}, "narration": "`code"},
    ]
    path.write_text(
        json.dumps({"format": "device-explorer-lesson", "version": 1, "title": "T", "steps": steps})
    )
    assert cli.main(["lessons", "--check", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: 3 steps, 4 found:"
    found = [line.strip() for line in out[1:]]
    assert found[0].startswith("step 2: narration line 1: '*idle*' is Markdown's italics")
    assert found[1].startswith("step 2: narration line 2: a ** is never paired")
    assert found[2].startswith("step 3: stride") and "-1" in found[2]
    assert found[3].startswith("step 3: narration line 1: a backtick (`) opens code that is never closed")
    assert cli.main(["lessons", "--check", str(path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)["lessons"][0]
    assert [(p["step"], p["line"]) for p in data["problems"]] == [(2, 1), (2, 2), (3, 0), (3, 1)]


def test_every_builtin_lesson_passes_its_own_check(capsys):
    names = [p.stem for p in builtin_paths()]
    assert cli.main(["lessons", "--check", *names]) == 0
    out = capsys.readouterr().out
    assert out.count("no problems") == len(names)


def test_a_lesson_title_with_escape_sequences_is_printed_as_text(tmp_path, monkeypatch, capsys):
    """A built-in lesson's title went to the terminal raw (a changed resources
    folder on a shared install could set the title, clear the screen and fake a line)."""
    from explorer.lessons import builtin

    source = json.loads(builtin_paths()[0].read_text(encoding="utf-8"))
    source["title"] = "\x1b]0;pwned\x07Blocks\x1b[2J\nall lessons ok\r"
    source["steps"][0]["title"] = "\x9b31mFirst\u202e"
    source["steps"][0]["narration"] = ["line one\x1b[1m", "", "line two"]
    (tmp_path / "01-hostile.json").write_text(json.dumps(source), encoding="utf-8")
    monkeypatch.setattr(builtin, "lessons_dir", lambda: tmp_path)
    assert cli.main(["lessons"]) == 0
    out = capsys.readouterr().out
    assert "Blocks all lessons ok" in out and "\x1b" not in out and "\r" not in out
    assert not any(line.startswith("all lessons ok") for line in out.splitlines())
    lesson = load_lesson(tmp_path / "01-hostile.json")
    assert lesson.title == "Blocks all lessons ok" and lesson.steps[0].title == "First"
    assert lesson.steps[0].narration == "line one\n\nline two"  # its paragraphs kept
