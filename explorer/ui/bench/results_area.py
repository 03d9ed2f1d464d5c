"""The Benchmarks page's results: the plots above, the table under them with the peaks its
"% of peak" is against and the export buttons, on a splitter a teacher can drag."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSplitter, QTabWidget, QVBoxLayout, QWidget

from explorer.ui.bench.table import PeakCaption, ResultsTable

#: the export buttons' formats, in the order they stand: (name, file dialog filter)
EXPORTS = (("CSV", "CSV files (*.csv)"), ("JSON", "JSON files (*.json)"), ("PNG", "PNG images (*.png)"))


class ResultsArea(QSplitter):
    """``plots`` over ``table``; ``export_clicked`` names the format of the button pressed."""

    export_clicked = Signal(str, str)  # the format's name and its file dialog filter

    def __init__(self, plots: QTabWidget, table: ResultsTable, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.addWidget(plots)
        table_box = QWidget()
        table_layout = QVBoxLayout(table_box)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addWidget(table, 1)
        self.peak_caption = PeakCaption(table.results)
        self.export_buttons: dict[str, QPushButton] = {}
        # the caption and the export buttons share one row: at 200% text a row of its own for
        # the buttons was one of the things that made the page taller than a 1280x800 projector
        under = QHBoxLayout()
        under.addWidget(self.peak_caption, 1)
        for name, filter_ in EXPORTS:
            button = QPushButton(f"Export {name}…")
            button.clicked.connect(lambda _checked=False, n=name, f=filter_: self.export_clicked.emit(n, f))
            under.addWidget(button, 0, Qt.AlignmentFlag.AlignBottom)
            self.export_buttons[name] = button
        table_layout.addLayout(under)
        self.addWidget(table_box)
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)
        self.setSizes([460, 240])
        self.setChildrenCollapsible(False)
