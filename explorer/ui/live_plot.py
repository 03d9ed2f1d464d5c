"""The Live group of a present GPU: current sensor values and a one-minute history plot.

pyqtgraph is imported here, and this module only when a present GPU is shown, so a machine
without one never pays for it at start-up.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from explorer.devices.model import CudaGpu, LiveReading
from explorer.ui import formatting as fmt
from explorer.ui.live_monitor import HISTORY_SAMPLES, LiveHistory
from explorer.ui.plot_text import restyle
from explorer.ui.theme import Theme, current_theme, px
from explorer.ui.widgets import FieldGroup, set_role, set_value

UTILIZATION_CAPTION = (
    "NVML's “GPU utilization” is the share of the last sample period in which at least one "
    "kernel was running. It does not say how many SMs were busy: one tiny kernel running all "
    "the time reads 100 %."
)

_GIB = float(1 << 30)

# (field of LiveReading, plot title, unit, scale to the unit)
PLOTS = (
    ("utilization_gpu_pct", "GPU utilization", "%", 1.0),
    ("memory_used_bytes", "Memory used", "GiB", 1 / _GIB),
    ("temperature_c", "Temperature", "°C", 1.0),
    ("power_draw_w", "Power draw", "W", 1.0),
)


def _series(history: list[LiveReading], field: str, scale: float) -> tuple[list[float], list[float]]:
    """x: seconds before the newest sample; y: the field in plot units (NaN where missing)."""
    if not history:
        return [], []
    newest = history[-1].timestamp_s
    xs = [r.timestamp_s - newest for r in history]
    ys = [getattr(r, field) * scale if getattr(r, field) is not None else math.nan for r in history]
    return xs, ys


class LiveView(QGroupBox):
    def __init__(self, monitor: LiveHistory, device: CudaGpu, parent: QWidget | None = None) -> None:
        super().__init__("Live", parent)
        self.monitor = monitor
        self.device = device
        layout = QVBoxLayout(self)
        layout.setSpacing(8)
        row = QHBoxLayout()
        row.setSpacing(12)
        layout.addLayout(row)

        self.values = FieldGroup("", plain=True)
        for key, label in (
            ("utilization_gpu_pct", "GPU utilization"),
            ("memory_used_bytes", "Memory used"),
            ("temperature_c", "Temperature"),
            ("power_draw_w", "Power draw"),
            ("clock_sm_mhz", "SM clock"),
            ("clock_memory_mhz", "Memory clock"),
            ("processes", "Processes"),
        ):
            self.values.add(label, None, "Waiting for the first reading…", key=key)
        self.values.setFixedWidth(330)
        row.addWidget(self.values, 0)

        self.status = QLabel("")
        self.status.setWordWrap(True)
        set_role(self.status, "error")
        self.status.hide()
        layout.addWidget(self.status)

        grid = QGridLayout()
        grid.setSpacing(8)
        self.plots: dict[str, pg.PlotWidget] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}
        for i, (field, title, unit, _scale) in enumerate(PLOTS):
            plot = pg.PlotWidget()
            plot.setFixedHeight(170)
            plot.setMinimumWidth(200)
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            plot.setXRange(-(HISTORY_SAMPLES - 1), 0, padding=0)
            plot.setLabel("bottom", "seconds ago")
            plot.setTitle(f"{title} ({unit})")
            plot.showGrid(x=True, y=True, alpha=0.25)
            if field == "utilization_gpu_pct":
                plot.setYRange(0, 100, padding=0.02)
            curve = plot.plot([], [], connect="finite")
            self.plots[field] = plot
            self.curves[field] = curve
            grid.addWidget(plot, i // 2, i % 2)
        row.addLayout(grid, 1)

        caption = QLabel(UTILIZATION_CAPTION)
        caption.setWordWrap(True)
        set_role(caption, "caption")
        layout.addWidget(caption)
        self.caption = caption

        self.apply_theme(current_theme())
        self.apply_text_scale()
        monitor.updated.connect(self.refresh)
        monitor.unavailable.connect(self.show_unavailable)
        if device.nvml_index is None:
            self.show_unavailable(
                "No live readings for this GPU: "
                + device.unavailable.get(
                    "live", "NVML does not list it (is the NVIDIA driver's NVML library installed?)."
                )
            )
        elif monitor.error:
            self.show_unavailable(monitor.error)
        self.refresh()

    def apply_text_scale(self) -> None:
        """Ticks, titles and the graphs' height follow the window's text size, up and down."""
        for plot in self.plots.values():
            plot.setFixedHeight(px(170))
            restyle(plot)

    def apply_theme(self, theme: Theme) -> None:
        for (field, _t, _u, _s), pen in zip(PLOTS, theme.plot_pens, strict=True):
            plot = self.plots[field]
            plot.setBackground(theme.plot_background)
            for axis in ("left", "bottom"):
                ax = plot.getAxis(axis)
                ax.setPen(pg.mkPen(theme.plot_foreground))
                ax.setTextPen(pg.mkPen(theme.plot_foreground))
            plot.getPlotItem().titleLabel.setText(
                plot.getPlotItem().titleLabel.text, color=theme.plot_foreground
            )
            self.curves[field].setPen(pg.mkPen(pen, width=3))

    def show_unavailable(self, message: str) -> None:
        self.status.setText(message)
        self.status.show()

    def refresh(self) -> None:
        history = self.monitor.history(self.device.key)
        if not history:
            return
        self.status.hide()
        for field, _title, _unit, scale in PLOTS:
            xs, ys = _series(history, field, scale)
            self.curves[field].setData(xs, ys, connect="finite")
        live = history[-1]
        if live.memory_total_bytes is not None:
            self.plots["memory_used_bytes"].setYRange(0, live.memory_total_bytes / _GIB, padding=0.02)
        self._set("utilization_gpu_pct", fmt.pct(live.utilization_gpu_pct), live)
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

    def _set(self, key: str, value: str, live: LiveReading) -> None:
        reason = live.unavailable.get(key)
        set_value(self.values.values[key], value, reason)
