"""Every plot of the window is made here, so that it takes pyqtgraph's menus with it when it goes.

pyqtgraph builds each plot's context menus (the ViewBox's "View All" menu, the plot's "Plot
Options" and their sub-menus and control widgets) as widgets without a parent, connected to
their own methods. Qt keeps such a widget for as long as its Python object lives, and the
connections keep that object alive: a plot destroyed with its page left about fifty widgets
behind, each re-polished on every later theme or text-size change. A window opened again (a
second window, the screenshot command's renders, the test suite's thousand windows) grew slower
each time: the suite's window tests ran ten times slower at the end than alone.

``plot_widget`` gives the orphan menus the plot as their parent, keeping their window flags (a
menu still pops up as a menu): they are destroyed with the plot, and their actions' widgets with
them. Only menus: a control widget inside a menu belongs to its ``QWidgetAction``, which deletes
it itself, and a second owner would free it twice (a crash at exit).
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
import shiboken6
from PySide6.QtWidgets import QApplication, QMenu, QWidget


def plot_widget(**kwargs: Any) -> pg.PlotWidget:
    """``pg.PlotWidget(**kwargs)`` whose parentless menus belong to it (their widgets with them)."""
    app = QApplication.instance()
    # by the C++ address: a Python wrapper made for the listing may be gone, and its id reused
    before = {address(w) for w in app.topLevelWidgets()} if isinstance(app, QApplication) else set()
    widget = pg.PlotWidget(**kwargs)
    if isinstance(app, QApplication):
        for orphan in app.topLevelWidgets():
            if address(orphan) not in before and isinstance(orphan, QMenu) and orphan.parent() is None:
                orphan.setParent(widget, orphan.windowFlags())
    return widget


def address(widget: QWidget) -> int:
    """Where the widget lives in C++: the same for as long as it lives, whichever wrapper asks."""
    return int(shiboken6.getCppPointer(widget)[0])
