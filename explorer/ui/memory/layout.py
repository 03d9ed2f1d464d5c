"""The Memory page's tab layout, shared by its tabs: the form on the left, the picture on the right.

The form column scrolls up and down at large text sizes and never takes more than ``LEFT_SHARE``
of the tab, so the picture keeps most of a projector's width.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QTimer
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QSpinBox, QVBoxLayout, QWidget

from explorer.ui.guard import qt_guard
from explorer.ui.theme import px
from explorer.ui.widgets import number_field, scrolling


def spin(lo: int, hi: int, value: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(lo, hi)
    box.setValue(value)
    box.setToolTip(tip)
    return number_field(box)


def show_in(area: QScrollArea, widget: QWidget) -> None:
    """Scroll ``area`` so ``widget`` shows whole, or, taller than the view, its middle."""
    content = area.widget()
    if content is None:  # nothing in the area to scroll to
        return
    top = widget.mapTo(content, QPoint(0, 0)).y()
    view = area.viewport().height()
    bar = area.verticalScrollBar()
    if top >= bar.value() and top + widget.height() <= bar.value() + view:
        return  # whole in view already
    bar.setValue(top if widget.height() <= view else top + (widget.height() - view) // 2)


#: the least height of a plot's data area, in lines of its numbers: a few labelled ticks (and
#: the render test's rule for every figure)
MIN_PLOT_LINES = 8
#: pyqtgraph places an axis title this many pixels past the axis's edge (``AxisItem.resizeEvent``)
_TITLE_NUDGE = 5


def fit_axis_titles(plot: pg.PlotWidget, widest_left: str) -> int:
    """Room for the axis titles beside their tick numbers. pyqtgraph counts a title as 0.8 of
    its height and places it 5 px past the axis's edge: at 250% "stride (elements)" was drawn
    over the numbers 10, 15, 20 and "occupancy (%)" over 20 ... 100. The bottom axis is made as
    tall, and the left one as wide (its numbers at their widest, ``widest_left``), as the numbers
    and the whole title need. Call it after the plot's text is styled (``restyle``). Returns the
    least height of the plot that keeps its data area ``MIN_PLOT_LINES`` lines of its numbers
    tall, with its bottom axis and title under it."""
    item = plot.getPlotItem()
    least = 0.0
    bottom, left = item.getAxis("bottom"), item.getAxis("left")
    for axis, across in ((bottom, False), (left, True)):
        font = axis.style.get("tickFont") or axis.font()
        fm = QFontMetricsF(font)
        numbers = fm.horizontalAdvance(widest_left) + 2 if across else fm.height()
        room = (
            numbers + axis.style["tickTextOffset"][1 if not across else 0] + max(0, axis.style["tickLength"])
        )
        if axis.label.isVisible():
            margin = axis.label.document().documentMargin()
            room += axis.label.boundingRect().height() - _TITLE_NUDGE - margin + 2
        if across:
            axis.setWidth(math.ceil(room))
        else:
            axis.setHeight(math.ceil(room))
            least = MIN_PLOT_LINES * fm.lineSpacing() + room
    title = item.titleLabel
    if title.isVisible():
        least += title.boundingRect().height()
    _left, top, _right, bottom_margin = item.layout.getContentsMargins()
    return math.ceil(least + top + bottom_margin + 4)  # (and the view box's own edge)


class ErrorLine(QLabel):
    """A form's one line saying why the numbers cannot be shown, in the error colour; it takes no
    room while there is nothing to say (empty, it cost the form column a line, and at 200% on
    1280x800 pushed coalescing's efficiency plot below the fold)."""

    def __init__(self) -> None:
        super().__init__()
        self.setProperty("role", "error")
        self.setWordWrap(True)
        self.hide()

    @qt_guard
    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))


def headline(label: QLabel) -> None:
    """A tab's headline: bold, a notch over the text. (As a page title, its four lines at 150%
    pushed the picture under them off a 1024x768 projector with a lesson open.)"""
    label.setProperty("textSize", "large")
    label.setStyleSheet("font-weight: 600;")


def legend_text(items: tuple[tuple[str, str], ...]) -> str:
    """A picture's key: a square in each colour, then what it means."""
    return "   ".join(f"<span style='color:{c}'>&#9632;</span> {t}" for c, t in items)


def legend(items: tuple[tuple[str, str], ...]) -> QLabel:
    label = QLabel(legend_text(items))
    label.setWordWrap(True)
    return label


#: the form column's width at 100% text; it grows with the text but never takes more than
#: LEFT_SHARE of the tab, so the picture keeps most of a projector's width
LEFT_WIDTH = 360
LEFT_SHARE = 0.42


class Columns(QWidget):
    """A tab of the page: the form on the left, the picture and its words on the right."""

    def _build_columns(self, left: QWidget, right: QVBoxLayout) -> None:
        right_widget = QWidget()
        right_widget.setLayout(right)
        right.setContentsMargins(0, 0, 0, 0)
        self.left_area = scrolling(left)
        self.right_area = scrolling(right_widget)
        row = QHBoxLayout(self)
        row.addWidget(self.left_area)
        row.addWidget(self.right_area, 1)
        self._fit_left()

    def picture(self) -> QWidget:
        """What the tab's words are about: its canvas."""
        return self.canvas  # type: ignore[attr-defined]  # every tab has one

    def reveal(self) -> None:
        """On a short screen the columns scroll: bring the picture (and the form's graph, where
        the tab has one) into view, as a lesson step's words point at them; and again whenever
        the tab is resized (the lesson pane settles its height after the step), until the
        teacher changes something."""
        self._revealing = True
        show_in(self.right_area, self.picture())
        graph = self.graph()
        if graph is not None:
            show_in(self.left_area, graph)

    def stop_revealing(self) -> None:
        """The teacher's own change: the columns stay where they are from now on."""
        self._revealing = False

    def graph(self) -> QWidget | None:
        """The tab's graph in the form's column (coalescing's efficiency vs stride), if any."""
        return None

    def _fit_left(self) -> None:
        room = int(self.width() * LEFT_SHARE) if self.width() > 0 else px(LEFT_WIDTH)
        self.left_area.setFixedWidth(min(px(LEFT_WIDTH), max(room, px(200))))

    @qt_guard
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_left()
        if self.__dict__.get("_revealing"):
            QTimer.singleShot(0, self.reveal)  # once the columns have their new size
