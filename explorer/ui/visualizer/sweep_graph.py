"""One occupancy graph (occupancy % against one parameter), painted with QPainter.

A step line, a marker for the current configuration and a few ticks need no plotting library;
painting them directly keeps the graph crisp at projector size and cheap to redraw on every change.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from explorer.launch.sweep import Sweep
from explorer.ui.guard import qt_guard
from explorer.ui.plot_text import MIN_PLOT_LINES
from explorer.ui.theme import figure_font, line_px, px
from explorer.ui.visualizer import palette


def nice_ticks(lo: float, hi: float, count: int = 4) -> list[float]:
    """Round tick positions for an axis (presentation only): a step of 1, 2, 2.5 or 5 times a
    power of ten, small spans included (a measured timeline of 0.014 ms had only its 0)."""
    span = max(hi - lo, 1e-9)
    raw = span / count
    power = math.floor(math.log10(raw))
    # each step m x 10**p with the power exact: 10 x 1e-06 is 9.999999999999999e-06, and a span
    # starting at 213.0 then lost its first tick (213 / that step is a hair over 21,300,000)
    steps = (m * 10.0**p for p in (power, power + 1) for m in (1, 2, 2.5, 5))
    step = min((s for s in steps if s >= raw * (1 - 1e-9)), default=raw)
    first = math.ceil(lo / step - 1e-9)
    last = math.floor(hi / step + 1e-9)
    # each tick a multiple of the step, rounded as the step is, so no 0.30000000000000004
    digits = max(0, 2 - math.floor(math.log10(step)))
    return [round(k * step, digits) for k in range(first, last + 1)]


class SweepGraph(QWidget):
    def __init__(self, title: str, x_label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.x_label = x_label
        self.sweep: Sweep | None = None
        self._areas: list[tuple[str, QRectF, float]] = []
        self.setToolTip(f"{title} (x: {x_label}; 0% means a block with that value cannot launch)")
        self.apply_text_scale()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(320, max(px(180), self.least_height()))

    def least_height(self) -> int:
        """A title, a plot MIN_PLOT_LINES lines of its axis text tall and the x axis under it, in
        the fonts the graph paints with now (a fixed 120 px left the plot 3 lines at 100%); the
        column it sits in scrolls where the three graphs do not fit."""
        title_h = QFontMetrics(figure_font(bold=True, base=self.font())).height()
        axis = QFontMetrics(figure_font(0.85, base=self.font()))
        least = (
            title_h + axis.height() / 2 + 2 + MIN_PLOT_LINES * axis.lineSpacing() + 2.5 * axis.height() + 4
        )
        return math.ceil(least) + 1

    @qt_guard
    def minimumSizeHint(self) -> QSize:
        return QSize(120, self.least_height())

    def apply_text_scale(self) -> None:
        self.updateGeometry()
        self.update()

    def figure_areas(self) -> list[tuple[str, QRectF, float]]:
        """The plot as last painted and the line height of its axis text (the render test's)."""
        return list(self._areas)

    def set_sweep(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.update()

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        c = palette.canvas()
        p.fillRect(self.rect(), c.sm_face)
        p.setFont(figure_font(bold=True, base=self.font()))
        p.setPen(c.text)
        title_h = p.fontMetrics().height()
        # a narrow column shortens the words with "…"; the whole of them is on hover
        title = p.fontMetrics().elidedText(self.title, Qt.TextElideMode.ElideRight, self.width())
        p.drawText(QRectF(0, 0, self.width(), title_h), Qt.AlignmentFlag.AlignHCenter, title)
        p.setFont(figure_font(0.85, base=self.font()))
        fm = p.fontMetrics()
        th = fm.height()
        left, right = fm.horizontalAdvance("100%") + 8.0, 10.0
        # the 100% label is centred on the top line: half a line of room above it, under the title
        top, bottom = title_h + th / 2 + 2.0, 2.5 * th + 4
        plot = QRectF(left, top, self.width() - left - right, self.height() - top - bottom)
        self._areas = [("plot", QRectF(plot), float(fm.lineSpacing()))]
        s = self.sweep
        if s is None or not s.xs or plot.width() < 10 or plot.height() < 10:
            p.end()
            return
        x_lo, x_hi = min(s.xs), max(max(s.xs), s.current_x)
        x_span = max(x_hi - x_lo, 1)

        def x_px(x: float) -> float:
            return plot.left() + (x - x_lo) / x_span * plot.width()

        def py(pct: float) -> float:
            return plot.bottom() - pct / 100.0 * plot.height()

        grid_pen = QPen(c.grid_line, line_px(1))
        vcentre = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        for pct in (0, 25, 50, 75, 100):
            p.setPen(grid_pen)
            p.drawLine(QPointF(plot.left(), py(pct)), QPointF(plot.right(), py(pct)))
            p.setPen(c.muted)
            p.drawText(QRectF(0, py(pct) - th / 2, left - 4, th), vcentre, f"{pct}%")
        tick_w = fm.horizontalAdvance("000000") + 4
        for t in nice_ticks(x_lo, x_hi, max(2, min(4, int(plot.width() // tick_w)))):
            p.setPen(c.muted)
            words = f"{t:g}"
            w = fm.horizontalAdvance(words) + 2
            # centred under its tick, but never under the % labels or past the graph's edge
            x0 = min(max(x_px(t) - w / 2, plot.left()), self.width() - w)
            p.drawText(QRectF(x0, plot.bottom() + th / 2 + 2, w, th), Qt.AlignmentFlag.AlignHCenter, words)
        p.drawText(
            QRectF(plot.left(), plot.bottom() + 1.5 * th + 2, plot.width(), th),
            Qt.AlignmentFlag.AlignHCenter,
            fm.elidedText(self.x_label, Qt.TextElideMode.ElideRight, int(plot.width())),
        )
        line = QPolygonF(
            [QPointF(x_px(x), py(100.0 * occ)) for x, occ in zip(s.xs, s.occupancy, strict=True)]
        )
        p.setPen(QPen(palette.RUNNING, line_px(2)))
        p.drawPolyline(line)
        cx, cy = x_px(s.current_x), py(100.0 * s.current_occupancy)
        p.setPen(QPen(palette.SELECTION, line_px(2), Qt.PenStyle.DashLine))
        p.drawLine(QPointF(cx, plot.top()), QPointF(cx, plot.bottom()))
        p.setPen(QPen(palette.SELECTION.darker(160), line_px(1.5)))
        p.setBrush(palette.SELECTION)
        p.drawEllipse(QPointF(cx, cy), px(6), px(6))
        p.end()
