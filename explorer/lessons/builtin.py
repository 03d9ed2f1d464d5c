"""The lessons shipped with the app (``resources/lessons/*.json``), in the order a course uses them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from explorer.inputs import shown
from explorer.resources import resource_path

from .model import Lesson, LessonError

#: a longer file name is not one
MAX_PATH_CHARS = 4096


@dataclass(frozen=True)
class LessonInfo:
    """What ``device-explorer lessons`` lists and the Lessons menu offers."""

    name: str  # the file's stem, "01-blocks-and-threads": what --lesson also accepts
    title: str
    path: Path
    steps: int
    problems: tuple[str, ...] = ()
    predict_steps: int = 0  # steps that ask the class to predict before they show

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "path": str(self.path),
            "steps": self.steps,
            "predict_steps": self.predict_steps,
            "problems": list(self.problems),
        }


def lessons_dir() -> Path:
    return resource_path("lessons")


def builtin_paths() -> list[Path]:
    folder = lessons_dir()
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def builtin_lessons() -> list[LessonInfo]:
    """Every built-in lesson, read and checked (a damaged one is listed with its problem)."""
    from .files import load_lesson  # it imports every page's model: not for the window's menu

    out = []
    for path in builtin_paths():
        try:
            lesson = load_lesson(path)
        except LessonError as exc:
            out.append(LessonInfo(path.stem, path.stem, path, 0, (str(exc),)))
            continue
        out.append(
            LessonInfo(
                path.stem, lesson.title, path, len(lesson.steps), tuple(lesson.problems), lesson.predict_steps
            )
        )
    return out


def builtin_menu() -> list[LessonInfo]:
    """Every built-in lesson's title and number of steps, read from its JSON alone: what the
    window's Lessons menu lists, built before the window's first paint. Checking all of them
    (``builtin_lessons``) computed every step's pictures and took most of the time to the first
    window; a lesson is checked when it is opened, and a damaged one says so then."""
    import json

    out = []
    for path in builtin_paths():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            title, steps = data["title"], data["steps"]
            if not isinstance(title, str) or not isinstance(steps, list):
                raise TypeError
        except (OSError, ValueError, KeyError, TypeError):
            out.append(LessonInfo(path.stem, path.stem, path, 0))
            continue
        out.append(LessonInfo(path.stem, " ".join(title.split())[:200], path, len(steps)))
    return out


def find_lesson(text: str) -> Path:
    """A lesson file path, or the name of a built-in lesson ("01-blocks-and-threads", or "01")."""
    if not text.strip() or "\x00" in text or len(text) > MAX_PATH_CHARS:
        raise LessonError(f"--lesson is {shown(text)}; give a lesson file's path or a built-in lesson's name")
    try:
        p = Path(text).expanduser()
    except RuntimeError:  # ~user that does not exist
        raise LessonError(f"{shown(text)} names no lesson file (no such user folder)") from None
    try:
        exists = p.exists()
    except OSError:  # a name too long for the file system: load_lesson says so in one line
        exists = True
    if p.suffix.lower() == ".json" or exists or "/" in text or "\\" in text:
        return p
    matches = [q for q in builtin_paths() if q.stem == text] or [
        q for q in builtin_paths() if q.stem.startswith(text)
    ]
    if len(matches) == 1:
        return matches[0]
    names = ", ".join(q.stem for q in builtin_paths())
    if not matches:
        raise LessonError(f"no lesson file or built-in lesson {shown(text)}; built-in lessons: {names}")
    raise LessonError(f"{shown(text)} could mean {', '.join(q.stem for q in matches)}; give more of the name")


def open_lesson(text: str) -> Lesson:
    from .files import load_lesson

    return load_lesson(find_lesson(text))
