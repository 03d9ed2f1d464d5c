"""The results table: every point of the shown run as measured; error rows in red with their
message, points other programs disturbed tinted like a warning with the reason in words.

It reads the panel's Qt-free ``RunResults``; this module only turns its points into cells."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from explorer.bench.compare import (
    above_peak_reason,
    peak_captions,
    peak_note,
    peak_share,
    peak_share_cell,
    warm_above_dram_note,
)
from explorer.bench.fmt import number_text, seconds_text
from explorer.bench.results import model_cell, roof_words
from explorer.bench.run_results import RunResults
from explorer.roofs.placement import share_words
from explorer.ui.guard import qt_guard
from explorer.ui.theme import current_theme
from explorer.ui.widgets import FoldingCaption
from explorer.words import count, on_host, percent

#: what a class reads first comes first: the point, its time, its throughput against the peak
#: and whether to trust it; the detail after. At 200% on a 1280x800 projector the table cannot
#: show every column, and "% of peak" (ninth) was half scrolled out of view
COLUMNS = (
    "size",
    "device",
    "variant",
    "median",
    "throughput",
    "% of peak",
    "verdict",
    "spread",
    "min",
    "roof",
    "model",
    "threads",
    "note",
)
_NUMERIC = ("size", "median", "min", "spread", "throughput", "% of peak", "threads")
#: what the share column is against: each device's peak, said once under the table
PEAK_HEADER_TIP = (
    "Each point's throughput as a share of its device's peak; the peaks are named below the table."
)


ROOF_HEADER_TIP = (
    "The memory level each point's data lives in (its working set against the caches' sizes) and, "
    "where the compute roof binds instead, so; hover a cell for the roof it is judged against."
)

MODEL_HEADER_TIP = (
    "What a model of the hardware predicts beside each measurement (coalescing, bank conflicts, "
    "divergence: the Memory page's arithmetic), never a measurement; hover a cell for its basis."
)


def _error_colours() -> tuple[QColor, QColor]:
    """The theme's error colour for the text, and a faint tint of it behind the row."""
    fg = QColor(current_theme().error)
    bg = QColor(fg)
    bg.setAlpha(40)
    return fg, bg


def _warning_colours() -> tuple[QColor, QColor]:
    """The theme's warning banner colours: readable text on a warm tint."""
    theme = current_theme()
    return QColor(theme.banner_text), QColor(theme.banner_bg)


class ResultsModel(QAbstractTableModel):
    """The shown workload's points of a ``RunResults``, as table rows."""

    def __init__(self, results: RunResults, parent: Any = None) -> None:
        super().__init__(parent)
        self.run_results = results
        self._points: list[Any] = results.points

    @property
    def points(self) -> list[Any]:
        return list(self._points)

    def reload(self) -> None:
        """Show the results' shown workload afresh (a new run, another workload)."""
        self.beginResetModel()
        self._points = self.run_results.points
        self.endResetModel()

    def point_added(self) -> None:
        """The shown workload gained a point: one row more at the bottom."""
        points = self.run_results.points
        if len(points) != len(self._points) + 1:
            self.reload()
            return
        row = len(self._points)
        self.beginInsertRows(QModelIndex(), row, row)
        self._points = points
        self.endInsertRows()

    @qt_guard
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self._points)

    @qt_guard
    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    @qt_guard
    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section] == "% of peak":
            return PEAK_HEADER_TIP
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section] == "model":
            return MODEL_HEADER_TIP
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section] == "roof":
            return ROOF_HEADER_TIP
        return None

    @qt_guard
    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        p = self._points[index.row()]
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(p, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            if p.error:
                return p.error
            if p.invalid:
                return f"Invalid: {p.invalid_reason}"
            if p.noisy:
                return f"Disturbed: {p.noise_reason}. Measured {count(p.remeasured + 1, 'time')}; the fastest is shown."
            if column in ("throughput", "% of peak"):
                return peak_note(p) or None
            if column == "roof":
                return roof_tip(p) or None
            if column == "model":
                return p.model_note or None
            if column == "median":  # how it was timed: the clock, the sync, a cold or warm L2
                method = p.extra.get("timing_method")
                return method if isinstance(method, str) and method else None
            return None
        if role in (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole) and (
            p.error or p.invalid or p.noisy
        ):
            colours = _error_colours() if p.error or p.invalid else _warning_colours()
            return QBrush(colours[0] if role == Qt.ItemDataRole.ForegroundRole else colours[1])
        if role == Qt.ItemDataRole.TextAlignmentRole and column in _NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def _text(p: Any, column: str) -> str:
        if column == "size":
            return p.size_label or str(p.size)
        if column == "device":
            return on_host(p.device, p.host)
        if column == "variant":
            return p.variant
        if column == "median":  # a point without a time and without an error was checked, not timed
            return seconds_text(p.median_s, "" if p.error else "not timed")
        if column == "min":
            return seconds_text(p.min_s)
        if column == "spread":
            return f"± {seconds_text(p.spread_s)}" if p.spread_s is not None else ""
        if column == "throughput":
            return number_text(p.throughput, p.throughput_unit)
        if column == "% of peak":
            return share_cell(p)
        if column == "roof":  # "fits in L2", "fits in L1, compute-bound: 53% of its roof"
            return roof_words(p)
        if column == "model":  # what the hardware model says beside the measurement
            return model_cell(p)
        if column == "threads":
            return "" if p.threads is None else str(p.threads)
        if column == "verdict":
            return p.verdict
        if column == "note":  # why a row is red or tinted, or above its peak, in one line
            above = "" if p.invalid else above_peak_reason(p)
            words = [
                p.verdict_reason,
                f"above the peak: {above}" if above else "",
                "" if p.error else warm_above_dram_note(p),
            ]
            return " ".join("; ".join(w for w in words if w).split())
        return ""


def share_cell(p: Any) -> str:
    """The "% of peak" cell: the share of the device's peak; where that peak is the point's own roof
    and it was measured while busy, above 100% reads ">100% (roof measured while busy)" (a roof
    measured low by an unknown amount gives no figure: "258%" was read before any note)."""
    share = peak_share(p)
    if share is not None and p.roof_busy and p.roof_share is not None and abs(share - p.roof_share) < 0.005:
        return share_words(share, True)
    return peak_share_cell(p)


def roof_tip(p: Any) -> str:
    """A roof cell's hover text: the roof the point is judged against and its share (and its share
    of the level across a cache's edge it is near), and why above."""
    if p.roof_share is None:
        return ""
    if p.roof_level == "compute":
        of = f" of the compute roof at {p.intensity_flop_per_byte:.3g} FLOP/byte"
    else:
        of = f" of {p.bandwidth_ceiling_basis or f'its {p.roof_level} roof'}"
    text = share_words(p.roof_share, p.roof_busy, of, decimals=0)
    if p.near_level and p.near_level_share is not None and p.roof_level == p.memory_level:
        text += f"; {percent(p.near_level_share, decimals=0)} of {p.near_level}'s roof, across the cache edge it is near"
    return f"{text}. Why it is over: {p.roof_note}" if p.roof_note else text


class ResultsTable(QTableView):
    def __init__(self, results: RunResults, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.results = ResultsModel(results, self)
        self.setModel(self.results)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setAlternatingRowColors(True)
        self.verticalHeader().hide()
        # eleven columns need about 760 px at 100% text, and they show in full there (a test
        # holds it); at 150% and more on a projector they cannot, and the table scrolls sideways
        # with the key ones first (``COLUMNS``)
        self.setProperty("scrollAllowed", True)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.results.rowsInserted.connect(self._rows_changed)
        self.results.modelReset.connect(self._rows_changed)

    def least_height(self) -> int:
        """The header and one row, with room for a sideways scroll bar: less than this and no
        measured row shows; more is the splitter's to give (the plot is kept readable first)."""
        row = self.verticalHeader().defaultSectionSize()
        header = self.horizontalHeader().sizeHint().height()
        bar = self.style().pixelMetric(self.style().PixelMetric.PM_ScrollBarExtent, None, self)
        return header + row + bar + 2 * self.frameWidth()

    def _rows_changed(self, *_args: object) -> None:
        # the model column only where some point has a model's figure beside it
        shown = any(p.model for p in self.results.points)
        self.setColumnHidden(COLUMNS.index("model"), not shown)
        self.resizeColumnsToContents()
        # re-assert the stretch: sizing to contents would otherwise leave the error column narrow
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        header.setStretchLastSection(True)
        self.scrollToBottom()


class PeakCaption(FoldingCaption):
    """Under the table: the peak each device's "% of peak" is taken against, with its basis, said
    once rather than on every row. Follows the table's model (a new run, another workload). On a
    short screen it gives way to one line, the whole basis on hover (FoldingCaption)."""

    def __init__(self, model: ResultsModel, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setProperty("role", "caption")
        self._model = model
        model.rowsInserted.connect(self.refresh)
        model.modelReset.connect(self.refresh)
        self.refresh()

    def refresh(self, *_args: object) -> None:
        captions = peak_captions(self._model.points)
        self.setText("% of peak = throughput / " + "; ".join(captions) if captions else "")
        self.setVisible(bool(captions))
