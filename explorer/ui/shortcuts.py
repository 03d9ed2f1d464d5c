"""Help > Keyboard shortcuts: every key the app answers to, for a teacher at the front of a room
who drives the animation from the keyboard.

Read from where the keys are bound (the window's menu actions, the visualizer's ``KEYS``), so
the list cannot drift from what the keys do.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QMenu, QMenuBar, QVBoxLayout, QWidget


def menu_shortcuts(bar: QMenuBar) -> list[tuple[str, str]]:
    """(keys, what) for each menu action that has a shortcut, in menu order, submenus included
    (View > Text size's Ctrl+= / Ctrl+- / Ctrl+0 were missing); an action with several keys
    lists them all ("Ctrl+= or Ctrl++")."""
    rows: list[tuple[str, str]] = []

    def walk(actions: list[QAction], within: str) -> None:
        for action in actions:
            words = action.text().replace("&", "")
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                walk(submenu.actions(), f"{words}: ")
                continue
            keys = [
                k.toString(QKeySequence.SequenceFormat.NativeText)
                for k in action.shortcuts()
                if not k.isEmpty()
            ]
            if keys:
                rows.append((" or ".join(keys), within + words))

    for top in bar.actions():
        menu = top.menu()
        if isinstance(menu, QMenu):  # a plain action on the bar has no items under it
            walk(menu.actions(), "")
    return rows


def visualizer_shortcuts() -> list[tuple[str, str]]:
    from explorer.ui.visualizer.panel import KEYS

    return [
        (QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText), words)
        for keys, words, _action in KEYS
        if words
    ]


def shortcuts_html(sections: list[tuple[str, list[tuple[str, str]]]]) -> str:
    parts = []
    for title, rows in sections:
        parts.append(f"<h3>{escape(title)}</h3><table cellspacing='0' cellpadding='3'>")
        parts.extend(
            f"<tr><td><b>{escape(keys)}</b>&nbsp;&nbsp;&nbsp;</td><td>{escape(words)}</td></tr>"
            for keys, words in rows
        )
        parts.append("</table>")
    return "".join(parts)


class ShortcutsDialog(QDialog):
    def __init__(self, bar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.sections = [
            ("Window", menu_shortcuts(bar)),
            ("Launch visualizer (while it has the focus)", visualizer_shortcuts()),
        ]
        layout = QVBoxLayout(self)
        self.label = QLabel(shortcuts_html(self.sections))
        self.label.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
