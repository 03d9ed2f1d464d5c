"""A class's answers in a dialog: pick the folder of the students' files, see per question the
answers' and the confidences' histograms and the share right, and which files were left out and
why. A damaged or hostile file is one line in the skipped list, never an error box."""

from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from explorer.errors import UserError
from explorer.quiz.answers import CONFIDENCES, Gathered, gather
from explorer.ui.plot_text import TidyAxis, axis_title, hold_plot_lines, plot_title, restyle
from explorer.ui.plot_widget import plot_widget
from explorer.ui.theme import current_theme
from explorer.ui.widgets import ELIDE_ALLOWED, SCROLL_ALLOWED, scrolling

COLUMNS = ("question", "students", "right", "share right", "answers", "confidence")  # each "x (count)"


class GatherDialog(QDialog):
    """The gathered answers as a table, one row per question; the skipped files listed below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Gather class answers")
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("a folder of students' quiz-answers .csv files")
        self.folder.returnPressed.connect(lambda: self.load(self.folder.text()))
        # a long folder path scrolls in its field, as any path does; its whole text is on hover
        self.folder.setProperty(ELIDE_ALLOWED, True)
        choose = QPushButton("Choose folder…")
        choose.clicked.connect(self.choose)
        self.status = QLabel("No folder read yet.")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setWordWrap(True)
        for col in (4, 5):  # the histograms take what room is left and wrap within it
            self.table.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        # the rows' heights follow the wrapped histograms once the columns have their widths
        self.table.horizontalHeader().sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        # the picked question's answers as bars: what a teacher puts on the projector between the
        # vote and the discussion
        self.chart = plot_widget(axisItems={"bottom": TidyAxis("bottom")})
        self.chart.setMouseEnabled(False, False)
        self.chart.hideButtons()
        self.chart.showGrid(y=True, alpha=0.25)
        theme = current_theme()
        self.chart.setBackground(theme.plot_background)  # the theme's, as every plot of the window
        for side in ("left", "bottom"):
            self.chart.getAxis(side).setTextPen(theme.plot_foreground)
            self.chart.getAxis(side).setPen(theme.plot_foreground)
        restyle(self.chart)
        hold_plot_lines(self.chart)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._draw_picked)
        self.skipped = QListWidget()
        self.skipped.setWordWrap(True)  # a reason is read whole, not scrolled to
        self.skipped.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.gathered: Gathered | None = None
        self._bars: list[tuple[str, int]] = []
        top = QHBoxLayout()
        top.addWidget(self.folder, 1)
        top.addWidget(choose)
        # the table, the chart and the skipped files scroll together where the dialog is short (a
        # projector at 200%): each keeps its least height, none is squashed
        body = QWidget()
        inner = QVBoxLayout(body)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.table, 3)
        inner.addWidget(self.chart, 3)
        inner.addWidget(QLabel("Files left out:"))
        inner.addWidget(self.skipped, 1)
        self.body_area = scrolling(body)
        self.body_area.setProperty(SCROLL_ALLOWED, True)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(self.body_area, 1)

    def choose(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Folder of students' answers files")
        if path:
            self.load(path)

    def load(self, path: str) -> None:
        """Read ``path`` and show it; a folder that cannot be read is one line in the status."""
        self.folder.setText(path)
        self.folder.setToolTip(path)
        try:
            g = gather(path)
        except UserError as exc:
            self._show(None, str(exc))
            return
        except OSError as exc:  # a folder we may not list: one line, the app goes on
            self._show(None, f"cannot read {path[:200]!r}: {exc.strerror or exc}")
            return
        self._show(
            g, f"{g.files} students' files read, {len(g.skipped)} left out, {len(g.questions)} questions."
        )

    def _show(self, g: Gathered | None, status: str) -> None:
        self.gathered = g
        self.status.setText(status)
        tallies = list(g.questions.values()) if g is not None else []
        self.table.setRowCount(len(tallies))
        for row, t in enumerate(tallies):
            cells = [
                t.question_id,
                str(t.total),
                str(t.right),
                f"{100 * t.share_right:.0f}%",
                ", ".join(f"{a} ({n})" for a, n in t.answers.most_common()),
                ", ".join(f"{c} ({t.confidence[c]})" for c in CONFIDENCES if t.confidence[c]),
            ]
            for col, text in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(text))
        for col in range(4):
            self.table.resizeColumnToContents(col)
        self.table.resizeRowsToContents()
        self.skipped.clear()
        self.skipped.addItems(g.skipped if g is not None else [])
        if tallies:
            self.table.selectRow(0)
        self._draw_picked()

    def bars(self) -> list[tuple[str, int]]:
        """The answers the chart draws now, most given first, with their counts."""
        return list(self._bars)

    def _draw_picked(self) -> None:
        """The picked question's answers as bars (the first question's, before any is picked)."""
        self.chart.clear()
        self._bars = []
        rows = self.table.selectionModel().selectedRows()
        tallies = list(self.gathered.questions.values()) if self.gathered is not None else []
        if not rows or not 0 <= rows[0].row() < len(tallies):
            plot_title(self.chart, "Pick a question to see its answers", current_theme().muted)
            return
        t = tallies[rows[0].row()]
        self._bars = list(t.answers.most_common())
        theme = current_theme()
        xs = list(range(len(self._bars)))
        self.chart.addItem(
            pg.BarGraphItem(
                x=xs,
                height=[n for _a, n in self._bars],
                width=0.6,
                brush=theme.accent,
                pen=theme.plot_foreground,
            )
        )
        self.chart.getAxis("bottom").setTicks([[(x, a) for x, (a, _n) in zip(xs, self._bars, strict=True)]])
        self.chart.setXRange(-0.6, max(len(xs) - 0.4, 0.6), padding=0)
        self.chart.setYRange(0, max((n for _a, n in self._bars), default=1) * 1.15, padding=0)
        title = f"{t.question_id}: {t.total} students, {100 * t.share_right:.0f}% right"
        plot_title(self.chart, html.escape(title), theme.plot_foreground)
        axis_title(self.chart, "left", "students", theme.plot_foreground)
        axis_title(self.chart, "bottom", "answer", theme.plot_foreground)
