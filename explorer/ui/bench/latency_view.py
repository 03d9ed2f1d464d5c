"""The Benchmarks page's latency tab: each shown GPU's measured load latency per level (its
pointer-chase ladder, stored with its ceilings) beside the published Hopper figures. The rows,
caption and the words for a GPU without a ladder come from ``explorer.roofs.latency``."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from explorer.roofs.latency import COMPARISON_HEADERS, NO_LADDER, comparison_rows, ladder_caption
from explorer.roofs.model import Roof


class LatencyView(QWidget):
    """Shows the ladders of the roofs handed to it; computes nothing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, len(COMPARISON_HEADERS))
        self.table.setHorizontalHeaderLabels(list(COMPARISON_HEADERS))
        self.table.verticalHeader().hide()
        self.caption = QLabel(NO_LADDER, wordWrap=True)
        self.caption.setProperty("role", "caption")
        layout.addWidget(self.table, 1)
        layout.addWidget(self.caption)

    def set_roofs(self, roofs: Sequence[Roof]) -> None:
        ladders = [r.latency for r in roofs if r.latency is not None]
        rows = [(ladder.device_name, row) for ladder in ladders for row in comparison_rows(ladder)]
        self.table.setRowCount(len(rows))
        for i, (_name, row) in enumerate(rows):
            for j, text in enumerate(row):
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.caption.setText("\n\n".join(ladder_caption(x) for x in ladders) if ladders else NO_LADDER)

    def rows_shown(self) -> list[tuple[str, ...]]:
        """The table's text, row by row."""
        rows = []
        for i in range(self.table.rowCount()):
            items = [self.table.item(i, j) for j in range(self.table.columnCount())]
            rows.append(tuple(item.text() if item is not None else "" for item in items))
        return rows
