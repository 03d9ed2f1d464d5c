"""The live plot: time or throughput against size on log axes, one line per variant.

Below it, the speedup of each GPU variant over the CPU at the sizes both measured, with the
break-even line at 1: the size where the GPU starts to win is where its curve crosses that line.
The device's peak (in the throughput unit) is drawn dashed, so students see how far below the
sheet figure real code runs.
"""

from __future__ import annotations

import math
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QLabel, QRadioButton, QVBoxLayout, QWidget

from explorer.ui.bench.fmt import number_text
from explorer.ui.bench.series import Series, build_series, speedup_series
from explorer.ui.theme import current_theme

# Colour-blind-safe (Okabe-Ito), readable on a projector: CPU blue, GPUs orange/green/purple...
_CPU_COLOURS = ("#0072B2", "#56B4E9", "#009E73")
_GPU_COLOURS = ("#D55E00", "#E69F00", "#CC79A7", "#009E73", "#F0E442")
_SYMBOLS = ("o", "s", "t", "d", "+")


class LogAxis(pg.AxisItem):
    """Log-axis labels a student reads aloud: 10 µs, 1 ms / 100, 1,000; only 1-2-5 ticks labelled."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self.si_suffix: str | None = None  # "s" for times (SI prefixes); None for plain numbers

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        numbers = [10 ** float(v) * scale for v in values]
        keep = [_is_125(x) for x in numbers]
        if sum(keep) < 2:
            keep = [True] * len(numbers)
        return [self._text(x) if k else "" for x, k in zip(numbers, keep, strict=True)]

    def _text(self, x: float) -> str:
        if self.si_suffix is not None:
            return pg.siFormat(x, precision=2, suffix=self.si_suffix)
        return f"{x:,.0f}" if x >= 1 else f"{x:.2g}"


def _is_125(x: float) -> bool:
    if x <= 0:
        return False
    mantissa = x / 10 ** math.floor(math.log10(x) + 1e-9)
    return any(abs(mantissa - m) < 1e-3 * m for m in (1.0, 2.0, 5.0))


def _plot_widget() -> pg.PlotWidget:
    axes = {"left": LogAxis("left"), "bottom": LogAxis("bottom")}
    theme = current_theme()
    widget = pg.PlotWidget(background=theme.plot_background, axisItems=axes)
    widget.setLogMode(x=True, y=True)
    widget.showGrid(x=True, y=True, alpha=0.25)
    font = QFont()
    font.setPointSize(11)
    for ax in axes.values():
        ax.setTextPen(theme.plot_foreground)
        ax.setPen(theme.plot_foreground)
        ax.setStyle(tickFont=font)
    axes["left"].setWidth(80)
    return widget


class BenchPlot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=True)
        self.mode = "throughput"
        self._series: list[Series] = []
        self._size_name = "size"
        self._workload_title = ""

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
        toggle_row.addStretch(1)
        self.hint_label = QLabel("log–log axes; error rows are listed in the table, not plotted")
        self.hint_label.setProperty("role", "caption")
        toggle_row.addWidget(self.hint_label)
        layout.addLayout(toggle_row)

        self.main = _plot_widget()
        self.speedup = _plot_widget()
        fg = current_theme().plot_foreground
        self.legend = self.main.addLegend(offset=(10, 10), labelTextSize="11pt", labelTextColor=fg)
        self.legend.setBrush(pg.mkBrush(current_theme().plot_background))
        self.legend.setPen(pg.mkPen(current_theme().border))
        self.speedup_legend = self.speedup.addLegend(offset=(10, 10), labelTextSize="10pt", labelTextColor=fg)
        self.speedup.setLabel("left", "GPU speedup (×)", color=fg, size="11pt")
        self.speedup.setMaximumHeight(220)
        self.speedup.setXLink(self.main)
        layout.addWidget(self.main, 3)
        layout.addWidget(self.speedup, 1)
        self.speedup.hide()

        self.throughput_radio.toggled.connect(lambda on: self.set_mode("throughput" if on else "time"))
        self._redraw()

    def set_titles(self, workload_title: str, size_name: str) -> None:
        """The workload's title heads the plot (and so every exported PNG); the size name labels x."""
        self._workload_title = workload_title
        self._size_name = size_name or "size"
        self._redraw()

    def set_mode(self, mode: str) -> None:
        if mode not in ("time", "throughput"):
            raise ValueError(f"plot mode must be 'time' or 'throughput', not {mode!r}")
        self.mode = mode
        (self.throughput_radio if mode == "throughput" else self.time_radio).setChecked(True)
        self._redraw()

    def set_points(self, points: list[Any]) -> None:
        self._series = build_series(points)
        self._redraw()

    @property
    def series(self) -> list[Series]:
        return list(self._series)

    def curve_names(self) -> list[str]:
        """Names of the lines now drawn (for tests and the legend): variants, peaks, speedups."""
        names = [item.name() for item in self.main.listDataItems() if item.name()]
        names += [item.name() for item in self.speedup.listDataItems() if item.name()]
        return names

    def peak_lines(self) -> list[pg.InfiniteLine]:
        return [i for i in self.main.getPlotItem().items if isinstance(i, pg.InfiniteLine)]

    def _redraw(self) -> None:
        self.main.clear()
        self.speedup.clear()
        unit = next((s.unit for s in self._series if s.unit), "")
        fg, muted = current_theme().plot_foreground, current_theme().muted
        if self.mode == "throughput":
            self.main.setLabel("left", f"throughput ({unit})" if unit else "throughput", color=fg, size="12pt")
        else:
            self.main.setLabel("left", "median time (s)", color=fg, size="12pt")
        self.main.setLabel("bottom", self._size_name, color=fg, size="12pt")
        self.speedup.setLabel("bottom", self._size_name, color=fg, size="11pt")
        if not self._series:
            self.main.setTitle("Press Start: each point appears here as soon as it is measured", color=muted, size="12pt")
        else:
            self.main.setTitle(self._workload_title or None, color=fg, size="13pt")

        self.main.getAxis("left").si_suffix = "s" if self.mode == "time" else None
        # throughput rises to the right, so its empty corner is bottom right; times, top left
        if self.mode == "throughput":
            self.legend.anchor((1, 1), (1, 1), offset=(-10, -10))
        else:
            self.legend.anchor((0, 0), (0, 0), offset=(10, 10))
        self._set_size_ticks()
        cpu_i = gpu_i = 0
        peaks: list[float] = []
        colours: dict[str, str] = {}
        for index, s in enumerate(self._series):
            if s.device == "cpu":
                colour = _CPU_COLOURS[cpu_i % len(_CPU_COLOURS)]
                cpu_i += 1
            else:
                colour = _GPU_COLOURS[gpu_i % len(_GPU_COLOURS)]
                gpu_i += 1
            colours[s.variant] = colour
            if self.mode == "throughput":
                pairs = [(n, v) for n, v in zip(s.sizes, s.throughput, strict=True) if v is not None and v > 0]
            else:
                pairs = [(n, v) for n, v in zip(s.sizes, s.median_s, strict=True) if v > 0]
            if not pairs:
                continue
            xs, ys = zip(*pairs, strict=True)
            self.main.plot(
                list(xs), list(ys), name=s.variant,
                pen=pg.mkPen(colour, width=3),
                symbol=_SYMBOLS[index % len(_SYMBOLS)], symbolSize=10,
                symbolBrush=colour, symbolPen=pg.mkPen("w", width=1),
            )
            if self.mode == "throughput" and s.peak is not None and s.peak > 0:
                self._add_peak(s, colour)
                peaks.append(s.peak)

        self._fit_y(peaks)
        curves = speedup_series(self._series)
        for variant, sizes, ratios in curves:
            colour = colours.get(variant, _GPU_COLOURS[0])
            self.speedup.plot(
                sizes, ratios, name=f"{variant} vs cpu",
                pen=pg.mkPen(colour, width=3), symbol="o", symbolSize=8, symbolBrush=colour,
            )
        if curves:
            even = pg.InfiniteLine(
                pos=0.0, angle=0, pen=pg.mkPen(muted, width=1.5, style=Qt.PenStyle.DashLine),
                label="break-even: GPU as fast as CPU", labelOpts={"position": 0.98, "color": muted, "anchors": [(1, 1), (1, 1)]},
            )
            self.speedup.addItem(even)
        self.speedup.setVisible(bool(curves))

    def _fit_y(self, peaks: list[float]) -> None:
        """Autorange ignores infinite lines; widen the view so every peak line and its label show."""
        self.main.enableAutoRange()
        if not peaks:
            return
        self.main.getPlotItem().vb.updateAutoRange()
        (_, _), (y_low, y_high) = self.main.getPlotItem().vb.childrenBounds()
        if y_low is None:
            return
        top = max(y_high, math.log10(max(peaks))) + 0.25
        bottom = min(y_low, math.log10(min(peaks))) - 0.1
        self.main.setYRange(bottom, top, padding=0)

    def _set_size_ticks(self) -> None:
        """Tick the sizes actually measured (64, 128, ...), labelled as the engine labels them."""
        labels = {n: text for s in self._series for n, text in zip(s.sizes, s.size_labels, strict=True)}
        for plot in (self.main, self.speedup):
            axis = plot.getAxis("bottom")
            if 0 < len(labels) <= 14:
                axis.setTicks([[(math.log10(n), labels[n]) for n in sorted(labels)], []])
            else:
                axis.setTicks(None)

    def _add_peak(self, s: Series, colour: str) -> None:
        # In log mode pyqtgraph's view coordinates are log10 of the data.
        line = pg.InfiniteLine(
            pos=math.log10(s.peak), angle=0,
            pen=pg.mkPen(colour, width=2, style=Qt.PenStyle.DashLine),
            label=f"{s.variant} peak {number_text(s.peak, s.unit)}",
            labelOpts={"position": 0.98, "color": colour, "anchors": [(1, 1), (1, 1)], "fill": current_theme().plot_background},
        )
        line.setZValue(-5)
        self.main.addItem(line)
