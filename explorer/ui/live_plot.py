"""The Live group of a present GPU: current sensor values and a one-minute history plot.

pyqtgraph is imported here, and this module only when a present GPU is shown, so a machine
without one never pays for it at start-up.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QGridLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from explorer.devices.live import LiveReading
from explorer.devices.model import CudaGpu
from explorer.launch.occupancy_truth import PredictedOccupancy, occupancy_truth
from explorer.ui import formatting as fmt
from explorer.ui.live_monitor import HISTORY_SAMPLES, LiveHistory
from explorer.ui.plot_text import TITLE_SHARE, axis_title, restyle
from explorer.ui.plot_widget import plot_widget
from explorer.ui.theme import Theme, current_theme, figure_pt, line_px, px
from explorer.ui.widgets import FieldGroup, set_role, set_value
from explorer.units import byte_rate
from explorer.words import from_percent, percent

UTILIZATION_CAPTION = (
    "NVML's “GPU utilization” is the share of the last sample period in which at least one "
    "kernel was running. It does not say how many SMs were busy: one tiny kernel running all "
    "the time reads 100 %. SM activity (the share of SMs with work) and SM occupancy (the share "
    "of their warp slots in use) say that; NVML measures them on Hopper and newer GPUs (GPM)."
)

_GIB = float(1 << 30)
#: pixels at 100 % text: the readings column, each plot's height and least width
VALUES_WIDTH = 330
PLOT_HEIGHT = 170
PLOT_MIN_WIDTH = 200
KEY_LINE_HEIGHT = 18


@dataclass(frozen=True)
class LiveCurve:
    """One curve: a LiveReading field and its name in the plot's legend."""

    field: str
    name: str


@dataclass(frozen=True)
class PlotSpec:
    """One live plot: its title and unit, the scale from the fields' unit to the plot's, its curves
    (the first drawn solid, the others dashed and dotted, so they differ in black and white too),
    and a fixed value range where the quantity has one."""

    key: str
    title: str
    unit: str
    scale: float
    series: tuple[LiveCurve, ...]
    pens: tuple[int, ...]  # each curve's colour: an index into the theme's plot pens
    percent: bool = False


PLOTS = (
    PlotSpec(
        "utilization",
        "GPU utilization and SM activity",
        "%",
        1.0,
        (
            LiveCurve("utilization_gpu_pct", "utilization"),
            LiveCurve("sm_activity_pct", "SM activity"),
            LiveCurve("sm_occupancy_pct", "SM occupancy"),
        ),
        (0, 2, 3),
        percent=True,
    ),
    PlotSpec(
        "pcie",
        "PCIe traffic",
        "GB/s",
        1e-9,
        (LiveCurve("pcie_rx_bytes_per_s", "in (to GPU)"), LiveCurve("pcie_tx_bytes_per_s", "out")),
        (0, 1),
    ),
    PlotSpec("memory", "Memory used", "GiB", 1 / _GIB, (LiveCurve("memory_used_bytes", "used"),), (1,)),
    PlotSpec("temperature", "Temperature", "°C", 1.0, (LiveCurve("temperature_c", "temperature"),), (2,)),
    PlotSpec("power", "Power draw", "W", 1.0, (LiveCurve("power_draw_w", "power"),), (3,)),
)
#: pen styles of a plot's first, second and third curve
_STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine)


#: how each of a plot's curves is drawn, as its key in the title shows it
_STYLE_MARKS = ("━━", "╺╸╺╸", "┅┅")


def plot_title(spec: PlotSpec, theme: Theme) -> str:
    """The plot's title and, where it draws more than one curve, their key in the curves' own
    colours and dashes (a legend box inside the plot hid the curves behind it)."""
    title = f"{spec.title} ({spec.unit})"
    if len(spec.series) == 1:
        return title
    keys = [
        f'<span style="color:{theme.plot_pens[pen]}">{mark}</span>&nbsp;{html.escape(series.name)}'
        for series, pen, mark in zip(spec.series, spec.pens, _STYLE_MARKS, strict=False)
    ]
    return f"{html.escape(title)}<br>" + " &nbsp; ".join(keys)


def _series(history: list[LiveReading], field: str, scale: float) -> tuple[list[float], list[float]]:
    """x: seconds before the newest sample; y: the field in plot units (NaN where missing)."""
    if not history:
        return [], []
    newest = history[-1].timestamp_s
    xs = [r.timestamp_s - newest for r in history]
    ys = [getattr(r, field) * scale if getattr(r, field) is not None else math.nan for r in history]
    return xs, ys


class LiveView(QGroupBox):
    def __init__(
        self,
        monitor: LiveHistory,
        device: CudaGpu,
        parent: QWidget | None = None,
        prediction: PredictedOccupancy | None = None,
    ) -> None:
        super().__init__("Live", parent)
        self.monitor = monitor
        self.device = device
        #: the visualizer's launch last run for real on this GPU: its predicted occupancy is shown
        #: beside GPM's, where the GPU has GPM
        self.prediction: PredictedOccupancy | None = None
        layout = QVBoxLayout(self)
        layout.setSpacing(8)
        # the readings beside the plots where both fit, above them in a narrow window
        row = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        row.setSpacing(12)
        layout.addLayout(row)
        self._row = row

        self.values = FieldGroup("", plain=True)
        for key, label in (
            ("utilization_gpu_pct", "GPU utilization"),
            ("sm_activity_pct", "SM activity"),
            ("sm_occupancy_pct", "SM occupancy"),
            ("pcie_rx_bytes_per_s", "PCIe in / out"),
            ("memory_used_bytes", "Memory used"),
            ("temperature_c", "Temperature"),
            ("power_draw_w", "Power draw"),
            ("clock_sm_mhz", "SM clock"),
            ("clock_memory_mhz", "Memory clock"),
            ("processes", "Processes"),
        ):
            self.values.add(label, None, "Waiting for the first reading…", key=key)
        self.values.setFixedWidth(px(VALUES_WIDTH))
        row.addWidget(self.values, 0)

        self.status = QLabel("")
        self.status.setWordWrap(True)
        set_role(self.status, "error")
        self.status.hide()
        layout.addWidget(self.status)

        grid = QGridLayout()
        grid.setSpacing(8)
        self.plots: dict[str, pg.PlotWidget] = {}
        #: one curve per LiveReading field drawn, keyed by the field
        self.curves: dict[str, pg.PlotDataItem] = {}
        for spec in PLOTS:
            plot = plot_widget()
            plot.setMinimumWidth(px(PLOT_MIN_WIDTH))
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            plot.setXRange(-(HISTORY_SAMPLES - 1), 0, padding=0)
            axis_title(plot, "bottom", "seconds ago")
            plot.showGrid(x=True, y=True, alpha=0.25)
            if spec.percent:
                plot.setYRange(0, 100, padding=0.02)
            for series in spec.series:
                self.curves[series.field] = plot.plot([], [], connect="finite", name=series.name)
            self.plots[spec.key] = plot
        self._grid = grid
        self._plot_columns = 0
        self._place_plots(2)
        row.addLayout(grid, 1)

        caption = QLabel(UTILIZATION_CAPTION)
        caption.setWordWrap(True)
        set_role(caption, "caption")
        layout.addWidget(caption)
        self.caption = caption
        #: "predicted occupancy" of the launch run for real, against GPM's (hidden until one is run)
        self.prediction_label = QLabel("")
        self.prediction_label.setWordWrap(True)
        self.prediction_label.setObjectName("predictedOccupancy")
        self.prediction_label.hide()
        layout.addWidget(self.prediction_label)
        self.set_prediction(prediction)

        self.apply_theme(current_theme())
        self.apply_text_scale()
        monitor.updated.connect(self.refresh)
        monitor.unavailable.connect(self.show_unavailable)
        monitor.noted.connect(self.show_note)
        if device.nvml_index is None:
            self.show_unavailable(
                "No live readings for this GPU: "
                + device.unavailable.get(
                    "live", "NVML does not list it (is the NVIDIA driver's NVML library installed?)."
                )
            )
        elif monitor.error:
            self.show_unavailable(monitor.error)
        elif monitor.note:
            self.show_note(monitor.note)
        self.refresh()

    def apply_text_scale(self) -> None:
        """Ticks, titles and the graphs' height follow the window's text size, up and down."""
        for spec in PLOTS:
            plot = self.plots[spec.key]
            # a plot of several curves has their key on a second title line
            plot.setFixedHeight(px(PLOT_HEIGHT + (KEY_LINE_HEIGHT if len(spec.series) > 1 else 0)))
            restyle(plot)
        self.apply_theme(current_theme())  # the titles at the new size, and the room they take

    def apply_theme(self, theme: Theme) -> None:
        for spec in PLOTS:
            plot = self.plots[spec.key]
            plot.setBackground(theme.plot_background)
            for axis in ("left", "bottom"):
                ax = plot.getAxis(axis)
                ax.setPen(pg.mkPen(theme.plot_foreground))
                ax.setTextPen(pg.mkPen(theme.plot_foreground))
            plot.setTitle(
                plot_title(spec, theme), color=theme.plot_foreground, size=f"{figure_pt(TITLE_SHARE)}pt"
            )
            restyle(plot)  # the title's row as tall as its lines (pyqtgraph gives 30 px)
            for series, pen, style in zip(spec.series, spec.pens, _STYLES, strict=False):
                self.curves[series.field].setPen(
                    pg.mkPen(theme.plot_pens[pen], width=line_px(3), style=style)
                )

    def fit_width(self, room: int) -> None:
        """The readings beside the plots where ``room`` pixels hold both, above them otherwise
        (``DeviceDetails`` passes its scroll area's width: this group's own never shrinks below
        its minimum, so at 1024 px the plots ran off the right edge)."""
        margins = self.contentsMargins()
        room -= margins.left() + margins.right() + px(24)
        two_plots = 2 * px(PLOT_MIN_WIDTH) + self._grid.horizontalSpacing()
        side_by_side = room >= px(VALUES_WIDTH) + self._row.spacing() + two_plots
        direction = QBoxLayout.Direction.LeftToRight if side_by_side else QBoxLayout.Direction.TopToBottom
        if self._row.direction() != direction:
            self._row.setDirection(direction)
        self._place_plots(2 if side_by_side or room >= two_plots else 1)

    def _place_plots(self, columns: int) -> None:
        """The plots in two columns (utilization against SM activity, the plot this group is for,
        across both) or one under the other."""
        if columns == self._plot_columns:
            return
        self._plot_columns = columns
        for plot in self.plots.values():
            self._grid.removeWidget(plot)
        for i, spec in enumerate(PLOTS):
            plot = self.plots[spec.key]
            if columns == 1:
                self._grid.addWidget(plot, i, 0)
            elif i == 0:
                self._grid.addWidget(plot, 0, 0, 1, 2)
            else:
                self._grid.addWidget(plot, 1 + (i - 1) // 2, (i - 1) % 2)

    def show_unavailable(self, message: str) -> None:
        set_role(self.status, "error")
        self.status.setText(message)
        self.status.show()

    def show_note(self, message: str) -> None:
        """Why no more readings come, when that is by design (a cluster's GPU): said, not alarmed."""
        set_role(self.status, "caption")
        self.status.setText(message)
        self.status.show()

    def refresh(self) -> None:
        history = self.monitor.history(self.device.key)
        if not history:
            return
        self._show_prediction()
        if not self.monitor.note:
            self.status.hide()
        for spec in PLOTS:
            for series in spec.series:
                xs, ys = _series(history, series.field, spec.scale)
                self.curves[series.field].setData(xs, ys, connect="finite")
        live = history[-1]
        if live.memory_total_bytes is not None:
            self.plots["memory"].setYRange(0, live.memory_total_bytes / _GIB, padding=0.02)
        self._set("utilization_gpu_pct", _reading(live.utilization_gpu_pct), live)
        self._set("sm_activity_pct", _reading(live.sm_activity_pct), live)
        self._set("sm_occupancy_pct", _reading(live.sm_occupancy_pct), live)
        rx, tx = live.pcie_rx_bytes_per_s, live.pcie_tx_bytes_per_s
        self._set(
            "pcie_rx_bytes_per_s",
            fmt.NA if rx is None and tx is None else f"{byte_rate(rx, fmt.NA)} / {byte_rate(tx, fmt.NA)}",
            live,
        )
        self._set(
            "memory_used_bytes", fmt.used_of_total(live.memory_used_bytes, live.memory_total_bytes), live
        )
        self._set("temperature_c", fmt.celsius(live.temperature_c), live)
        power = fmt.watts(live.power_draw_w)
        if live.power_draw_w is not None and live.power_limit_w is not None:
            power = f"{power} (limit {fmt.watts(live.power_limit_w)})"
        self._set("power_draw_w", power, live)
        self._set("clock_sm_mhz", fmt.mhz(live.clock_sm_mhz), live)
        self._set("clock_memory_mhz", fmt.mhz(live.clock_memory_mhz), live)
        procs = self.device.processes
        if procs:
            text = ", ".join(
                f"{p.name} (pid {p.pid}, {fmt.binary_bytes(p.used_memory_bytes)})" for p in procs[:4]
            ) + (f" and {len(procs) - 4} more" if len(procs) > 4 else "")
            set_value(self.values.values["processes"], text)
            self.values.values["processes"].setWordWrap(True)
        else:
            set_value(
                self.values.values["processes"],
                "none at discovery" if "processes" not in self.device.unavailable else None,
                self.device.unavailable.get("processes"),
            )

    def set_prediction(self, prediction: PredictedOccupancy | None) -> None:
        """Show the predicted occupancy of the visualizer's launch run for real on this GPU (one
        of another GPU is not this view's)."""
        if prediction is not None and prediction.device_key != self.device.key:
            return
        self.prediction = prediction
        self._show_prediction()

    def _show_prediction(self) -> None:
        p = self.prediction
        if p is None:
            self.prediction_label.hide()
            return
        truth = occupancy_truth(p, self.monitor.history(self.device.key))
        self.prediction_label.setText("Predicted occupancy: " + "\n".join(truth.lines()))
        self.prediction_label.show()

    def _set(self, key: str, value: str, live: LiveReading) -> None:
        reason = live.unavailable.get(key)
        set_value(self.values.values[key], value, reason)


def _reading(value_pct: float | None) -> str:
    """One of NVML's readings in percent (0..100), as the readings table writes it: "12 %"."""
    return percent(from_percent(value_pct), decimals=0, fine=True, spaced=True, missing=fmt.NA)
