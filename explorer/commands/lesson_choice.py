"""The ``--lesson FILE [--step K]`` the window and ``screenshot`` take: which lesson, which step,
checked before Qt loads. Apart from ``commands.lessons`` (the listing, the checks, the handout),
so the window imports only this, and without ``--lesson`` not the lesson reader either."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.errors import UserError
from explorer.inputs import parse_whole
from explorer.lessons.builtin import open_lesson
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
