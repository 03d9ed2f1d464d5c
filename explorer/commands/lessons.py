"""``device-explorer lessons [--json]``, and the ``--lesson FILE [--step K]`` the window and
``screenshot`` take: which lesson, which step, checked before Qt loads."""

from __future__ import annotations

import json
from argparse import Namespace
from dataclasses import dataclass

from explorer.errors import UserError
from explorer.inputs import parse_whole
from explorer.lessons.builtin import builtin_lessons, open_lesson
from explorer.lessons.model import Lesson


@dataclass(frozen=True)
class LessonChoice:
    """A lesson that loaded (its damaged steps still inside, each with its problem) and the
    0-based step to show first."""

    lesson: Lesson
    step: int


def parse_lesson_choice(lesson_text: str | None, step_text: str | None) -> LessonChoice | None:
    """``--lesson`` and ``--step`` checked: the file loads as a lesson and the step exists.
    ``None`` without ``--lesson``; ``--step`` alone is an error, not ignored."""
    if lesson_text is None:
        if step_text is not None:
            raise UserError("--step needs --lesson FILE: it numbers a lesson's steps")
        return None
    lesson = open_lesson(lesson_text)
    count = len(lesson.steps)
    step = 1 if step_text is None else parse_whole(step_text, "--step", minimum=1, maximum=count)
    return LessonChoice(lesson, step - 1)


def parse_lessons(args: Namespace) -> bool:
    return bool(args.json)


def run_lessons(args: Namespace) -> int:
    as_json = parse_lessons(args)
    infos = builtin_lessons()
    if as_json:
        print(json.dumps({"lessons": [i.to_dict() for i in infos]}, indent=2))
        return 0
    if not infos:
        print("no built-in lessons found (the app's resources/lessons folder is missing)")
        return 0
    width = max(len(i.name) for i in infos)
    for i in infos:
        print(f"{i.name:<{width}}  {i.steps:>2} steps  {i.title}")
        print(f"{'':<{width}}  {i.path}")
        for problem in i.problems:
            print(f"{'':<{width}}  problem: {problem}")
    print("open one with: device-explorer gui --lesson NAME (or a lesson file's path) [--step K]")
    return 0
