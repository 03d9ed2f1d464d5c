"""Write the plot as drawn to a PNG (CSV and JSON are ``explorer.bench.export``), encoded in
memory and then written in one step by ``explorer.ui.png``.

The picture is what a teacher puts on a slide, so it holds every plot the panel shows: the main
plot and, where a GPU and the CPU both ran, the speedup strip below it, stacked in one image.
It takes a path, so tests and scripts call it without a file dialog.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from explorer.errors import UserError
from explorer.ui.png import write_png


def export_png(plot_widgets: Sequence[Any], path: str | Path, width_px: int = 1600) -> Path:
    """The plots as drawn on screen (series, peaks, legends), one under the other, at a width
    good for slides."""
    from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
    from PySide6.QtWidgets import QWidget

    from explorer.ui.theme import current_theme

    path = Path(path)
    widgets = [w for w in plot_widgets if w.width() > 0 and w.height() > 0]
    if not widgets:
        raise UserError(f"could not write the plot to {path}: there is nothing drawn to export")
    scale = width_px / max(w.width() for w in widgets)
    background = QColor(current_theme().plot_background)
    pictures = []
    for widget in widgets:
        # Painted as on screen at a device pixel ratio of ``scale``: text, markers and legend all
        # grow alike, as on a high-DPI screen. QWidget.render, not pyqtgraph's GraphicsView
        # override, which redraws the scene at the target size and leaves pixel-sized items small.
        picture = QPixmap(round(widget.width() * scale), round(widget.height() * scale))
        picture.setDevicePixelRatio(scale)
        picture.fill(background)
        QWidget.render(widget, picture)
        picture.setDevicePixelRatio(1.0)
        pictures.append(picture)
    sheet = QImage(
        max(p.width() for p in pictures), sum(p.height() for p in pictures), QImage.Format.Format_ARGB32
    )
    sheet.fill(background)
    painter = QPainter(sheet)
    try:
        top = 0
        for picture in pictures:
            painter.drawPixmap(0, top, picture)
            top += picture.height()
    finally:
        painter.end()
    return write_png(sheet, path, "the plot")
