"""The main window made offscreen, as ``screenshot`` and a printed handout render it: one way to
make it, so a handout's figure is the picture ``screenshot --lesson`` gives of the same step."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from explorer.ui.main_window import MainWindow


def quiet_offscreen_warning() -> None:
    """The offscreen plugin warns that it "does not support propagateSizeHints()" on every
    window; that is noise in a command whose output is one path. Other messages pass through."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(mode, context, message):
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


def discard(window: MainWindow) -> None:
    """Close the rendered window and free it: one process may render many (the self-test, the
    render walk), and a window only closed keeps its hundreds of widgets, each re-polished by
    every later window's theme and text size."""
    window.close()
    window.deleteLater()
