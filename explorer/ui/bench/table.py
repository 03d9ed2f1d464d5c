"""The results table: every point as measured, error rows in red with their message."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from explorer.bench.compare import peak_note, peak_share_text
from explorer.bench.fmt import number_text, seconds_text
from explorer.ui.guard import qt_guard
from explorer.ui.theme import current_theme

COLUMNS = ("size", "device", "variant", "median", "spread", "throughput", "vs peak", "threads", "error")


def _error_colours() -> tuple[QColor, QColor]:
    """The theme's error colour for the text, and a faint tint of it behind the row."""
    fg = QColor(current_theme().error)
    bg = QColor(fg)
    bg.setAlpha(40)
    return fg, bg


class ResultsModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._points: list[Any] = []

    @property
    def points(self) -> list[Any]:
        return list(self._points)

    def set_points(self, points: list[Any]) -> None:
        self.beginResetModel()
        self._points = list(points)
        self.endResetModel()

    def append(self, point: Any) -> None:
        row = len(self._points)
        self.beginInsertRows(QModelIndex(), row, row)
        self._points.append(point)
        self.endInsertRows()

    @qt_guard
    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._points)

    @qt_guard
    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    @qt_guard
    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    @qt_guard
    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        p = self._points[index.row()]
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(p, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            if p.error:
                return p.error
            if column in ("throughput", "vs peak"):
                return peak_note(p) or None
            return None
        if p.error and role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(_error_colours()[0])
        if p.error and role == Qt.ItemDataRole.BackgroundRole:
            return QBrush(_error_colours()[1])
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (
            "size",
            "median",
            "spread",
            "throughput",
            "vs peak",
            "threads",
        ):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def _text(p: Any, column: str) -> str:
        if column == "size":
            return p.size_label or str(p.size)
        if column == "device":
            return p.device
        if column == "variant":
            return p.variant
        if column == "median":
            return seconds_text(p.median_s)
        if column == "spread":
            return f"± {seconds_text(p.spread_s)}" if p.spread_s is not None else ""
        if column == "throughput":
            return number_text(p.throughput, p.throughput_unit)
        if column == "vs peak":
            return peak_share_text(p)
        if column == "threads":
            return "" if p.threads is None else str(p.threads)
        if column == "error":
            return " ".join((p.error or "").split())  # one line, whatever the library said
        return ""


class ResultsTable(QTableView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results = ResultsModel(self)
        self.setModel(self.results)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.results.rowsInserted.connect(self._rows_changed)
        self.results.modelReset.connect(self._rows_changed)

    def _rows_changed(self, *_args: object) -> None:
        self.resizeColumnsToContents()
        # re-assert the stretch: sizing to contents would otherwise leave the error column narrow
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        header.setStretchLastSection(True)
        self.scrollToBottom()
