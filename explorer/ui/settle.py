"""Layouts settled before a picture is taken: one way for the screenshot, the printed handout and
the tests, with no window imported (the handout, which the window's menus import, uses it)."""

from __future__ import annotations

#: passes of the event loop before a grab: layouts settle over a few (word-wrapped labels, plots)
SETTLE_PASSES = 5
#: the most passes a layout that keeps moving gets: one that never stops is drawn as it stands
MOST_SETTLE_PASSES = 80


def settle(*, hold_input: bool = False) -> None:
    """Let the layouts settle before a grab: a word-wrapped label's height follows its width, a
    plot's legend columns follow its width and its view's height the legend's rows, each a pass of
    the event loop. Passes run until two in a row leave every widget and plot part where it was; a
    count of passes alone left a busy machine's picture half laid out. ``hold_input``: a key or
    click meanwhile waits (a handout's Page Down would change the step being painted)."""
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    flags = QEventLoop.ProcessEventsFlag.AllEvents
    if hold_input:
        flags = QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents
    last: list[tuple[int, ...]] | None = None
    for done in range(MOST_SETTLE_PASSES):
        QApplication.processEvents(flags)
        now = layout_fingerprint()
        if done >= SETTLE_PASSES - 1 and now == last:
            return
        last = now


def layout_fingerprint() -> list[tuple[int, ...]]:
    """Where every shown widget and every laid-out part of every plot is now, in pixels."""
    from PySide6.QtWidgets import QApplication, QGraphicsView, QGraphicsWidget, QWidget

    found: list[tuple[int, ...]] = []
    for top in QApplication.topLevelWidgets():
        if not top.isVisible():
            continue
        for widget in [top, *top.findChildren(QWidget)]:
            if not widget.isVisible():
                continue
            g = widget.geometry()
            found.append((g.x(), g.y(), g.width(), g.height()))
            if isinstance(widget, QGraphicsView) and widget.scene() is not None:
                for item in widget.scene().items():
                    if isinstance(item, QGraphicsWidget):
                        r = item.sceneBoundingRect()
                        found.append((round(r.x()), round(r.y()), round(r.width()), round(r.height())))
    return found
