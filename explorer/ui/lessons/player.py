"""The lesson player: a narration pane under the pages, the step keys, and the Lessons menu.

A thin view over ``explorer.lessons``: it asks the page a step names to take the step's state
(``Panel.show_lesson_state``) and shows the narration, the note the page returned (an absent GPU
replaced by its catalog sheet) or the one line that says why a step cannot apply. A damaged step
is shown as its line and its narration; the other steps play on. Page Down / Page Up step,
as presenter remotes send them.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QBoxLayout,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLayout,
    QMenu,
    QMenuBar,
    QPushButton,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.catalog import load_catalog
from explorer.errors import UserError
from explorer.inputs import one_line
from explorer.lessons.builtin import builtin_menu
from explorer.lessons.model import Lesson, LessonError, Step
from explorer.lessons.texts import step_counter, step_heading, step_html, step_recorded
from explorer.quiz.answers import record
from explorer.quiz.model import Question, grade
from explorer.ui.guard import qt_guard
from explorer.ui.lessons.ask import AskBox
from explorer.ui.lessons.recorded import RecordedTable
from explorer.ui.theme import BASE_FONT_PT, current_theme, pt, text_scale_pct
from explorer.ui.widgets import ElidedLine
from explorer.words import count

if TYPE_CHECKING:  # pragma: no cover
    from explorer.ui.main_window import MainWindow

#: the narration's text relative to the window's, on the user's screen and in presentation mode
NARRATION_SCALE = {False: 1.1, True: 1.2}
MAX_SHARE = 0.4  # of the window's height, the most the pane takes by itself (a drag may give it more)
MAX_SHARE_RECORDED = 0.45  # ... with a table of recorded results to read beside the run
#: lines of narration the pane shows at least (it scrolls for the rest); from 200% text each line
#: is twice as tall and two are as much of a short screen as three were
LEAST_LINES = 3
LEAST_LINES_LARGE = 2


def sentences(*parts: str) -> str:
    """Notes joined into one line, each ending as a sentence ("... at least 1. This lesson was
    written by a newer ..."): a problem line ends without a full stop of its own."""
    return " ".join(p if p.rstrip().endswith((".", "!", "?", "…")) else p + "." for p in parts if p)


class LessonPlayer(QDockWidget):
    """``LessonPlayer(window)``: docked under the pages; hidden until a lesson is open."""

    body: QWidget  # the narration and its buttons, folded away when the pages need the room

    def __init__(self, window: MainWindow) -> None:
        super().__init__("Lesson", window)
        self.setObjectName("lessonPlayer")
        self.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
        self.setTitleBarWidget(QWidget())  # the pane's own row says what it is
        self.window_ = window
        self.lesson: Lesson | None = None
        self.index = 0
        self.note = ""  # what the page said about the step shown (a fallback), or why it failed
        self._pending = False  # a step waits for device discovery before it can apply
        self._presenting = False
        self._expanded = True
        #: the narration folded by the teacher, per lesson (by its file, or its title before it has
        #: one), for as long as the window runs: it stays folded from step to step and when the
        #: lesson is opened again, and another lesson opens with its words shown
        self._folded: dict[str, bool] = {}
        #: predict steps answered in this window's run, per lesson and step: their grade line
        self._answered: dict[tuple[str, int], str] = {}
        self._question: Question | None = None  # the predict step's question now asked
        self.ask_first = False  # Predict mode (Lessons > Ask before predict steps, P)

        # one line whatever its length (a wrapped title would grow the row the pane is sized by):
        # where the row is short the step's own title, whole (at 150% on 1024x768 "Why 25%
        # occupancy can still be enough: 16…" said nothing of the step), ending in "…" only where
        # that is too long as well; the whole title is on hover
        self.title_label = ElidedLine("")
        self.title_label.setObjectName("lessonTitle")
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.previous_button = QPushButton("< Previous")
        self.previous_button.setToolTip("Previous step (Page Up)")
        self.counter_label = QLabel("")
        self.counter_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.next_button = QPushButton("Next >")
        self.next_button.setToolTip("Next step (Page Down)")
        self.collapse_button = QToolButton()
        self.collapse_button.setAutoRaise(True)
        self.collapse_button.clicked.connect(self.toggle_narration)
        self.menu_button = QToolButton()
        self.menu_button.setText("Lesson")
        self.menu_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.collapse_button)
        row.addWidget(self.title_label, 1)
        row.addWidget(self.previous_button)
        row.addWidget(self.counter_label)
        row.addWidget(self.next_button)
        row.addWidget(self.menu_button)

        self._note_error = False
        self.narration = QTextBrowser()
        self.narration.setOpenExternalLinks(True)
        # the keys stay with the window: Page Down steps the lesson instead of scrolling this pane
        self.narration.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        # a step's recorded results: a table of their own, never rows of the narration's document
        self.recorded_table = RecordedTable()
        self.recorded_table.hide()
        self.body = QWidget()
        # the table under the narration, or beside it where the window is too short for both
        # stacked (1280x800 at 200%: the page, two lines of words and a table's rows)
        self._body_layout = QBoxLayout(QBoxLayout.Direction.TopToBottom, self.body)
        self._body_layout.setContentsMargins(0, 0, 0, 0)
        self.ask_box = AskBox(self._commit)
        self.ask_box.hide()
        self._body_layout.addWidget(self.ask_box)
        self._body_layout.addWidget(self.narration, 1)
        self._body_layout.addWidget(self.recorded_table, 1)

        inner = QWidget()
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.addLayout(row)
        layout.addWidget(self.body, 1)
        self.setWidget(inner)

        self.previous_button.clicked.connect(self.previous)
        self.next_button.clicked.connect(self.next)
        window.context.discovery_changed.connect(lambda _d: self._discovery_arrived())
        self._build_actions()
        self.hide()
        self.set_expanded(True)
        window.installEventFilter(self)

    # --- menu and keys ------------------------------------------------------------------------
    def _action(self, text: str, slot: Callable[[], object], keys: tuple[str, ...] = ()) -> QAction:
        action = QAction(text, self.window_)
        action.triggered.connect(lambda _checked=False: slot())
        if keys:
            action.setShortcuts([QKeySequence(k) for k in keys])
            # the keys work in presentation mode too, where the menu bar is hidden
            self.window_.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action("&Open lesson file…", self.open_dialog, ("Ctrl+O",))
        self.next_action = self._action("&Next step", self.next, ("PgDown",))
        self.previous_action = self._action("&Previous step", self.previous, ("PgUp",))
        self.save_step_action = self._action("Save current state as a &step", self.save_current_as_step)
        self.save_lesson_action = self._action("Save &lesson…", self.save_dialog)
        self.close_action = self._action("&Close lesson", self.close_lesson)
        # one key, no modifier, as a presenter reaches it mid-sentence (a text field being edited
        # keeps its letters: Qt lets it override the window's shortcut)
        self.narration_action = self._action("Lesson &narration", self.toggle_narration, ("N",))
        self.narration_action.setCheckable(True)
        self.narration_action.setToolTip(
            "Fold the lesson's words to their title line, so the figure takes the height (N)"
        )
        # Predict mode: a step with a question asks it before its picture (P); off, every step
        # shows at once, as a teacher walking through the lesson alone wants
        self.ask_action = self._action("&Ask before predict steps", self.toggle_ask_first, ("P",))
        self.ask_action.setCheckable(True)
        self.ask_action.setToolTip(
            "Predict, then reveal: a step with a question asks the class before it shows its picture (P)"
        )
        lesson_menu = QMenu(self)
        for action in (
            self.previous_action,
            self.next_action,
            self.narration_action,
            self.ask_action,
            self.save_step_action,
            self.save_lesson_action,
            self.close_action,
        ):
            lesson_menu.addAction(action)
        self.menu_button.setMenu(lesson_menu)
        self._update_actions()

    def build_menu(self, bar: QMenuBar, before: QAction | None = None) -> QMenu:
        """The window's Lessons menu: open a file, the built-in lessons, the step commands."""
        menu = QMenu("&Lessons", bar)
        menu.addAction(self.open_action)
        builtin = menu.addMenu("&Built-in lessons")
        for info in builtin_menu():  # titles only: each lesson is checked when opened
            action = builtin.addAction(f"{info.title} ({info.steps} steps)")
            action.setToolTip(str(info.path))
            action.triggered.connect(lambda _c=False, p=info.path: self.open_path(p))
        menu.addSeparator()
        for action in (self.previous_action, self.next_action):
            menu.addAction(action)
        menu.addSeparator()
        for action in (self.save_step_action, self.save_lesson_action, self.close_action):
            menu.addAction(action)
        if before is not None:
            bar.insertMenu(before, menu)
        else:
            bar.addMenu(menu)
        return menu

    def _update_actions(self) -> None:
        has = self.lesson is not None
        count = len(self.lesson.steps) if self.lesson is not None else 0
        self.previous_action.setEnabled(has and self.index > 0)
        self.next_action.setEnabled(has and self.index < count - 1)
        self.previous_button.setEnabled(self.previous_action.isEnabled())
        self.next_button.setEnabled(self.next_action.isEnabled())
        self.save_lesson_action.setEnabled(has)
        self.close_action.setEnabled(has)
        self.narration_action.setEnabled(has)
        self.narration_action.setChecked(has and self._expanded)

    # --- opening, stepping --------------------------------------------------------------------
    def open_path(self, path: str | Path, step: int = 0) -> bool:
        """Open a lesson file; a file that is no lesson is a message, and the window carries on."""
        # the reader checks steps against every page's model: imported when a lesson is opened,
        # not before the window's first paint
        from explorer.lessons.files import load_lesson

        try:
            lesson = load_lesson(path)
        except LessonError as exc:
            self._say(str(exc), error=True)
            return False
        self.open(lesson, step)
        return True

    def open(self, lesson: Lesson, step: int = 0) -> None:
        self.lesson = lesson
        self._expanded = not self._folded.get(self._lesson_key(), False)
        self.show()
        self.show_step(max(0, min(step, len(lesson.steps) - 1)))
        problems = lesson.problems
        if problems:
            # the damaged steps named at opening, with what the step shown says (its catalog
            # fallback, the newer-version note); a damaged step shown is in the list already
            shown = lesson.steps[self.index]
            said = [lesson.newer_note] if shown.problem else [self.note]
            self._say(
                sentences(
                    f"{count(len(problems), 'step')} of this lesson cannot be shown: " + "; ".join(problems),
                    *said,
                ),
                error=bool(shown.problem),
            )

    def show_step(self, index: int) -> None:
        """Show step ``index`` (0-based): the page, its state, the narration and any note."""
        if self.lesson is None:
            return
        self.index = index
        step = self.lesson.steps[index]
        heading = step_heading(self.lesson, index)
        self.title_label.setText(heading)
        self.title_label.set_shorter(step.title)  # the lesson's title is on hover
        self.title_label.setToolTip("\n".join(t for t in (heading, self.lesson.summary) if t))
        self.counter_label.setText(step_counter(index, len(self.lesson.steps)))
        self._question = self._unanswered_question(step)
        self.ask_box.setVisible(self._question is not None)
        self.narration.setVisible(self._question is None)
        if self._question is not None:  # asked first: the page and the words wait for the commit
            self.ask_box.ask(self._question)
            self.recorded_table.set_recorded(None)
            self._update_actions()
            self._fit_height()
            return
        self._render()
        self.recorded_table.set_recorded(step_recorded(step))
        self._update_actions()
        self._fit_height()
        if self.window_.context.discovery is None:
            self._pending = True  # the devices are not known yet: apply when they are
            self._set_note("Looking for devices before this step can be shown…")
            return
        self._apply(step)
        # the page the step shows may have been built just now, or opened a column: the room it
        # leaves the narration is known once its layout has settled
        QTimer.singleShot(0, self._fit_height)

    def toggle_ask_first(self) -> None:
        self.ask_first = not self.ask_first
        self.ask_action.setChecked(self.ask_first)
        if self.lesson is not None:
            self.show_step(self.index)

    def _unanswered_question(self, step: Step) -> Question | None:
        """The step's predict question if it has one not yet answered in this run (one that cannot
        be built is a note, and the step shows as it is)."""
        if not self.ask_first or self.lesson is None or (self._lesson_key(), self.index) in self._answered:
            return None
        from explorer.lessons.predict import step_question  # the quiz's topics: only for a step shown

        gpus = self.window_.context.gpus
        try:
            return step_question(step, list(gpus) or load_catalog())
        except UserError as exc:
            self.window_.statusBar().showMessage(
                one_line(f"This step's question cannot be asked: {exc}"), 15000
            )
            return None

    def _commit(self, given: str, confidence: str) -> None:
        """The student committed a prediction: grade it, keep it, then show the step."""
        q = self._question
        if q is None or self.lesson is None:
            return
        g = grade(q, given)
        lesson_name = self.lesson.path.stem if self.lesson.path is not None else self.lesson.title
        try:
            record(q, g.given, confidence, g.right, lesson=lesson_name, step=str(self.index + 1))
        except (OSError, UserError) as exc:  # the answer is still shown; only its keeping failed
            self.window_.statusBar().showMessage(one_line(f"your answer was not kept: {exc}"), 15000)
        verdict = "Right" if g.right else "Not right"
        self._answered[(self._lesson_key(), self.index)] = (
            f"{verdict} ({confidence}): {g.said}. {q.explanation}"
        )
        self.show_step(self.index)

    def _discovery_arrived(self) -> None:
        if self._pending and self.lesson is not None:
            self._apply(self.lesson.steps[self.index])

    def _apply(self, step: Step) -> None:
        self._pending = False
        notes = [self.lesson.newer_note] if self.lesson is not None and self.lesson.newer_note else []
        if step.problem or step.state is None:
            if step.panel:
                self.window_.show_panel(step.panel)
            self._set_note(sentences(f"This step cannot be shown: {step.problem}", *notes), error=True)
            return
        panel = self.window_.show_panel(step.panel)
        try:
            note = panel.show_lesson_state(step.state)
        except UserError as exc:
            self._set_note(one_line(f"Step {self.index + 1} cannot be shown here: {exc}"), error=True)
            return
        answered = self._answered.get((self._lesson_key(), self.index), "") if self.lesson is not None else ""
        self._set_note(sentences(answered, note, *notes))

    def next(self) -> None:
        if self.lesson is not None and self.index < len(self.lesson.steps) - 1:
            self.show_step(self.index + 1)

    def previous(self) -> None:
        if self.lesson is not None and self.index > 0:
            self.show_step(self.index - 1)

    def close_lesson(self) -> None:
        self.lesson = None
        if self.note and self.window_.statusBar().currentMessage() == self.note:
            self.window_.statusBar().clearMessage()  # the closed lesson's words go with it
        self.note = ""
        for panel in self.window_.panels.values():  # a recording belongs to its lesson
            panel.lesson_closed()
        self._pending = False
        self._update_actions()
        self.hide()

    # --- building a lesson by doing it --------------------------------------------------------
    def save_current_as_step(self, narration: str | None = None) -> Step | None:
        """Record the page shown now as a new step after the current one (a new lesson when none
        is open). ``narration`` ``None`` asks for it in a dialog."""
        key = self.window_.current_panel_key()
        state = self.window_.current_panel().lesson_state()
        if state is None:
            self._say("This page has nothing a lesson step can hold yet.", error=True)
            return None
        if narration is None:
            text, ok = QInputDialog.getMultiLineText(
                self.window_,
                "Save current state as a step",
                'What to say at this step (plain text; **bold**, `code`, a line starting "- " is a list item):',
            )
            if not ok:
                return None
            narration = text
        step = Step(panel=key, state=state, narration=narration)
        if self.lesson is None:
            self.lesson = Lesson(title="Untitled lesson", steps=[step])
            self.show()
            self.show_step(0)
        else:
            self.lesson.steps.insert(self.index + 1, step)
            self.show_step(self.index + 1)
        return step

    def save_dialog(self) -> None:
        if self.lesson is None:
            return
        start = self.lesson.path if self.lesson.path is not None else Path.home() / "lesson.json"
        path_text, _filter = QFileDialog.getSaveFileName(
            self.window_, "Save lesson", str(start), "Lesson (*.json)"
        )
        if path_text:
            self.save_to(Path(path_text) if path_text.endswith(".json") else Path(path_text + ".json"))

    def save_to(self, path: Path) -> Path | None:
        if self.lesson is None:
            return None
        from explorer.lessons.files import save_lesson

        try:
            written = save_lesson(self.lesson, path)
        except LessonError as exc:
            self._say(str(exc), error=True)
            return None
        self.window_.statusBar().showMessage(f"Lesson saved to {written}", 8000)
        return written

    def open_dialog(self) -> None:
        path_text, _filter = QFileDialog.getOpenFileName(
            self.window_, "Open lesson", str(Path.home()), "Lesson (*.json);;All files (*)"
        )
        if path_text:
            self.open_path(path_text)

    # --- looks --------------------------------------------------------------------------------
    def _lesson_key(self) -> str:
        """What the fold is remembered by: the lesson's file, or its title before it has one."""
        if self.lesson is None:
            return ""
        return str(self.lesson.path) if self.lesson.path is not None else "title:" + self.lesson.title

    def narration_shown(self) -> bool:
        """Whether the lesson's words show (``False``: folded to the title line by the teacher)."""
        return self._expanded and self.body.isVisible()

    def toggle_narration(self) -> None:
        """N, View > Lesson narration or the pane's arrow: the words fold to the title line and
        the page above takes the height, or come back; remembered for this lesson."""
        if self.lesson is not None:
            self.set_expanded(not self._expanded, by_user=True)

    def set_expanded(self, expanded: bool, by_user: bool = False) -> None:
        """The narration folds away to one row (the step keys stay) and comes back, at the
        teacher's click only: it never folds by itself (at 150% on a 1024x768 projector it did,
        and a class saw no words at all). Where the window is short it scrolls instead."""
        self._expanded = expanded
        if by_user and self.lesson is not None:
            self._folded[self._lesson_key()] = not expanded
        self.narration_action.setChecked(self.lesson is not None and expanded)
        self._fit_height()

    @qt_guard
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window_ and event.type() == QEvent.Type.Resize and not self.isHidden():
            QTimer.singleShot(0, self._fit_height)  # the room for the pane changed with the window
        return False

    def page_least_changed(self) -> None:
        """The page above asks for another least height (its wrapped text settled at the window's
        new width after the pane was sized): the pane takes again what the page leaves it. At
        1280x800 and 200% the pane was sized first and the latency page scrolled 30 px."""
        if not self.isHidden():
            QTimer.singleShot(0, self, self._fit_height)  # (dropped if the window closes first)

    def apply_text_scale(self, _percent: int, presenting: bool) -> None:
        """The narration follows the window's text size, a notch larger (more in presentation mode)."""
        self._presenting = presenting
        font = self.narration.font()
        font.setPointSizeF(pt(BASE_FONT_PT) * NARRATION_SCALE[presenting])
        self.narration.setFont(font)
        self.narration.document().setDefaultFont(font)
        self._fit_height()

    def _fit_height(self) -> None:
        """As tall as the step's narration needs, so it shows in full (its "Look for:" line too)
        where the page above can spare the room: the page keeps its own least height, so its
        fields never overlap, and the pane takes at most ``MAX_SHARE`` of the window by itself
        (a drag gives it more). A narration longer than that scrolls; the pane always shows at
        least ``LEAST_LINES`` of it."""
        outer = _pane_layout(self.widget())
        margins = outer.contentsMargins()
        # the title row, the pane's margins and the space between the row and the words (a guess
        # of 14 px left the words 2 px short of their least, cut off at the bottom)
        first = outer.itemAt(0)  # the title row
        title_h = first.sizeHint().height() if first is not None else 0
        row = title_h + margins.top() + margins.bottom() + outer.spacing()
        folded = not self._expanded
        self.body.setVisible(not folded)
        self.collapse_button.setText("▸" if folded else "▾")
        self.collapse_button.setToolTip("Show the narration" if folded else "Hide the narration")
        if folded:
            self.setMinimumHeight(row)
            self.setMaximumHeight(row)
            return
        with_table = not self.recorded_table.isHidden()
        share = MAX_SHARE_RECORDED if with_table else MAX_SHARE
        spare = min(int(self.window_.height() * share), self._room()) - row
        least = self._lines()
        table_least = self.recorded_table.least_height() if with_table else 0
        # the table and at least its least lines of narration, one above the other where they fit,
        # else side by side (each scrolls): neither is ever squeezed to a sliver
        beside = with_table and spare < least + table_least + self._body_layout.spacing()
        self._body_layout.setDirection(
            QBoxLayout.Direction.LeftToRight if beside else QBoxLayout.Direction.TopToBottom
        )
        width = self.window_.width() - 40
        if beside:
            width = (width - self._body_layout.spacing()) // 2
        # measured on a copy: the pane's own document keeps the width its view gives it (set
        # here, a width wider than the view made it scroll sideways)
        document = self.narration.document().clone(self)
        document.setTextWidth(
            width - 2 * self.narration.frameWidth() - self.narration.verticalScrollBar().sizeHint().width()
        )
        text_height = int(document.size().height()) + 2 * self.narration.frameWidth() + 4
        document.deleteLater()
        words_least = min(text_height, least)
        self.recorded_table.setMinimumHeight(table_least)
        self.narration.setMinimumHeight(words_least if with_table else 0)
        if beside:
            text_height, least_height = (
                max(text_height, self.recorded_table.wanted_height()),
                max(words_least, table_least),
            )
        elif with_table:  # the table takes its rows' height; squeezed, it and the narration scroll
            text_height += self.recorded_table.wanted_height() + self._body_layout.spacing()
            least_height = words_least + table_least + self._body_layout.spacing()
        else:
            least_height = words_least
        note = 0  # (the note is the narration's first paragraph, and scrolls with it)
        room = max(spare - note, least_height)
        height = row + note + min(text_height, room)
        self.setMinimumHeight(row + note + least_height)
        self.setMaximumHeight(16777215)
        if not self.isHidden():  # a hidden dock is not in the window's layout yet
            self.window_.resizeDocks([self], [height], Qt.Orientation.Vertical)
            if self.height() > height:
                # resizeDocks does not shrink a dock whose body just changed direction (lesson
                # 12's last step at 200% on 1280x800 kept 250 px of the 162 asked, and the page
                # above scrolled): hold it to the height once, then let a drag give it more
                self.setMaximumHeight(height)
                QTimer.singleShot(0, self, self._release_height)

    def _lines(self) -> int:
        """``LEAST_LINES`` lines of narration: the least the pane shows when it shows any."""
        lines = LEAST_LINES if text_scale_pct() < 200 else LEAST_LINES_LARGE
        return self.narration.fontMetrics().lineSpacing() * lines + 2 * self.narration.frameWidth() + 4

    def _release_height(self) -> None:
        self.setMaximumHeight(16777215)

    def _room(self) -> int:
        """Height the pages can spare for the pane: what they and the pane share, less what the
        page shown needs so that its fields never overlap and its figures show whole (a figure
        that scrolls in its own area gets its height before the words take more than their least
        lines: at 150% on 1024x768 the latency chart scrolled while the words had six lines)."""
        central = self.window_.centralWidget()
        assert central is not None  # the main window sets its pages before any lesson opens
        shared = central.height() + (0 if self.isHidden() else self.height())
        return shared - self.window_.central_wanted_height()

    def _render(self) -> None:
        """The narration pane's text: the note (in the theme's warning or error colour, escaped),
        then the step's narration and any recorded results, in one document that scrolls as one:
        a note in a box of its own above it took the narration's room on a short screen."""
        theme = current_theme()
        note = ""
        if self.note:
            colour = theme.error if self._note_error else theme.banner_text
            background = "" if self._note_error else f" background-color:{theme.banner_bg};"
            note = f"<p style='color:{colour};{background} font-weight:600'>{escape(self.note)}</p>"
        step = self.lesson.steps[self.index] if self.lesson is not None and self.lesson.steps else None
        self.narration.setHtml(note + (step_html(step) if step is not None else ""))

    def _set_note(self, text: str, error: bool = False) -> None:
        before, self.note = self.note, text
        self._note_error = error
        self._render()
        bar = self.window_.statusBar()
        if text:  # also where a folded pane cannot hide it
            bar.showMessage(text, 20000)
        elif before and bar.currentMessage() == before:  # the last step's note, not this one's
            bar.clearMessage()
        self._fit_height()

    def _say(self, text: str, error: bool = False) -> None:
        """A message about the lesson as a whole, in the pane (shown for it) and the status bar;
        never a modal box, so a presenter's remote never lands on a dialog."""
        line = one_line(text)
        self.window_.statusBar().showMessage(line, 15000)
        self.show()
        self._set_note(line, error=error)


def _pane_layout(widget: QWidget | None) -> QLayout:
    """The pane's own layout (its title row first), which ``__init__`` sets before any fitting."""
    layout = widget.layout() if widget is not None else None
    assert layout is not None
    return layout
