"""Lessons: a teacher's sequence of panel states with narration, replayed step by step.

Qt-free. ``model`` holds the records, ``files`` reads and writes lesson files, ``resolve``
decides what a step means on this machine (the GPU it names may be absent: the catalog sheet of
the same GPU stands in, and the step says so), ``builtin`` lists the lessons shipped with the app.
The window's player (``explorer.ui.lessons``) only shows what these computed.

The file format (JSON, UTF-8; version 1) is described in ``explorer.lessons.model`` and in the
README's "Lessons" section.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from explorer.lessons.files import dump_lesson, load_lesson, parse_lesson, save_lesson
    from explorer.lessons.model import (
        FORMAT_NAME,
        FORMAT_VERSION,
        BenchState,
        DevicesState,
        Lesson,
        LessonError,
        MemoryState,
        Recorded,
        Step,
        VisualizerState,
    )

#: where each name lives: the records in ``model`` (light: every page's lesson hooks import it
#: before the first paint), the file reader in ``files`` (it checks steps against the page models,
#: so it imports them, which a window should not wait for until a lesson is opened)
_HOMES = {
    "dump_lesson": "files",
    "load_lesson": "files",
    "parse_lesson": "files",
    "save_lesson": "files",
    "FORMAT_NAME": "model",
    "FORMAT_VERSION": "model",
    "BenchState": "model",
    "DevicesState": "model",
    "Lesson": "model",
    "LessonError": "model",
    "MemoryState": "model",
    "Recorded": "model",
    "Step": "model",
    "VisualizerState": "model",
}

__all__ = [
    "BenchState",
    "DevicesState",
    "FORMAT_NAME",
    "FORMAT_VERSION",
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


def __getattr__(name: str) -> Any:
    """The package's names, each imported from its home on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
