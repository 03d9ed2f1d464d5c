"""A window closed and freed takes every widget it made with it, pyqtgraph's menus included.

pyqtgraph made each plot's context menus without a parent, and their own signal connections kept
them alive: every window left about a hundred widgets behind, each re-polished by every later
window's theme and text-size change. A process that opens windows one after another (the
self-test's and the render walk's renders, a second window, this test suite) grew slower with
each: the suite's last window tests ran ten times slower than alone.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from explorer.ui.context import AppContext
from explorer.ui.main_window import PAGE_KEYS, MainWindow
from explorer.ui.plot_widget import address
from tests.ui.machines import lab_discovery


def _flush(app: QApplication) -> None:
    gc.collect()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    gc.collect()


def _named(widget: QWidget) -> str:
    text = widget.text() if isinstance(widget, QLabel) else ""
    return f"{type(widget).__name__} {widget.objectName()!r} {text[:40]!r}"


def _widgets(app: QApplication) -> set[int]:
    """The widgets alive, by C++ address: a widget Qt made (a scroll bar) gets a new Python wrapper
    at each listing, so ``id`` would call it new every time."""
    return {address(w) for w in app.allWidgets()}


def test_a_freed_window_leaves_no_widget_behind(qapp):
    _flush(qapp)
    before = _widgets(qapp)
    window = MainWindow(AppContext(lab_discovery()), discover_on_show=False)
    window.resize(1280, 800)
    window.show()
    for key in PAGE_KEYS:  # every page built and shown, its plots among them
        window.show_panel(key)
        qapp.processEvents()
    window.panels["memory"].show_screenshot_view("tiling")  # the tiling tab's two plots
    qapp.processEvents()
    assert len(_widgets(qapp) - before) > 100  # it made widgets, menus among them
    window.close()
    window.deleteLater()
    del window
    _flush(qapp)
    left = [w for w in qapp.allWidgets() if address(w) not in before]
    assert not left, f"{len(left)} widgets outlived their window: " + ", ".join(sorted(map(_named, left)))


def test_rendering_windows_one_after_another_frees_each(qapp):
    """The screenshot command's renders (and the self-test's) free their windows as they go."""
    from explorer.commands.gui import render_window

    _flush(qapp)
    before = _widgets(qapp)
    for panel in ("benchmarks", "memory"):
        image = render_window(panel, (1024, 768))
        assert (image.width(), image.height()) == (1024, 768)
    _flush(qapp)
    left = [w for w in qapp.allWidgets() if address(w) not in before]
    assert not left, f"{len(left)} widgets outlived their window: " + ", ".join(sorted(map(_named, left)))
