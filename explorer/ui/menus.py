"""The main window's menus and the keys they carry, built in one place.

Kept out of ``MainWindow`` so the window's class stays about its pages, its screen and its text
size; the actions it needs again later (to check a page, to enable Export, to follow the theme
and presentation mode) come back as one record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDialog, QMenu

from explorer.ui.pages import PAGES
from explorer.ui.theme import TEXT_SCALE_MIN

if TYPE_CHECKING:
    from explorer.ui.main_window import MainWindow


@dataclass(frozen=True)
class WindowActions:
    """The actions the window changes after they are built."""

    export: QAction
    pages: dict[str, QAction]  # by page key
    dark: QAction
    presentation: QAction
    refresh: QAction
    help_menu: QMenu
    view_menu: QMenu
    #: where the lesson player's View items go (its narration key), after the text sizes
    lesson_place: QAction


def _export_handout(window: MainWindow) -> None:
    """The handout dialog, imported when asked for: its PDF pages import every page's model,
    which the window's first paint should not wait for."""
    from explorer.ui.handout import export_handout_dialog

    export_handout_dialog(window)


def build_menus(window: MainWindow) -> WindowActions:
    """File, View and Help, with their keys (the text-size and presentation keys also on the
    window itself, so they work in full screen, where the menu bar is hidden)."""
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    export = QAction("&Export…", window)
    export.setShortcut(QKeySequence("Ctrl+E"))
    export.triggered.connect(window.export_current)
    file_menu.addAction(export)
    handout = QAction("Export &handout…", window)
    handout.setToolTip("Print a lesson to a PDF: each step's figure, title, narration and numbers")
    handout.triggered.connect(lambda: _export_handout(window))
    file_menu.addAction(handout)
    file_menu.addSeparator()
    quit_action = QAction("&Quit", window)
    quit_action.setShortcut(QKeySequence.StandardKey.Quit)
    quit_action.setMenuRole(QAction.MenuRole.QuitRole)
    quit_action.triggered.connect(window.close)
    file_menu.addAction(quit_action)

    view_menu = bar.addMenu("&View")
    group = QActionGroup(window)
    pages: dict[str, QAction] = {}
    for number, spec in enumerate(PAGES, start=1):
        action = QAction(spec.title, window, checkable=True)
        action.setShortcut(QKeySequence(f"Ctrl+{number}"))
        action.triggered.connect(lambda _checked=False, k=spec.key: window.show_panel(k))
        group.addAction(action)
        view_menu.addAction(action)
        pages[spec.key] = action
    view_menu.addSeparator()
    dark = QAction("&Dark theme", window, checkable=True)
    dark.setShortcut(QKeySequence("Ctrl+Shift+D"))
    dark.toggled.connect(lambda on: window.set_theme("dark" if on else "light"))
    view_menu.addAction(dark)
    view_menu.addSeparator()
    presentation = QAction("&Presentation mode", window, checkable=True)
    presentation.setShortcuts([QKeySequence("F11"), QKeySequence("Ctrl+Shift+F")])
    presentation.setToolTip("Full screen with the projector's text size (Esc leaves)")
    presentation.toggled.connect(window.set_presentation)
    view_menu.addAction(presentation)
    text_menu = view_menu.addMenu("&Text size")
    larger = QAction("&Larger", window)
    larger.setShortcuts([QKeySequence("Ctrl+="), QKeySequence("Ctrl++")])
    larger.triggered.connect(lambda: window.change_text_scale(1))
    smaller = QAction("&Smaller", window)
    smaller.setShortcut(QKeySequence("Ctrl+-"))
    smaller.triggered.connect(lambda: window.change_text_scale(-1))
    actual = QAction("&Actual size (100%)", window)
    actual.setShortcut(QKeySequence("Ctrl+0"))
    actual.triggered.connect(lambda: window.apply_text_scale(TEXT_SCALE_MIN))
    for action in (larger, smaller, actual):
        text_menu.addAction(action)
        window.addAction(action)  # keys work in full screen too, where the menu bar is hidden
    window.addAction(presentation)
    predict = QAction("Pred&ict on this page", window)
    predict.setShortcut(QKeySequence("Ctrl+Shift+P"))
    predict.setToolTip("Predict, then reveal: the page's answer stays hidden until you commit a prediction")
    predict.triggered.connect(window.toggle_predict)
    view_menu.addAction(predict)
    window.addAction(predict)
    lesson_place = view_menu.addSeparator()
    refresh = QAction("&Refresh devices", window)
    refresh.setShortcut(QKeySequence.StandardKey.Refresh)
    refresh.triggered.connect(window.refresh_devices)
    view_menu.addAction(refresh)

    help_menu = bar.addMenu("&Help")
    keys = QAction("&Keyboard shortcuts", window)
    keys.setShortcut(QKeySequence.StandardKey.HelpContents)
    keys.triggered.connect(window.show_shortcuts)
    help_menu.addAction(keys)
    about = QAction("&About Device Explorer", window)
    about.setMenuRole(QAction.MenuRole.AboutRole)
    about.triggered.connect(window.show_about)
    help_menu.addAction(about)
    return WindowActions(export, pages, dark, presentation, refresh, help_menu, view_menu, lesson_place)


def add_quiz_items(window: MainWindow, lessons_menu: QMenu) -> None:
    """Lessons > Practice… (questions by topic, scored per concept) and Gather class answers…"""
    lessons_menu.addSeparator()
    practice = QAction("&Practice…", window)
    practice.setToolTip("Questions by topic: predict, commit, then see the answer and the rule")
    practice.triggered.connect(lambda: _open(_practice_dialog(window)))
    lessons_menu.addAction(practice)
    gather = QAction("&Gather class answers…", window)
    gather.setToolTip(
        "A folder of students' answers files: each question's answers, confidence and share right"
    )
    gather.triggered.connect(lambda: _open(_gather_dialog(window)))
    lessons_menu.addAction(gather)


def _open(dialog: QDialog) -> None:
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # each opening starts afresh
    dialog.open()


def _practice_dialog(window: MainWindow) -> QDialog:
    # imported when asked for: the quiz's topics import the memory and tiling models
    from explorer.ui.quiz.practice_dialog import PracticeDialog

    return PracticeDialog(window)


def _gather_dialog(window: MainWindow) -> QDialog:
    from explorer.ui.quiz.gather_dialog import GatherDialog

    return GatherDialog(window)
