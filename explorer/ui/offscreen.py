"""The main window made offscreen, as ``screenshot`` and a printed handout render it: one way to
make it, so a handout's figure is the picture ``screenshot --lesson`` gives of the same step."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from explorer.ui.main_window import MainWindow

#: passes of the event loop before a grab: layouts settle over a few (word-wrapped labels, plots)
SETTLE_PASSES = 5
#: the most passes a layout that keeps moving gets: one that never stops is drawn as it stands
MOST_SETTLE_PASSES = 80


def quiet_offscreen_warning() -> None:
    """The offscreen plugin warns that it "does not support propagateSizeHints()" on every
    window; that is noise in a command whose output is one path. Other messages pass through."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message):  # noqa: ANN001 (Qt's signature)
        if "propagateSizeHints" in message:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            print(message, file=sys.stderr)

    previous = qInstallMessageHandler(handler)


def offscreen_window(panel: str | None, size: tuple[int, int], scale: int = 100) -> MainWindow:
    """The main window showing ``panel`` at ``scale`` percent text, ``size`` wherever its pages
    fit it, shown on the offscreen platform (unless QT_QPA_PLATFORM says otherwise) with this
    machine's devices and the catalog found before it is built, so a lesson step applies at once."""
    # A rendering never needs a real screen; offscreen also gives the same picture everywhere.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from explorer.devices.discover import discover
    from explorer.ui.app import create_application
    from explorer.ui.context import AppContext
    from explorer.ui.main_window import MainWindow

    quiet_offscreen_warning()
    app = create_application()
    context = AppContext(discover(include_catalog=True))
    window = MainWindow(context, discover_on_show=False, panel=panel)
    window.apply_text_scale(scale)
    window.resize(*size)
    window.show()
    app.processEvents()
    return window


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


def discard(window: MainWindow) -> None:
    """Close the rendered window and free it: one process may render many (the self-test, the
    render walk), and a window only closed keeps its hundreds of widgets, each re-polished by
    every later window's theme and text size."""
    window.close()
    window.deleteLater()
