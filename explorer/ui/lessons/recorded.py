"""The table of a lesson step's recorded results, under its narration.

A lesson may carry tens of thousands of recorded points (3.2 MB for 20,000). As rows of a Markdown
table in the narration, ``QTextEdit.setMarkdown`` took 107 s and the window stood still; a table
view draws only the rows on screen, so the same step shows at once. The cells' words come from the
core (``explorer.lessons.texts.recorded_row``), made for a row only when it is drawn.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from explorer.lessons.model import Recorded
from explorer.lessons.texts import RECORDED_COLUMNS, recorded_row
from explorer.ui.guard import qt_guard

#: the most rows the pane sizes itself for; more scroll
VISIBLE_ROWS = 4
#: the rows a column's width is measured over
MEASURED_ROWS = 200


class RecordedModel(QAbstractTableModel):
    """The points of one ``Recorded``, one row each, in the order the lesson holds them."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._points: tuple[Any, ...] = ()

    def set_recorded(self, recorded: Recorded | None) -> None:
        self.beginResetModel()
        self._points = recorded.points if recorded is not None else ()
        self.endResetModel()

    @qt_guard
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt API)
        return 0 if parent.isValid() else len(self._points)

    @qt_guard
    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt API)
        return 0 if parent.isValid() else len(RECORDED_COLUMNS)

    @qt_guard
    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        point = self._points[index.row()]
        text = recorded_row(point)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and point.verdict_reason:
            return f"{text}: {point.verdict_reason}"  # why it is invalid, disturbed or failed
        return text

    @qt_guard
    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return RECORDED_COLUMNS[section]
        return None


class RecordedTable(QTableView):
    """A read-only, fixed-row-height view of a ``RecordedModel`` (no per-row measuring, so its
    cost does not grow with the number of points)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recorded = RecordedModel(self)
        self.setModel(self.recorded)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setWordWrap(False)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Page Down steps the lesson, not this table
        self.verticalHeader().hide()
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        # the series (what tells the rows apart: "naive (no sync)" against "synchronized") takes
        # what the figures and the verdict leave; those are measured once per lesson step, over
        # the first rows only, so a lesson of 20,000 points costs no more than one of 20
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(RECORDED_COLUMNS.index("series"), QHeaderView.ResizeMode.Stretch)
        header.setResizeContentsPrecision(MEASURED_ROWS)
        header.setHighlightSections(False)

    def set_recorded(self, recorded: Recorded | None) -> None:
        self.recorded.set_recorded(recorded)
        self.setVisible(recorded is not None)
        self.fit_figures()

    def fit_figures(self) -> None:
        """The figure and verdict columns as wide as their text at the font now (the series
        stretches over the rest); again whenever the font changes (the text size)."""
        series = RECORDED_COLUMNS.index("series")
        for column in range(len(RECORDED_COLUMNS)):
            if column != series:
                self.resizeColumnToContents(column)

    @qt_guard
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.fit_figures()

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.wanted_height())

    def least_height(self) -> int:
        """The header and the first row: the least the pane gives the table (the rest scroll)."""
        return self._height_for(1)

    def wanted_height(self) -> int:
        """Header and up to ``VISIBLE_ROWS`` rows: the height the pane gives the table."""
        return self._height_for(VISIBLE_ROWS)

    def _height_for(self, rows: int) -> int:
        return (
            self.horizontalHeader().sizeHint().height()
            + min(self.recorded.rowCount(), rows) * self.verticalHeader().defaultSectionSize()
            + 2 * self.frameWidth()
        )
