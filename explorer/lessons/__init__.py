"""Lessons: a teacher's sequence of panel states with narration, replayed step by step.

Qt-free. ``model`` holds the records, ``files`` reads and writes lesson files, ``resolve``
decides what a step means on this machine (the GPU it names may be absent: the catalog sheet of
the same GPU stands in, and the step says so), ``builtin`` lists the lessons shipped with the app.
The window's player (``explorer.ui.lessons``) only shows what these computed.

The file format (JSON, UTF-8; version 1) is described in ``explorer.lessons.model`` and in the
README's "Lessons" section.
"""

from __future__ import annotations

from explorer.lessons.files import LessonError, dump_lesson, load_lesson, parse_lesson, save_lesson
from explorer.lessons.model import (
    FORMAT_NAME,
    FORMAT_VERSION,
    BenchState,
    DevicesState,
    Lesson,
    MemoryState,
    Recorded,
    Step,
    VisualizerState,
)

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "BenchState",
    "DevicesState",
    "Lesson",
    "LessonError",
    "MemoryState",
    "Recorded",
    "Step",
    "VisualizerState",
    "dump_lesson",
    "load_lesson",
    "parse_lesson",
    "save_lesson",
]
