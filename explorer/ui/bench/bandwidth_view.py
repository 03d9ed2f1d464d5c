"""The bandwidth view: GB/s against working set, each memory level's roof a flat step over the
working sets it holds, and the run's points at their own working set.

For workloads that do no arithmetic (a strided copy, a memcpy) a roofline has no place: their
intensity is zero. Here they stand against the roof of the level their data lives in: a copy of
16 KiB runs under L1's step, one of 1 GiB under DRAM's. Every workload's points that move bytes
are shown, so vector add's fall from L1 to DRAM reads as a staircase. The steps come from
``explorer.bench.roofline.bandwidth_steps`` and the levels from ``explorer.roofs``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from explorer.bench.fmt import number_text
from explorer.bench.results import roof_share_words
from explorer.bench.roofline import bandwidth_range, bandwidth_steps
from explorer.roofs.model import Roof
from explorer.roofs.placement import level_text
from explorer.roofs.texts import ceiling_line
from explorer.ui.bench.levels import level_colour
from explorer.ui.bench.plot import (
    INVALID_LEGEND,
    INVALID_SYMBOL,
    SYMBOLS,
    LogAxis,
    point_marker,
    style_legend,
    style_plot,
    style_titles,
)
from explorer.ui.guard import qt_guard
from explorer.ui.plot_text import (
    LABEL_SHARE,
    TidyAxis,
    fit_legend_columns,
    hold_plot_lines,
    keep_plot_lines,
    legend_size,
    restyle,
)
from explorer.ui.plot_widget import plot_widget
from explorer.ui.theme import Theme, current_theme, figure_font, line_px
from explorer.ui.widgets import FoldingCaption
from explorer.units import binary_bytes


class ByteAxis(TidyAxis):
    """A log axis of bytes ticked at powers of four: 1 KiB, 4 KiB, 16 KiB ... 1 GiB."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)

    @qt_guard
    def tickValues(self, minVal, maxVal, size):
        if not self.logMode or maxVal <= minVal:
            return super().tickValues(minVal, maxVal, size)
        first, last = math.ceil(minVal / math.log10(4)), math.floor(maxVal / math.log10(4))
        return [(math.log10(4), [k * math.log10(4) for k in range(first, last + 1)])]

    @qt_guard
    def logTickStrings(self, values, scale, spacing):
        return [binary_bytes(round(10 ** float(v)), 0) for v in values]


class BandwidthPlot(QWidget):
    """Draws roofs' steps and points handed to it; computes nothing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._roofs: list[Roof] = []
        self._points: list[Any] = []
        self._drawn: list[Any] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.caption = FoldingCaption("")
        self.caption.setProperty("role", "caption")
        layout.addWidget(self.caption)
        self.plot = plot_widget(axisItems={"left": LogAxis("left"), "bottom": ByteAxis("bottom")})
        self.plot.setLogMode(x=True, y=True)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.legend = pg.LegendItem(colCount=3, labelTextSize=legend_size())
        self.plot.getPlotItem().layout.addItem(self.legend, 4, 1)
        self.plot.getPlotItem().vb.sigResized.connect(lambda _vb: self._fit_legend())
        layout.addWidget(self.plot, 1)
        hold_plot_lines(self.plot, (self.legend,))
        self.apply_theme(current_theme())
        self.apply_text_scale()

    def set_data(self, roofs: Sequence[Roof], points: Sequence[Any]) -> None:
        self._roofs = [r for r in roofs if r.levels() or r.main_memory()]
        self._points = [p for p in points if p.error is None and p.gbps and p.working_set_bytes]
        self._redraw()

    def steps_drawn(self) -> list[tuple[str, float, float, float]]:
        """(level, GB/s, from, to bytes) of every step drawn."""
        return [item.opts["step"] for item in self._drawn if "step" in getattr(item, "opts", {})]

    def points_drawn(self) -> list[tuple[str, float, float]]:
        """(level, working set, GB/s) of every point drawn."""
        out = []
        for item in self._drawn:
            if "level" in getattr(item, "opts", {}):
                xs, ys = item.getData()
                out += [(item.opts["level"], 10**x, 10**y) for x, y in zip(xs, ys, strict=True)]
        return out

    def apply_text_scale(self) -> None:
        """Ticks, titles, the legend and the steps' labels at the text size now, up or down."""
        self._redraw()  # the steps' labels and lines at the new size
        restyle(self.plot, (self.legend,))
        self._fit_legend()
        keep_plot_lines(self.plot)

    def label_items(self) -> list[Any]:
        """Every step label now drawn."""
        return [i for i in self._drawn if isinstance(i, pg.TextItem)]

    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.plot, theme)
        style_legend(self.legend, theme)
        style_titles(
            self.plot,
            theme,
            "GB/s",
            "working set (bytes the point's data occupies)",
            "Bandwidth by working set",
        )
        self._redraw()

    def _fit_legend(self) -> None:
        fit_legend_columns(self.legend, self.plot.getPlotItem().vb.width())

    def _redraw(self) -> None:
        for item in self._drawn:
            self.plot.removeItem(item)
        self._drawn.clear()
        self.legend.clear()
        theme = current_theme()
        self.legend.opts["labelTextSize"] = legend_size()  # the figure text size, for the rows added now
        x_lo, x_hi = bandwidth_range(self._roofs, [p.working_set_bytes for p in self._points])
        threads = {p.threads for p in self._points if not p.host}
        one = threads.pop() if len(threads) == 1 else None
        ys = [p.gbps for p in self._points]
        for roof in self._roofs:
            for step in bandwidth_steps(roof, x_lo, x_hi, one):
                c = step.ceiling
                colour = level_colour(c.level)
                style = Qt.PenStyle.SolidLine if c.kind == "measured" else Qt.PenStyle.DashLine
                line = pg.PlotDataItem(
                    [step.x0, step.x1],
                    [step.gbps, step.gbps],
                    pen=pg.mkPen(colour, width=line_px(2.5), style=style),
                )
                line.opts["step"] = (c.level, step.gbps, step.x0, step.x1)
                line.setToolTip(f"{roof.title}: {ceiling_line(c)}")
                self._add(line)
                who = "" if roof.device == "cpu" and not roof.host else f"{roof.title} "
                label = pg.TextItem(f"{who}{c.short_label}", color=colour, anchor=(0.0, 1.0))
                label.setFont(figure_font(LABEL_SHARE))
                label.setPos(math.log10(step.x0) + 0.02, math.log10(step.gbps))
                self._add(label)
                ys.append(step.gbps)
        variants: dict[str, int] = {}
        groups: dict[tuple[str, str, bool, bool], list[Any]] = {}
        for p in self._points:
            variants.setdefault(p.variant, len(variants))
            groups.setdefault((p.variant, p.memory_level, p.noisy, p.invalid), []).append(p)
        seen: dict[str, str] = {}
        for (variant, level, noisy, invalid), pts in groups.items():
            colour = level_colour(level)
            symbol = SYMBOLS[variants[variant] % len(SYMBOLS)]
            item = pg.PlotDataItem(
                [p.working_set_bytes for p in pts],
                [p.gbps for p in pts],
                pen=None,
                **point_marker(symbol, colour, noisy=noisy, invalid=invalid, theme=theme),
            )
            item.opts["level"] = level
            item.setToolTip("\n".join(_words(p) for p in pts))
            item.setZValue(20)
            self._add(item)
            seen.setdefault(level_text(level, "") or "level not known", colour)
        for words, colour in seen.items():
            self.legend.addItem(_marker("o", colour), words)
        for variant, index in variants.items():
            self.legend.addItem(_marker(SYMBOLS[index % len(SYMBOLS)], theme.plot_foreground), variant)
        if any(key[3] for key in groups):
            self.legend.addItem(_marker(INVALID_SYMBOL, theme.plot_foreground), INVALID_LEGEND)
        self._fit_legend()
        self.plot.setXRange(math.log10(x_lo), math.log10(x_hi), padding=0)
        if ys:
            # room above the highest step for its label
            self.plot.setYRange(math.log10(min(ys)) - 0.3, math.log10(max(ys)) + 0.8, padding=0)
        edges = (
            "for one thread's caches"
            if one == 1
            else (f"for {one} threads' caches" if one else "for every core's caches")
        )
        self.caption.setText(
            f"each level's roof over the working sets it holds ({edges}); points in their level's colour"
            if self._roofs or self._points
            else "no run yet: a point's bandwidth is drawn here against the roof of the memory level it lives in"
        )

    def _add(self, item: Any) -> None:
        self.plot.addItem(item)
        self._drawn.append(item)


def _marker(symbol: str, colour: str) -> Any:
    """A legend row's marker, drawing nothing in the plot."""
    return pg.ScatterPlotItem(symbol=symbol, size=10, brush=pg.mkBrush(colour))


def _words(p: Any) -> str:
    where = level_text(p.memory_level, p.roof_level)
    text = f"{p.variant} {p.size_label}: {binary_bytes(p.working_set_bytes)} · {number_text(p.gbps, 'GB/s')}"
    if where:
        text += f" · {where}"
    if p.roof_share is not None and p.roof_level != "compute":
        text += f" · {roof_share_words(p)}"
    if p.roof_note:
        text += f" ({p.roof_note})"
    if p.invalid:
        text += f" · INVALID: {p.invalid_reason}"
    return text
