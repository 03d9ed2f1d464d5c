"""The live plot: time or throughput against size on log axes, one line per variant.

Below it, the speedup of each GPU variant over the CPU at the sizes both measured, with the
break-even line at 1: the size where the GPU starts to win is where its curve crosses that line.
A point other programs disturbed (its noise verdict) is drawn hollow: still shown, never passed off.
The device's peak (in the throughput unit) is drawn dashed, so students see how far below the
sheet figure real code runs; where that peak is an estimate its label says so, and hovering it
explains what a point above it means. Everything drawn here is computed by ``explorer.bench``.
"""

from __future__ import annotations

import html
import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QLabel, QRadioButton, QVBoxLayout, QWidget

from explorer.bench.compare import Series, build_series, peak_label, peak_tooltip, speedup_curves
from explorer.bench.fmt import seconds_text
from explorer.ui.guard import qt_guard
from explorer.ui.plot_text import (
    AXIS_TITLE_SHARE,
    LABEL_SHARE,
    TidyAxis,
    axis_title,
    fit_legend_columns,
    hold_plot_lines,
    keep_plot_lines,
    legend_size,
    plot_title,
    restyle,
)
from explorer.ui.plot_widget import plot_widget
from explorer.ui.theme import Theme, current_theme, figure_font, line_px, px
from explorer.ui.widgets import FoldingCaption

# Colour-blind-safe (Okabe-Ito), readable on a projector: CPU blue, GPUs orange/green/purple...
CPU_COLOURS = ("#0072B2", "#56B4E9", "#009E73")
CPU_COLOURS_DARK = (
    "#56B4E9",
    "#0072B2",
    "#009E73",
)  # the light blue first: the dark one sinks into a dark plot
GPU_COLOURS = ("#D55E00", "#E69F00", "#CC79A7", "#009E73", "#F0E442")
SYMBOLS = ("o", "s", "t", "d", "+")
#: a lesson's recorded curves: purple, then the greens and yellow no run here starts with
_RECORDED_COLOURS = ("#CC79A7", "#009E73", "#F0E442", "#E69F00", "#56B4E9")


class LogAxis(TidyAxis):
    """Log-axis labels a student reads aloud: 10 µs, 1 ms / 100, 1,000; only 1-2-5 ticks labelled."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self.si_suffix: str | None = None  # "s" for times (10 µs, 1 ms); None for plain numbers
        self._round_ticks = False  # True while the view is under a decade and ticked at round steps
        self.enableAutoSIPrefix(False)  # the labels carry their own prefix (ms, µs)

    @qt_guard
    def tickValues(self, minVal, maxVal, size):
        """pyqtgraph's log ticks sit at 1..9 x 10^k and only 1-2-5 are labelled: a view spanning less
        than a decade (65 to 175 GFLOP/s, a CPU reaching its plateau) would have its upper half
        bare, or no label at all. Such a view gets evenly spaced round values instead."""
        ticks = super().tickValues(minVal, maxVal, size)
        self._round_ticks = False
        if (
            not self.logMode
            or maxVal <= minVal
            or (maxVal - minVal >= 1.0 and sum(len(v) for _, v in ticks) >= 2)
        ):
            return ticks
        self._round_ticks = True  # every one of these is labelled (see logTickStrings)
        low, high = 10.0**minVal, 10.0**maxVal
        step = _round_step((high - low) / 8)
        first, last = math.ceil(low / step), math.floor(high / step)
        return [(step, [math.log10(k * step) for k in range(first, last + 1) if k > 0])]

    @qt_guard
    def logTickStrings(self, values, scale, spacing):
        numbers = [10 ** float(v) * scale for v in values]
        keep = [_is_125(x) for x in numbers]
        if sum(keep) < 2 or self._round_ticks:
            keep = [True] * len(numbers)
        return [self._text(x) if k else "" for x, k in zip(numbers, keep, strict=True)]

    def _text(self, x: float) -> str:
        if self.si_suffix == "s":
            return seconds_text(x)
        return f"{x:,.0f}" if x >= 1 else f"{x:.2g}"


def _round_step(rough: float) -> float:
    """The smallest 1, 2 or 5 x 10^k at least ``rough``."""
    base = 10 ** math.floor(math.log10(rough))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= rough * (1 - 1e-9))


def _is_125(x: float) -> bool:
    if x <= 0:
        return False
    mantissa = x / 10 ** math.floor(math.log10(x) + 1e-9)
    return any(abs(mantissa - m) < 1e-3 * m for m in (1.0, 2.0, 5.0))


def _plot_widget() -> pg.PlotWidget:
    axes = {"left": LogAxis("left"), "bottom": LogAxis("bottom")}
    widget = plot_widget(axisItems=axes)
    widget.setLogMode(x=True, y=True)
    widget.showGrid(x=True, y=True, alpha=0.25)
    restyle(widget)
    style_plot(widget, current_theme())
    return widget


def style_plot(widget: pg.PlotWidget, theme: Theme) -> None:
    """Background and axis colours; called again when the theme changes."""
    widget.setBackground(theme.plot_background)
    for name in ("left", "bottom"):
        axis = widget.getAxis(name)
        axis.setTextPen(theme.plot_foreground)
        axis.setPen(theme.plot_foreground)


def style_titles(widget: pg.PlotWidget, theme: Theme, left: str, bottom: str, title: str) -> None:
    """A plot's axis titles and title in the theme's colour at the figure size the text scale
    asks for (``plot_text``; ``restyle`` follows the scale from then on)."""
    axis_title(widget, "left", left, theme.plot_foreground)
    axis_title(widget, "bottom", bottom, theme.plot_foreground)
    plot_title(widget, title, theme.plot_foreground)


def style_legend(legend: pg.LegendItem, theme: Theme) -> None:
    """A legend's box and words in the theme's colours."""
    legend.setBrush(pg.mkBrush(theme.plot_background))
    legend.setPen(pg.mkPen(theme.border))
    legend.setLabelTextColor(theme.plot_foreground)


#: how to read the plot, beside its toggles; short enough for one line there at 200% on a
#: 1280x800 projector (the plot under it has no line to spare for a second): the longer
#: "hollow markers: points other programs disturbed (reasons in the table)" was cut short
HINT = "log–log axes; error rows: in the table only"
NOISY_HINT = "hollow: disturbed by other programs (see table)"
#: an invalid point's marker (faster than the hardware can go), and its legend row, on every plot
INVALID_SYMBOL = "x"
INVALID_LEGEND = "crossed: invalid, faster than the hardware can go"


def point_marker(symbol: str, colour: str, *, noisy: bool, invalid: bool, theme: Theme) -> dict[str, Any]:
    """A ``PlotDataItem``'s marker options for a group of measured points, one look on the
    roofline and the bandwidth view: the variant's ``symbol`` filled in its level's ``colour``;
    hollow where other programs disturbed them; crossed and hollow where they are faster than
    the hardware can go."""
    if invalid:
        symbol, noisy = INVALID_SYMBOL, True
    return {
        "symbol": symbol,
        "symbolSize": px(11),
        "symbolBrush": None if noisy else colour,
        "symbolPen": pg.mkPen(colour if noisy else theme.plot_background, width=line_px(2 if noisy else 1)),
    }


class BenchPlot(QWidget):
    """Updated in place as points arrive: each new point costs a ``setData``, not a rebuild,
    so the UI thread stays free while a benchmark loads every core."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=True)
        self.mode = "throughput"
        self._series: list[Series] = []
        self._size_name = "size"
        self._workload_title = ""
        self._running = False
        self._items: dict[str, pg.PlotDataItem] = {}
        self._peak_lines: dict[tuple[str, float | None], pg.InfiniteLine] = {}  # one per (device, peak)
        #: where two or more peaks are drawn, the legend names them (their labels on the lines lay
        #: on each other and on the curves): those rows' samples, and what they were made from
        self._peak_rows: list[pg.PlotDataItem] = []
        self._peak_rows_key: tuple = ()
        self._speedup_items: dict[str, pg.PlotDataItem] = {}
        self._colours: dict[str, str] = {}
        self._tick_labels: dict[int, str] = {}
        self._labels_key: tuple = ()
        self._left_titles = ("", "")  # the y axis title in full, and its unit alone for a short axis
        #: the sizes the next run will measure: what an empty plot's x axis spans
        self._planned: list[int] = []
        #: a lesson's recorded results, drawn dashed beside the run's: their series (each variant
        #: named "... (recorded)", its device the recorded device's name) and "recorded on ..."
        self._recorded: list[Series] = []
        self._recorded_mark = ""
        self._mark_item: pg.PlotDataItem | None = None
        self._invalid_item: pg.PlotDataItem | None = None  # the legend's row for crossed points
        self._crosses: dict[str, pg.PlotDataItem] = {}  # each variant's invalid points, crossed

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        toggle_row = QHBoxLayout()
        toggle_row.addWidget(QLabel("Plot:"))
        self.throughput_radio = QRadioButton("throughput")
        self.time_radio = QRadioButton("time")
        self.throughput_radio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.throughput_radio)
        group.addButton(self.time_radio)
        toggle_row.addWidget(self.throughput_radio)
        toggle_row.addWidget(self.time_radio)
        toggle_row.addSpacing(12)
        self.hint_label = FoldingCaption(HINT)  # wraps where there is room, else one line and a hover
        self.hint_label.setProperty("role", "caption")
        toggle_row.addWidget(self.hint_label, 1)
        layout.addLayout(toggle_row)

        theme = current_theme()
        self.main = _plot_widget()
        self.main.getPlotItem().vb.setDefaultPadding(0.06)  # no point sits on an axis
        self.speedup = _plot_widget()
        # the legend sits under the plot, in the plot's own layout (so a PNG export has it): in
        # the view it covered points, and a lesson's recorded curves and peaks gave it rows enough
        # to reach the title
        self.legend = pg.LegendItem(
            colCount=3, labelTextSize=legend_size(), labelTextColor=theme.plot_foreground
        )
        item = self.main.getPlotItem()
        item.legend = self.legend  # the curves named at creation join it (``PlotItem.plot(name=...)``)
        item.layout.addItem(self.legend, 4, 1)
        self.legend.layout.setContentsMargins(4, 0, 4, 0)
        self.legend.layout.setVerticalSpacing(0)
        self.legend.setBrush(pg.mkBrush(theme.plot_background))
        self.legend.setPen(pg.mkPen(theme.border))
        # the speedup strip's legend sits top left: its curves rise from the bottom left
        self.speedup_legend = self.speedup.addLegend(
            offset=(10, 10), labelTextSize=legend_size(), labelTextColor=theme.plot_foreground
        )
        axis_title(self.speedup, "left", "speedup (×)", theme.plot_foreground)
        # tall enough for three decades of ticks and the legend above the break-even line
        self.speedup.setMinimumHeight(130)
        self.speedup.setMaximumHeight(220)
        self.speedup.setXLink(self.main)
        self._even_line = pg.InfiniteLine(
            pos=0.0,
            angle=0,
            pen=pg.mkPen(theme.muted, width=line_px(1.5), style=Qt.PenStyle.DashLine),
            label="break-even: GPU as fast as CPU",
            labelOpts={"position": 0.98, "color": theme.muted, "anchors": [(1, 1), (1, 1)]},
        )
        self.speedup.addItem(self._even_line)
        layout.addWidget(self.main, 2)
        layout.addWidget(self.speedup, 1)
        self.speedup.hide()

        self.throughput_radio.toggled.connect(lambda on: self.set_mode("throughput" if on else "time"))
        # a short plot (a projector's large text) must still show the peak's label and the y title
        self.main.getPlotItem().vb.sigResized.connect(self._fit_to_size)
        hold_plot_lines(self.main, (self.legend,))
        self._update_labels()

    # --- public -------------------------------------------------------------------------
    def apply_text_scale(self) -> None:
        """Tick labels, legends, axis titles and line labels follow the window's text size, up
        and back down (``plot_text.restyle``)."""
        restyle(self.main, (self.legend,))
        restyle(self.speedup, (self.speedup_legend,))
        self.speedup.setMinimumHeight(px(130))
        self.speedup.setMaximumHeight(px(220))
        self._even_line.setPen(
            pg.mkPen(current_theme().muted, width=line_px(1.5), style=Qt.PenStyle.DashLine)
        )
        self._forget_lines()  # drawn anew with pens and markers of the new size
        self._labels_key = ()  # re-title at the new size
        self._update_labels()
        self._update_data()

    def set_titles(self, workload_title: str, size_name: str) -> None:
        """The workload's title heads the plot (and so every exported PNG); the size name labels x."""
        self._workload_title = workload_title
        self._size_name = size_name or "size"
        self._update_labels()

    def set_planned_sizes(self, sizes: list[int]) -> None:
        """The sizes a run of the form would measure: an empty plot spans them (a lesson opened
        on "matrix size n" from 1,000 to 10^9, pyqtgraph's range for no data)."""
        self._planned = [s for s in sizes if s > 0]
        self._fit_x()

    def set_running(self, running: bool) -> None:
        """While a run is under way an empty plot says points are coming, not "Press Start"."""
        self._running = running
        self._update_labels()

    def set_mode(self, mode: str) -> None:
        if mode not in ("time", "throughput"):
            raise ValueError(f"plot mode must be 'time' or 'throughput', not {mode!r}")
        if mode == self.mode:
            return
        self.mode = mode
        (self.throughput_radio if mode == "throughput" else self.time_radio).setChecked(True)
        self._update_labels()
        self._update_data()

    def set_points(self, points: list[Any]) -> None:
        self._series = build_series(points)
        self._update_labels()
        self._update_data()

    def set_recorded(self, series: list[Series], mark: str) -> None:
        """A lesson's recorded results as their own dashed curves beside the run's, with one legend
        row saying where and when they were measured (``mark``, "recorded on NVIDIA H100 80GB
        HBM3, 2026-11-26"); an empty list takes them away."""
        self._recorded = list(series)
        self._recorded_mark = mark if series else ""
        self._forget_lines()
        self._update_labels()
        self._update_data()

    def recorded_items(self) -> list[pg.PlotDataItem]:
        """The curves of the recorded results now drawn."""
        return [self._items[s.variant] for s in self._recorded if s.variant in self._items]

    def apply_theme(self, theme: Theme) -> None:
        """Restyle for a new theme: backgrounds, axes, legends, and every line drawn anew (their
        labels and symbol outlines carry the background colour)."""
        for widget in (self.main, self.speedup):
            style_plot(widget, theme)
        for legend in (self.legend, self.speedup_legend):
            legend.setBrush(pg.mkBrush(theme.plot_background))
            legend.setPen(pg.mkPen(theme.border))
            legend.setLabelTextColor(theme.plot_foreground)
        self._even_line.setPen(pg.mkPen(theme.muted, width=line_px(1.5), style=Qt.PenStyle.DashLine))
        self._even_line.label.setColor(theme.muted)
        axis_title(self.speedup, "left", "speedup (×)", theme.plot_foreground)
        self._forget_lines()
        self._labels_key = ()
        self._update_labels()
        self._update_data()

    def _forget_lines(self) -> None:
        """Take every line off the plots; ``_update_data`` draws them anew (their pens, markers
        and labels carry the theme's colours and the text size)."""
        for item in self._items.values():
            self.main.removeItem(item)
        for line in self._peak_lines.values():
            self.main.removeItem(line)
        for item in self._speedup_items.values():
            self.speedup.removeItem(item)
        if self._mark_item is not None:
            self.main.removeItem(self._mark_item)
            self._mark_item = None
        if self._invalid_item is not None:
            self.main.removeItem(self._invalid_item)
            self._invalid_item = None
        for cross in self._crosses.values():
            self.main.removeItem(cross)
        self._crosses.clear()
        for sample in self._peak_rows:
            self.legend.removeItem(sample)
        self._peak_rows.clear()
        self._peak_rows_key = ()
        self._items.clear()
        self._peak_lines.clear()
        self._speedup_items.clear()
        self._colours.clear()

    @property
    def series(self) -> list[Series]:
        return list(self._series)

    def curve_names(self) -> list[str]:
        """Names of the lines now drawn, variants then speedups (what the legends list)."""
        names = [i.name() for i in self.main.listDataItems() if i.name() and i.isVisible()]
        names += [i.name() for i in self.speedup.listDataItems() if i.name() and i.isVisible()]
        return names

    def peak_lines(self) -> list[pg.InfiniteLine]:
        return [line for line in self._peak_lines.values() if line.isVisible()]

    # --- drawing ------------------------------------------------------------------------
    def _update_labels(self) -> None:
        unit = next((s.unit for s in (*self._series, *self._recorded) if s.unit), "")
        shown = bool(self._series or self._recorded)
        key = (self.mode, unit, self._size_name, self._workload_title, shown, self._running)
        if key == self._labels_key:
            return
        self._labels_key = key
        theme = current_theme()
        fg, muted = theme.plot_foreground, theme.muted
        if self.mode == "throughput":
            self._left_titles = (f"throughput ({unit})", unit) if unit else ("throughput", "")
        else:
            self._left_titles = ("median time", "time")
        self._fit_left_title()
        self.main.getAxis("left").si_suffix = "s" if self.mode == "time" else None
        self.main.getAxis("left").setTicks(None)  # redraws the tick labels in the new unit
        axis_title(self.main, "bottom", self._size_name, fg)
        axis_title(self.speedup, "bottom", self._size_name, fg)
        if not shown:
            plot_title(
                self.main,
                "Measuring: each point appears here as soon as it is measured"
                if self._running
                else "Press Start: each point appears here as soon as it is measured",
                muted,
            )
        else:
            # pyqtgraph titles are HTML: "Host <-> device copies" would lose its arrow
            plot_title(self.main, html.escape(self._workload_title), fg)

    def _update_data(self) -> None:
        every = [*self._series, *self._recorded]
        variants = {s.variant for s in every}
        for gone in [v for v in self._items if v not in variants]:
            self.main.removeItem(self._items.pop(gone))
            if gone in self._crosses:
                self.main.removeItem(self._crosses.pop(gone))
            self._colours.pop(gone, None)
        devices = {(s.device, s.peak) for s in every}
        for gone_peak in [key for key in self._peak_lines if key not in devices]:
            self.main.removeItem(self._peak_lines.pop(gone_peak))
        if self._recorded and self._mark_item is None:
            self._mark_item = self._new_mark()
        for index, s in enumerate(every):
            item = self._items.get(s.variant) or self._new_curve(
                s, index, recorded=index >= len(self._series)
            )
            values = s.throughput if self.mode == "throughput" else s.median_s
            invalid = s.invalid or [False] * len(s.sizes)
            # a disturbed point hollow; an invalid one (faster than the hardware can go) not drawn
            # as the curve's marker but crossed, by its own item (a legend row draws one symbol)
            rows = [
                (n, v, noisy, bad)
                for n, v, noisy, bad in zip(s.sizes, values, s.noisy, invalid, strict=True)
                if v is not None and v > 0
            ]
            colour = self._colours[s.variant]
            # one pen and one brush object per look: pyqtgraph draws a marker image per distinct
            # object, so a pen made per point drew 20,000 images for a lesson's 20,000 points (5 s)
            hollow = pg.mkBrush(current_theme().plot_background)
            brushes = {"bad": pg.mkBrush(None), "noisy": hollow, "ok": pg.mkBrush(colour)}
            pens = {
                "bad": pg.mkPen(None),
                "noisy": pg.mkPen(colour, width=line_px(2.5)),
                "ok": pg.mkPen(current_theme().plot_background, width=line_px(1)),
            }
            looks = ["bad" if bad else "noisy" if noisy else "ok" for *_, noisy, bad in rows]
            item.setData(
                [n for n, *_ in rows],
                [v for _, v, *_ in rows],
                symbolBrush=[brushes[look] for look in looks],
                symbolPen=[pens[look] for look in looks],
            )
            crosses = [(n, v) for n, v, _, bad in rows if bad]
            cross = self._crosses.get(s.variant)
            if crosses and cross is None:
                cross = self._crosses[s.variant] = pg.PlotDataItem(
                    [], [], pen=None, symbol=INVALID_SYMBOL, symbolSize=px(12), symbolBrush=hollow
                )
                cross.setZValue(item.zValue() + 1)
                self.main.addItem(cross)
            if cross is not None:
                cross.setData(
                    [n for n, _ in crosses],
                    [v for _, v in crosses],
                    symbolPen=pg.mkPen(colour, width=line_px(2.5)),
                )
            line = self._peak_lines.get((s.device, s.peak))
            if line is None and s.peak is not None and s.peak > 0:
                line = self._new_peak(s)
            if line is not None:
                line.setVisible(self.mode == "throughput")
                line.setToolTip(peak_tooltip(s))  # counts the points above it, so kept current
        self.hint_label.setText(NOISY_HINT if any(any(s.noisy) for s in every) else HINT)
        self._name_invalid(any(any(s.invalid) for s in every))
        self._name_peaks()
        self._fit_peak_labels()
        self._update_ticks()
        self._fit_x()
        self._fit_y()
        self._update_speedup()
        fit_legend_columns(self.legend, self.main.getPlotItem().vb.width())
        self._keep_room()

    def _keep_room(self) -> None:
        """The plot's view keeps ``MIN_PLOT_LINES`` lines of its ticks whatever the legend under
        it and the titles take; the page scrolls where it is shorter."""
        keep_plot_lines(self.main)

    def _new_curve(self, s: Series, index: int, recorded: bool = False) -> pg.PlotDataItem:
        cpu_colours = CPU_COLOURS_DARK if current_theme().name == "dark" else CPU_COLOURS
        if recorded:  # the recorded curves in colours of their own, after the run's
            used = [v for v in self._colours if v in {r.variant for r in self._recorded}]
            colour = _RECORDED_COLOURS[len(used) % len(_RECORDED_COLOURS)]
        else:
            cpu_count = sum(1 for v, c in self._colours.items() if c in cpu_colours)
            gpu_count = len(self._colours) - cpu_count
            if s.device == "cpu":
                colour = cpu_colours[cpu_count % len(cpu_colours)]
            else:
                colour = GPU_COLOURS[gpu_count % len(GPU_COLOURS)]
        self._colours[s.variant] = colour
        style = Qt.PenStyle.DashLine if recorded else Qt.PenStyle.SolidLine
        item = self.main.plot(
            [],
            [],
            name=s.variant,
            pen=pg.mkPen(colour, width=line_px(3), style=style),
            symbol=SYMBOLS[index % len(SYMBOLS)],
            symbolSize=px(10),
            symbolBrush=colour,
            symbolPen=pg.mkPen(current_theme().plot_background, width=line_px(1)),
        )
        self._items[s.variant] = item
        if recorded:
            item.setToolTip(f"{s.variant}: {self._recorded_mark} (not measured here)")
        return item

    def _new_mark(self) -> pg.PlotDataItem:
        """The legend's row saying where the dashed curves come from: a dashed sample, no data."""
        mark = pg.PlotDataItem(
            [],
            [],
            name=f"dashed: {self._recorded_mark}",
            pen=pg.mkPen(current_theme().plot_foreground, width=line_px(2), style=Qt.PenStyle.DashLine),
        )
        self.main.addItem(mark)
        return mark

    def _name_invalid(self, shown: bool) -> None:
        """The legend's row naming the crossed marker, while an invalid point is drawn."""
        if shown and self._invalid_item is None:
            theme = current_theme()
            self._invalid_item = pg.PlotDataItem(
                [],
                [],
                name=INVALID_LEGEND,
                pen=None,
                symbol=INVALID_SYMBOL,
                symbolBrush=pg.mkBrush(theme.plot_background),
                symbolPen=pg.mkPen(theme.plot_foreground, width=line_px(2)),
            )
            self.main.addItem(self._invalid_item)
        elif not shown and self._invalid_item is not None:
            self.main.removeItem(self._invalid_item)
            self._invalid_item = None

    def _name_peaks(self) -> None:
        """One peak is named on its line, top left; two or more (a lesson's recorded GPU and CPU
        beside this CPU) are named in the legend, each row a dashed sample in its line's colour:
        labels on lines a few pixels apart were written over each other and over the curves."""
        shown = [line for line in self._peak_lines.values() if line.isVisible()]
        in_legend = len(shown) > 1
        for line in self._peak_lines.values():
            line.label.setVisible(line.isVisible() and not in_legend)
        key = (
            tuple((line.property("labels")[1], line.pen.color().name()) for line in shown)
            if in_legend
            else ()
        )
        if key == self._peak_rows_key:
            return
        self._peak_rows_key = key
        for sample in self._peak_rows:
            self.legend.removeItem(sample)
        self._peak_rows.clear()
        for line in shown if in_legend else []:
            sample = pg.PlotDataItem([], [], pen=line.pen)
            self.legend.addItem(sample, line.property("labels")[1])
            self._peak_rows.append(sample)

    def peak_names(self) -> list[str]:
        """The peaks as the plot names them now: on their lines, or in the legend's rows."""
        if self._peak_rows:
            rows = {id(item) for item in self._peak_rows}
            return [label.text for sample, label in self.legend.items if id(sample.item) in rows]
        return [line.label.toPlainText() for line in self.peak_lines()]

    def _new_peak(self, s: Series) -> pg.InfiniteLine:
        """The device's peak, dashed in the series' colour. Log-mode view coordinates are log10."""
        colour = self._colours.get(s.variant, GPU_COLOURS[0])
        assert s.peak is not None and s.peak > 0  # the caller draws a peak only where one is known
        line = pg.InfiniteLine(
            pos=math.log10(s.peak),
            angle=0,
            pen=pg.mkPen(colour, width=line_px(2), style=Qt.PenStyle.DashLine),
            label=peak_label(s),
            labelOpts={
                "position": 0.02,
                "color": colour,
                "anchors": [(0, 1), (0, 1)],
                "fill": current_theme().plot_background,
            },
        )
        line.label.setFont(figure_font(LABEL_SHARE))
        line.setProperty("labels", (peak_label(s), peak_label(s, with_basis=False)))
        line.setZValue(-5)
        self.main.addItem(line)
        self._peak_lines[(s.device, s.peak)] = line
        return line

    def exported_plots(self) -> list[pg.PlotWidget]:
        """What a PNG export holds: the main plot, and the speedup strip when it is shown."""
        return [self.main] + ([self.speedup] if not self.speedup.isHidden() else [])

    def _update_speedup(self) -> None:
        curves = {c.label: c for c in speedup_curves(self._series)}
        for gone in [name for name in self._speedup_items if name not in curves]:
            self.speedup.removeItem(self._speedup_items.pop(gone))
        for name, curve in curves.items():
            item = self._speedup_items.get(name)
            if item is None:
                colour = self._colours.get(curve.variant, GPU_COLOURS[0])
                item = self.speedup.plot(
                    [],
                    [],
                    name=name,
                    pen=pg.mkPen(colour, width=line_px(3)),
                    symbol="o",
                    symbolSize=px(8),
                    symbolBrush=colour,
                )
                self._speedup_items[name] = item
            item.setData(curve.sizes, curve.ratios)
        self.speedup.setVisible(bool(curves))
        # the strip shares the x axis and names it below; the main plot keeps only its ticks
        self.main.getAxis("bottom").showLabel(not curves)

    def _fit_to_size(self) -> None:
        fit_legend_columns(self.legend, self.main.getPlotItem().vb.width())
        self._keep_room()
        self._fit_peak_labels()
        self._fit_left_title()
        self._fit_x()
        self._fit_y()

    def _fit_x(self) -> None:
        """The sizes measured (or planned), with a margin so no point sits on an axis."""
        xs: list[float] = []
        for item in self._items.values():
            data_x, _ = item.getData()  # already log10 in log mode
            if data_x is not None:
                xs.extend(float(x) for x in data_x)
        if not xs:
            if self._planned:
                low, high = math.log10(min(self._planned)), math.log10(max(self._planned))
                span = max(high - low, 0.3)
                self.main.setXRange(low - 0.06 * span, high + 0.06 * span, padding=0)
            else:
                self.main.enableAutoRange(axis="x")
            return
        low, high = min(xs), max(xs)
        span = max(high - low, 0.3)
        self.main.setXRange(low - 0.06 * span, high + 0.06 * span, padding=0)

    def _fit_peak_labels(self) -> None:
        """Each peak's label with its basis where the view is wide enough, else the device, the
        kind of peak and the figure: at 200% text on a 1280x800 projector the full label ran
        past the plot's right edge ("... x 64 FLOP/cy")."""
        room = self.main.getPlotItem().vb.width() - px(16)
        for line in self._peak_lines.values():
            full, short = line.property("labels")
            metrics = QFontMetrics(line.label.textItem.font())
            text = full if room <= 0 or metrics.horizontalAdvance(full) <= room else short
            if line.label.toPlainText() != text:
                line.label.format = text  # what the label redraws from when its line moves
                line.label.setPlainText(text)

    def _fit_left_title(self) -> None:
        """The y axis title in full where the axis is tall enough ("throughput (GFLOP/s)"), else
        its unit alone ("GFLOP/s"): a title longer than the axis is cut off at both ends."""
        full, short = self._left_titles
        if not full:
            return
        axis = self.main.getAxis("left")
        font = figure_font(AXIS_TITLE_SHARE)
        room = self.main.getPlotItem().vb.height()
        text = full if room <= 0 or QFontMetrics(font).horizontalAdvance(full) + px(8) <= room else short
        if axis.labelText != text or not axis.label.isVisible():
            axis_title(self.main, "left", text, current_theme().plot_foreground)

    def _label_share(self) -> float:
        """The share of the view's height the peak labels need above their lines (they are drawn
        at a fixed pixel size, so a short plot must give them a larger share)."""
        height = self.main.getPlotItem().vb.height()
        labels = [
            line.label for line in self._peak_lines.values() if line.isVisible() and line.label.isVisible()
        ]
        if not labels or height <= 0:
            return 0.0
        need = max(label.boundingRect().height() for label in labels) + px(4)
        return min(need / height, 0.6)

    def _fit_y(self) -> None:
        """Autorange ignores infinite lines; widen the view so the peak lines and labels show."""
        peaks = [line.value() for line in self._peak_lines.values() if line.isVisible()]
        if not peaks:
            self.main.enableAutoRange(axis="y")
            return
        values: list[float] = []
        for item in self._items.values():
            _, ys = item.getData()  # already log10 in log mode
            if ys is not None:
                values.extend(float(y) for y in ys)
        low = min(values + peaks)
        high = max(values + peaks)
        span = max(high - low, 0.5)
        bottom = low - 0.05 * span
        # the top leaves the label's pixel height above the highest line, and at least 15% of the span
        top = max(high + 0.15 * span, bottom + (high - bottom) / (1 - self._label_share()))
        self.main.setYRange(bottom, top, padding=0)

    def _update_ticks(self) -> None:
        """Tick the sizes actually measured (64, 128, ...), labelled as the engine labels them."""
        labels = {
            n: text
            for s in (*self._series, *self._recorded)
            for n, text in zip(s.sizes, s.size_labels, strict=True)
        }
        if labels == self._tick_labels:
            return
        self._tick_labels = labels
        for plot in (self.main, self.speedup):
            axis = plot.getAxis("bottom")
            if 0 < len(labels) <= 14:
                axis.setTicks([[(math.log10(n), labels[n]) for n in sorted(labels)], []])
            else:
                axis.setTicks(None)
