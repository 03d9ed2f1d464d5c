"""The text of pyqtgraph plots, from the theme's figure rule: one place every plot takes it from.

pyqtgraph sizes its tick labels with a QFont and its axis titles, plot titles and legends with
HTML in points; left to itself it keeps whatever size it was given first. So a plot built at
250% text kept 250% titles beside 100% ticks once the text went back down, and a title given
``size="12pt"`` through ``setLabel`` (which turns keyword arguments into CSS, where ``size`` means
nothing) was drawn at pyqtgraph's own 9 pt at every text size. Every plot of the window calls
``restyle`` when it is built and whenever the text size changes: ticks, axis titles (their text
and colour kept), the title, the legends and the labels of its lines all take the sizes the
theme's ``figure_px`` gives now, and the axes make room for them (``autoExpandTextSpace``) rather
than a fixed width the tick labels and the rotated title then share.
"""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF

from explorer.ui.guard import qt_guard
from explorer.ui.theme import figure_font, figure_pt, px

#: sizes relative to the label text (the figure rule never draws below ``readable_px``)
TICK_SHARE = 0.9
AXIS_TITLE_SHARE = 0.95
TITLE_SHARE = 1.1
LEGEND_SHARE = 0.9
LABEL_SHARE = 0.95
#: the least height of a plot's data area, in lines of its tick text: a few labelled ticks and
#: room for a label off its line. Every plot keeps it; where a page is shorter, the page scrolls
#: (a roofline 140 px tall at 200% had its tick numbers written over each other)
MIN_PLOT_LINES = 8
#: the least gap between two tick labels, in pixels at 100% text
TICK_GAP = 4
#: how far below its axis's height pyqtgraph sets a bottom axis title (``AxisItem.resizeEvent``)
LABEL_NUDGE = 5


class TidyAxis(pg.AxisItem):
    """An axis that never draws a tick label over another: pyqtgraph limits how much of an axis
    its labels fill, not whether two of them touch, and on a short log axis "50", "100", "200"
    and "500" were drawn over each other. Labels are kept in pyqtgraph's order (the major ticks
    first), each only where it keeps clear of those kept before it."""

    @qt_guard
    def generateDrawSpecs(self, p):
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis_spec, tick_specs, text_specs = specs
        return axis_spec, tick_specs, spaced_texts(text_specs, px(TICK_GAP))

    @qt_guard
    def _updateHeight(self) -> None:
        """pyqtgraph reserves 80% of the axis title's height under the ticks and sets the title 5
        px lower: at 250% text the title's top ran into the tick numbers. The whole title fits."""
        super()._updateHeight()
        if self.orientation not in ("bottom", "top") or not self.isVisible() or self.fixedHeight is not None:
            return
        if self.label.isVisible():
            more = max(0.0, 0.2 * self.label.boundingRect().height() - LABEL_NUDGE)
            height = self.maximumHeight() + more
            self.setMaximumHeight(height)
            self.setMinimumHeight(height)


def spaced_texts(text_specs: list[Any], gap: float) -> list[Any]:
    """The tick texts (``(rect, flags, text)``) that keep ``gap`` pixels clear of every one kept
    before them, in the order given."""
    kept: list[Any] = []
    for spec in text_specs:
        rect = spec[0].adjusted(-gap / 2, -gap / 2, gap / 2, gap / 2)
        if not any(rect.intersects(k[0]) for k in kept):
            kept.append(spec)
    return kept


def hold_plot_lines(plot: pg.PlotWidget, legends: tuple[pg.LegendItem, ...] = (), least: int = 0) -> None:
    """``keep_plot_lines`` now and whenever what takes room around the view changes: the legends'
    rows under it, the bottom axis's and the title's lines (they follow the text size)."""
    item = plot.getPlotItem()
    for part in (*legends, item.getAxis("bottom"), item.titleLabel):
        part.geometryChanged.connect(lambda: keep_plot_lines(plot, least))
    keep_plot_lines(plot, least)


def keep_plot_lines(plot: pg.PlotWidget, least: int = 0) -> None:
    """The plot's data area at least ``MIN_PLOT_LINES`` lines of its tick text tall, and the plot
    widget at least what its own layout needs around that (title, axes, a legend under it: they
    grow with the text), or ``least`` pixels if more. The page around it scrolls where it is
    shorter; nothing squashes the plot."""
    item = plot.getPlotItem()
    axis = item.getAxis("left")
    font = axis.style.get("tickFont") or axis.font()
    item.vb.setMinimumHeight(math.ceil(MIN_PLOT_LINES * QFontMetricsF(font).lineSpacing()) + 1)
    scene_least = item.effectiveSizeHint(Qt.SizeHint.MinimumSize).height()
    need = max(least, math.ceil(scene_least + 2 * plot.frameWidth()))
    if need != plot.minimumHeight():
        plot.setMinimumHeight(need)
        # a QTabWidget does not pass a page's new least size up to the splitter or scroll area
        # around it (the Benchmarks plot stuck out of its tab by 11 px): each widget above is told
        above = plot.parentWidget()
        while above is not None:
            above.updateGeometry()
            above = above.parentWidget()


def _item(plot: pg.PlotWidget | pg.PlotItem) -> pg.PlotItem:
    return plot.getPlotItem() if isinstance(plot, pg.PlotWidget) else plot


def axis_title(plot: pg.PlotWidget | pg.PlotItem, side: str, text: str, colour: str | None = None) -> None:
    """The title of one axis at the figure size (``colour``: the theme's plot foreground)."""
    style = {"font-size": f"{figure_pt(AXIS_TITLE_SHARE)}pt"}
    if colour:
        style["color"] = colour
    _item(plot).setLabel(side, text, **style)


def plot_title(plot: pg.PlotWidget | pg.PlotItem, text: str | None, colour: str | None = None) -> None:
    """The plot's title at the figure size; ``None`` or "" removes it."""
    item = _item(plot)
    if not text:
        item.setTitle(None)
        return
    options: dict[str, Any] = {"size": f"{figure_pt(TITLE_SHARE)}pt"}
    if colour:
        options["color"] = colour
    item.setTitle(text, **options)
    _fit_title_row(item)


def _fit_title_row(item: pg.PlotItem) -> None:
    """pyqtgraph gives a title a 30 px row whatever its font and lines: at 200% its words ran
    above the plot's top edge. The row takes the height the title's text needs now."""
    label = item.titleLabel
    if not label.isVisible():
        return
    height = math.ceil(label.item.boundingRect().height())
    label.setMaximumHeight(height)
    item.layout.setRowFixedHeight(0, height)


def legend_size() -> str:
    """A legend's ``labelTextSize`` now."""
    return f"{figure_pt(LEGEND_SHARE)}pt"


def restyle(plot: pg.PlotWidget | pg.PlotItem, legends: tuple[pg.LegendItem, ...] = ()) -> None:
    """Every text of ``plot`` at the sizes the text scale asks for now, up or back down."""
    item = _item(plot)
    tick_font = figure_font(TICK_SHARE)
    for side in ("left", "bottom", "right", "top"):
        axis = item.getAxis(side)
        axis.setStyle(tickFont=tick_font, autoExpandTextSpace=True)
        if axis.fixedWidth is not None:
            axis.setWidth(None)  # room from the tick labels and the title, not a fixed guess
        if axis.labelText or axis.labelUnits:
            axis.labelStyle = {**axis.labelStyle, "font-size": f"{figure_pt(AXIS_TITLE_SHARE)}pt"}
            axis.labelStyle.pop("size", None)  # not CSS: an older call's size that meant nothing
            axis._updateLabel()  # pyqtgraph's own redraw of the title from its text and style
        axis.picture = None
        axis.update()
    title = item.titleLabel
    if title.isVisible() and title.text:
        title.setText(title.text, size=f"{figure_pt(TITLE_SHARE)}pt")
        _fit_title_row(item)
    for legend in {
        id(x): x for x in (*legends, *([item.legend] if item.legend is not None else []))
    }.values():
        restyle_legend(legend)
    for child in item.items:
        if isinstance(child, pg.InfiniteLine) and child.label is not None:
            child.label.setFont(figure_font(LABEL_SHARE))
        elif isinstance(child, pg.TextItem):
            child.setFont(figure_font(LABEL_SHARE))


def restyle_legend(legend: pg.LegendItem) -> None:
    """A legend's entries at the size the text scale asks for now. (pyqtgraph's
    ``setLabelTextSize`` only changes the size of entries added later: those already shown kept
    theirs.)"""
    legend.setLabelTextSize(legend_size())
    for _sample, label in legend.items:
        label.setText(label.text, size=legend_size())
    legend.updateSize()


def fit_legend_columns(legend: pg.LegendItem, width: float) -> None:
    """As many columns as the legend's entries fit side by side in ``width`` pixels (its plot's
    width), so it takes as few rows as it can: a fixed three put four entries on two rows, and at
    200% on 1280x800 the second row cost the roofline a third of its height."""
    entries = [
        sample.boundingRect().width()
        + label.item.boundingRect().width()
        + 2 * legend.layout.horizontalSpacing()
        for sample, label in legend.items
    ]
    if not entries:
        return
    margins = sum(legend.layout.getContentsMargins()[::2]) + 2 * legend.layout.horizontalSpacing()
    columns = 1
    for c in range(len(entries), 1, -1):
        widest = [max(entries[j::c]) for j in range(c)]  # pyqtgraph fills a row, then the next
        if sum(widest) + margins <= width:
            columns = c
            break
    legend.setColumnCount(columns)
