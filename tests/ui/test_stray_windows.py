"""No page shows a widget of its own as a window: a widget made visible before it is put in its
place is a top-level window for that moment, which takes the focus and the keys from the main
window (the Predict box's question picker did, and Space, the arrows and N stopped working)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from explorer.ui.pages import PAGE_KEYS
from explorer.ui.settle import settle


def test_building_and_showing_every_page_opens_no_other_window(catalog_window, qtbot):
    window = catalog_window
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=30_000)
    window.tabs.tabBar().setFocus()
    for key in PAGE_KEYS:
        window.show_panel(key)
        settle()
        others = [w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not window]
        assert not others, (key, [type(w).__name__ for w in others])
        assert QApplication.activeWindow() is window, key
    for predict in (
        window.panels["memory"].predict_button,
        window.panels["visualizer"].occupancy_view.predict_button,
    ):
        predict.click()
        settle()
        assert QApplication.activeWindow() is window
        assert not [w for w in QApplication.topLevelWidgets() if w.isVisible() and w is not window]
