"""Guard against a Qt binding that frees None.

PySide6-Essentials 6.12.0 on CPython 3.11 takes one reference from ``None`` on every call of a
Qt method that returns nothing; after some thousand paints the interpreter aborts with
"Fatal Python error: deallocating None" and the user loses the window. pyproject.toml keeps
that release out; this test fails if a resolver ever brings it (or a sibling) back.
"""

from __future__ import annotations

import sys

from PySide6.QtGui import QImage, QPainter, QPen


def test_void_qt_calls_do_not_steal_references_to_none(qapp):
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    pen = QPen()
    try:
        before = sys.getrefcount(None)
        for _ in range(2000):
            painter.setPen(pen)
        after = sys.getrefcount(None)
    finally:
        painter.end()
    assert after >= before - 50, (
        f"None lost {before - after} references over 2000 QPainter.setPen calls: this Qt binding "
        "would crash the app ('deallocating None'); use another PySide6 release"
    )
