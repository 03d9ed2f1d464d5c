"""Help > Keyboard shortcuts: every key the app answers to, for a teacher at the front of a room
who drives the animation from the keyboard.

Read from where the keys are bound (the window's menu actions, the visualizer's ``KEYS``), so
the list cannot drift from what the keys do.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QMenu, QMenuBar, QVBoxLayout, QWidget


def menu_shortcuts(bar: QMenuBar) -> list[tuple[str, str]]:
    """(keys, what) for each menu action that has a shortcut, in menu order."""
    rows = []
    for top in bar.actions():
        menu = top.menu()
        if not isinstance(menu, QMenu):  # a plain action on the bar: no items under it
            continue
        for action in menu.actions():
            keys = action.shortcut()
            if not keys.isEmpty():
                rows.append(
                    (keys.toString(QKeySequence.SequenceFormat.NativeText), action.text().replace("&", ""))
                )
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
