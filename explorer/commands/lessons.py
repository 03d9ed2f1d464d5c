"""``device-explorer lessons [--json]``: the built-in lessons listed or checked; ``--handout``
prints a lesson to a PDF (``explorer.ui.handout``), Qt loaded only then. The window's own
``--lesson FILE [--step K]`` is ``explorer.commands.lesson_choice``."""

from __future__ import annotations

import json
import os
import sys
from argparse import Namespace
from dataclasses import dataclass
from pathlib import Path

from explorer.errors import UserError
from explorer.inputs import one_line as shown_line
from explorer.inputs import parse_output_path
from explorer.lessons import narration
from explorer.lessons.builtin import builtin_lessons, open_lesson
from explorer.lessons.handout import parse_page_size
from explorer.lessons.model import Lesson


@dataclass(frozen=True)
class Finding:
    """One thing ``lessons --check`` found: in which step (1-based; 0: the file as a whole), on
    which line of its narration (0: not the narration), and what."""

    step: int
    line: int
    text: str

    def __str__(self) -> str:
        where = f"step {self.step}" if self.step else "the lesson"
        return f"{where}: " + (f"narration line {self.line}: " if self.line else "") + self.text


def check_lesson(lesson: Lesson) -> list[Finding]:
    """Every step's problem (a value the page would refuse, or a model its page would fail to build:
    ``explorer.lessons.build``) and every line of narration that would not show as its writer
    meant (``explorer.lessons.narration.check``)."""
    from explorer.devices.catalog import load_catalog
    from explorer.lessons.build import build_step
    from explorer.lessons.predict import check_predict

    devices = load_catalog()
    found: list[Finding] = []
    for number, step in enumerate(lesson.steps, start=1):
        if step.problem:
            found.append(Finding(number, 0, step.problem.removeprefix(f"step {number}: ")))
        found += [Finding(number, 0, str(p)) for p in build_step(step, devices)]
        asked = check_predict(step, devices)
        if asked:
            found.append(Finding(number, 0, asked))
        found += [Finding(number, p.line, p.text) for p in narration.check(step.narration)]
        found += [Finding(number, 0, f"title: {p.text}") for p in narration.check(step.title)]
    return found


@dataclass(frozen=True)
class HandoutRequest:
    """``lessons --handout LESSON --out FILE.pdf [--page-size A4|Letter]``, checked before Qt loads."""

    lesson: Lesson
    out: Path
    page_size: str


@dataclass(frozen=True)
class LessonsRequest:
    as_json: bool
    check: tuple[str, ...] = ()  # lesson files (or built-in names) to check; () lists the built-ins
    handout: HandoutRequest | None = None


def parse_lessons(args: Namespace) -> LessonsRequest:
    return LessonsRequest(bool(args.json), tuple(args.check_files or ()), parse_handout(args))


def parse_handout(args: Namespace) -> HandoutRequest | None:
    """``--handout``'s lesson, ``--out`` and ``--page-size`` checked (one line each); None without
    ``--handout``, whose two companions alone are an error, not ignored."""
    lesson_text = getattr(args, "handout", None)
    out_text = getattr(args, "out", None)
    size_text = getattr(args, "page_size", None)
    if lesson_text is None:
        if out_text is not None or size_text is not None:
            given = "--out" if out_text is not None else "--page-size"
            raise UserError(f"{given} needs --handout LESSON: it is where and how the handout is printed")
        return None
    if getattr(args, "check_files", None) or args.json:
        raise UserError("--handout writes a PDF; give it without --check and --json")
    if out_text is None:
        raise UserError("--handout needs --out FILE.pdf: the PDF file to write")
    out = parse_output_path(out_text, "--out", (".pdf",))
    page_size = parse_page_size(size_text if size_text is not None else "A4")
    return HandoutRequest(open_lesson(lesson_text), out, page_size)


def run_handout(req: HandoutRequest) -> int:
    """Render each step in an offscreen window, as ``screenshot --lesson`` does, and write the PDF."""
    from explorer.qtcheck import as_root, distribution_family, platform_problem

    # rendered offscreen unless QT_QPA_PLATFORM says otherwise: that plugin's libraries
    problem = platform_problem(platforms=None if os.environ.get("QT_QPA_PLATFORM") else ("offscreen",))
    if problem is not None:
        raise UserError(problem.message(distribution_family(), as_root()))
    from explorer.ui.handout import HANDOUT_WINDOW, write_handout
    from explorer.ui.offscreen import discard, offscreen_window

    window = offscreen_window(None, HANDOUT_WINDOW)
    try:
        written = write_handout(window, req.lesson, req.out, req.page_size)
    finally:
        discard(window)
    for problem_line in req.lesson.problems:
        print(f"note: {problem_line}", file=sys.stderr)
    print(written)
    return 0


def run_check(req: LessonsRequest) -> int:
    """``lessons --check FILE...``: 0 when every file is clean, 1 when something was found."""
    results = []
    for text in req.check:
        lesson = open_lesson(text)
        results.append((lesson, check_lesson(lesson)))
    if req.as_json:
        print(
            json.dumps(
                {
                    "format": narration.FORMAT,
                    "lessons": [
                        {
                            "file": str(lesson.path),
                            "steps": len(lesson.steps),
                            "predict_steps": lesson.predict_steps,
                            "problems": [{"step": f.step, "line": f.line, "problem": f.text} for f in found],
                        }
                        for lesson, found in results
                    ],
                },
                indent=2,
            )
        )
    else:
        for lesson, found in results:
            steps = f"{len(lesson.steps)} step{'s' if len(lesson.steps) != 1 else ''}"
            print(f"{lesson.path}: {steps}, " + ("no problems" if not found else f"{len(found)} found:"))
            for f in found:
                print(f"  {shown_line(str(f))}")
    return 1 if any(found for _lesson, found in results) else 0


def run_lessons(args: Namespace) -> int:
    req = parse_lessons(args)
    if req.handout is not None:
        return run_handout(req.handout)
    if req.check:
        return run_check(req)
    as_json = req.as_json
    infos = builtin_lessons()
    if as_json:
        print(json.dumps({"lessons": [i.to_dict() for i in infos]}, indent=2))
        return 0
    if not infos:
        print("no built-in lessons found (the app's resources/lessons folder is missing)")
        return 0
    width = max(len(i.name) for i in infos)
    for i in infos:
        asks = f" ({i.predict_steps} ask first)" if i.predict_steps else ""
        print(f"{i.name:<{width}}  {i.steps:>2} steps  {i.title}{asks}")
        print(f"{'':<{width}}  {i.path}")
        for problem in i.problems:
            print(f"{'':<{width}}  problem: {problem}")
    print("open one with: device-explorer gui --lesson NAME (or a lesson file's path) [--step K]")
    return 0
