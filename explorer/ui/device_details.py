"""The right-hand side of the Devices panel: one device's facts, grouped as a student reads them.

Compute (what does the work), Memory (where the data lives), Limits (what a CUDA launch may
ask for) and, for a GPU in this machine, Live (what its sensors say now). A value the probes
could not read shows "n/a" with their reason on hover.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.model import CudaGpu, CudaLimits, Device, Gpu
from explorer.ui import formatting as fmt
from explorer.ui.guard import qt_guard
from explorer.ui.widgets import FieldGroup, FitsWidth, set_role

#: label, formatted value (None: missing), the record's field whose reason a missing value shows
Row = tuple[str, str | None, str]


def _reason(device: Device, field: str) -> str | None:
    """The probe's reason for ``field`` (a field of this record; a name it lacks raises ``KeyError``)."""
    return device.reason(field)


def _limit(limits: CudaLimits | None, name: str, formatter: Callable[[Any], str]) -> str | None:
    if limits is None:
        return None
    value = getattr(limits, name)
    return None if value is None else formatter(value)


def compute_rows(d: Device) -> list[Row]:
    if d.kind == "cpu":
        return [
            ("Model", fmt.text(d.name), "name"),
            ("Architecture", fmt.text(d.architecture) if d.architecture else None, "architecture"),
            (
                "Physical cores",
                fmt.quantity(d.physical_cores) if d.physical_cores else None,
                "physical_cores",
            ),
            ("Logical threads", fmt.quantity(d.logical_cores) if d.logical_cores else None, "logical_cores"),
            (
                "Clock",
                fmt.clocks(d.frequency_mhz, d.frequency_max_mhz),
                "frequency_mhz" if d.frequency_mhz is None else "frequency_max_mhz",
            ),
            (
                "Vector instructions",
                ", ".join(f.upper() for f in d.isa_flags) if d.isa_flags else None,
                "isa_flags",
            ),
            (
                "Clock measured",
                f"{d.clock_measured_ghz:.2f} GHz, all cores busy" if d.clock_measured_ghz else None,
                "clock_measured_ghz",
            ),
            (
                # on the measured clock it is the theoretical peak; on a reported one an estimate
                "FP32 peak (theoretical)" if d.clock_measured_ghz else "FP32 peak (estimate)",
                fmt.gflops(d.fp32_peak_gflops) if d.fp32_peak_gflops else None,
                "fp32_peak_gflops",
            ),
            (
                "FP32 sgemm (measured)",
                fmt.gflops(d.fp32_measured_gflops) if d.fp32_measured_gflops else None,
                "fp32_measured_gflops",
            ),
        ]
    rows: list[Row] = [
        ("Compute capability", d.cc_string, "compute_capability"),
        ("Architecture", fmt.text(d.architecture) if d.architecture else None, "architecture"),
    ]
    if d.kind == "catalog":
        rows.append(("Chip", d.chip, "chip"))
    current = d.clock_sm_mhz if d.kind == "cuda" else None
    base = d.clock_sm_base_mhz if d.kind == "catalog" else None
    rows += [
        ("SMs (multiprocessors)", fmt.quantity(d.sm_count) if d.sm_count else None, "sm_count"),
        (
            "CUDA cores per SM",
            fmt.quantity(d.cuda_cores_per_sm) if d.cuda_cores_per_sm else None,
            "cuda_cores_per_sm",
        ),
        (
            "SM clock",
            fmt.clocks(current, d.clock_sm_max_mhz, base),
            "clock_sm_max_mhz",
        ),
        ("FP32 peak", fmt.gflops(d.fp32_peak_gflops) if d.fp32_peak_gflops else None, "fp32_peak_gflops"),
    ]
    if d.kind == "catalog":
        rows.append(("Board power (TDP)", fmt.watts(d.tdp_w) if d.tdp_w else None, "tdp_w"))
        rows.append(("Form factor", d.form_factor, "form_factor"))
    return rows


def memory_rows(d: Device) -> list[Row]:
    if d.kind == "cpu":
        return [
            (
                "Total",
                fmt.binary_bytes(d.memory_total_bytes) if d.memory_total_bytes else None,
                "memory_total_bytes",
            ),
            (
                "Available now",
                fmt.binary_bytes(d.memory_available_bytes) if d.memory_available_bytes else None,
                "memory_available_bytes",
            ),
            (
                "DRAM bandwidth (measured)",
                fmt.bandwidth(d.memory_bandwidth_gbps) if d.memory_bandwidth_gbps else None,
                "memory_bandwidth_gbps",
            ),
        ]
    rows: list[Row] = [
        (
            "Size",
            fmt.binary_bytes(d.memory_total_bytes) if d.memory_total_bytes else None,
            "memory_total_bytes",
        ),
    ]
    if d.kind == "catalog":
        rows.append(("Type", d.memory_type, "memory_type"))
    rows += [
        (
            "Bus width",
            fmt.quantity(d.memory_bus_width_bits, "bit") if d.memory_bus_width_bits else None,
            "memory_bus_width_bits",
        ),
        (
            "Bandwidth",
            fmt.bandwidth(d.memory_bandwidth_gbps) if d.memory_bandwidth_gbps else None,
            "memory_bandwidth_gbps",
        ),
    ]
    if d.kind == "cuda":
        rows.append(
            (
                "Memory clock",
                fmt.clocks(d.clock_memory_mhz, d.clock_memory_max_mhz),
                "clock_memory_max_mhz",
            )
        )
    rows.append(("L2 cache", _limit(d.limits, "l2_cache_bytes", fmt.binary_bytes), "limits.l2_cache_bytes"))
    return rows


# (label, ArchLimits field, formatter): the limits the launch visualizer and occupancy use
_LIMIT_FIELDS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("Warp size", "warp_size", fmt.quantity),
    ("Max threads per block", "max_threads_per_block", fmt.quantity),
    ("Max threads per SM", "max_threads_per_sm", fmt.quantity),
    ("Max warps per SM", "max_warps_per_sm", fmt.quantity),
    ("Max blocks per SM", "max_blocks_per_sm", fmt.quantity),
    ("Max block size", "max_block_dim", fmt.dims),
    ("Max grid size", "max_grid_dim", fmt.dims),
    ("Shared memory per block", "max_smem_per_block_bytes", fmt.binary_bytes),
    ("… with opt-in", "max_smem_per_block_optin_bytes", fmt.binary_bytes),
    ("Shared memory per SM", "smem_per_sm_bytes", fmt.binary_bytes),
    ("Registers per SM", "regs_per_sm", fmt.quantity),
    ("Registers per block", "max_regs_per_block", fmt.quantity),
    ("Registers per thread", "max_regs_per_thread", fmt.quantity),
)


def limits_rows(d: Gpu) -> list[tuple[str, str | None, str]]:
    """The launch limits the rest of the app uses for this GPU: (label, value, source or reason).

    They come from the launch core (its per-compute-capability table, with every limit the
    driver reported for a present GPU put first), so the Devices panel and the Launch
    visualizer never disagree. Each value's hover text names its source.
    """
    try:
        from explorer.devices.limits import limits_for_device

        arch = limits_for_device(d)
    except Exception as exc:  # no CC, or a CC the table does not know: say why, per row
        reason = _reason(d, "limits") or f"No launch limits for this device: {exc}"
        return [(label, None, reason) for label, _name, _f in _LIMIT_FIELDS]
    return [
        (label, fmt_(getattr(arch, name)), arch.sources.get(name, "")) for label, name, fmt_ in _LIMIT_FIELDS
    ]


def identity_rows(d: CudaGpu) -> list[tuple[str, str | None, str | None]]:
    """(label, value, hover): the hover is the probe's reason when missing, the full text when shortened."""
    pcie = None
    if d.pcie_generation is not None or d.pcie_width is not None:
        now = f"Gen {fmt.text(d.pcie_generation)} x{fmt.text(d.pcie_width)}"
        top = (
            f" (max Gen {fmt.text(d.pcie_generation_max)} x{fmt.text(d.pcie_width_max)})"
            if d.pcie_generation_max or d.pcie_width_max
            else ""
        )
        pcie = now + top
    rows: list[tuple[str, str | None, str]] = [
        ("CUDA index", f"cuda:{d.index}" if d.index is not None else None, "index"),
        ("NVML index", fmt.quantity(d.nvml_index) if d.nvml_index is not None else None, "nvml_index"),
        ("UUID", fmt.shorten_middle(d.uuid), "uuid"),
        ("PCI bus", d.pci_bus_id, "pci_bus_id"),
        ("Driver", d.driver_version, "driver_version"),
        ("CUDA driver API", d.cuda_driver_version, "cuda_driver_version"),
        ("PCIe link", pcie, "pcie_generation"),
        ("MIG mode", d.mig_mode, "mig_mode"),
    ]
    full = {"uuid": d.uuid}
    return [
        (label, value, _reason(d, field) if value is None else full.get(field))
        for label, value, field in rows
    ]


class DeviceHeader(QWidget):
    """Name, a present/catalog badge in words (never colour alone) and where the numbers came from.

    ``host`` names the remote machine the device is on (None: this machine)."""

    def __init__(self, device: Device, parent: QWidget | None = None, *, host: str | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        top = QHBoxLayout()
        self.title = QLabel(device.name)
        set_role(self.title, "title")
        self.title.setWordWrap(True)
        top.addWidget(self.title, 1)
        self.badge = QLabel()
        on = f"on {host}" if host else "on this machine"
        if device.kind == "catalog":
            self.badge.setText("catalog — not present")
            set_role(self.badge, "catalog")
        elif device.kind == "cuda":
            where = f"cuda:{device.index}" if device.usable else "hidden from CUDA"
            self.badge.setText(f"● present {on} · {where}")
            set_role(self.badge, "present")
        else:
            self.badge.setText(f"● present {on} · CPU")
            set_role(self.badge, "present")
        self.badge.setWordWrap(True)  # at 200% text "● present on this machine · CPU" is 530 px
        top.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        layout.addLayout(top)
        if device.kind == "catalog":
            explain = QLabel(
                "A spec sheet, not hardware in this computer: use it to plan launches and compare "
                "GPUs. It cannot run benchmarks."
            )
            explain.setWordWrap(True)
            set_role(explain, "muted")
            layout.addWidget(explain)
        if device.kind == "cuda" and device.hidden:
            hidden = QLabel(
                f"This GPU is {device.hidden}. Its live readings below come from the driver (NVML); "
                "unset CUDA_VISIBLE_DEVICES, or list this GPU in it, to run work on it."
            )
            hidden.setWordWrap(True)
            set_role(hidden, "muted")
            layout.addWidget(hidden)
        if device.source:
            source = QLabel(f"Source: {device.source}")
            source.setWordWrap(True)
            set_role(source, "caption")
            layout.addWidget(source)


class DeviceDetails(QWidget):
    """Rebuilt for each selected device; the Live group is supplied by the panel (it owns the timer)."""

    def __init__(
        self,
        device: Device,
        live_widget: QWidget | None = None,
        parent: QWidget | None = None,
        *,
        host: str | None = None,
        roof_widget: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.device = device
        self.host = host
        self.groups: dict[str, FieldGroup] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(10)
        self.header = DeviceHeader(device, host=host)
        outer.addWidget(self.header)
        self.live_widget = live_widget
        if live_widget is not None:
            # What the GPU does now comes first: it is what a class watches during a benchmark.
            outer.addWidget(live_widget)

        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(10)
        left = QVBoxLayout()
        left.setSpacing(10)
        right = QVBoxLayout()
        right.setSpacing(10)
        left.addWidget(self._group("Compute", compute_rows(device)))
        if device.kind == "cpu":
            right.addWidget(self._group("Memory", memory_rows(device)))
        else:
            left.addWidget(self._group("Memory", memory_rows(device)))
            right.addWidget(self._group("Limits", [], limits_rows(device)))
            if device.kind == "cuda":
                right.addWidget(self._group("Board", [], identity_rows(device)))
        if roof_widget is not None:  # the roofline's ceilings (``explorer.ui.roof_section``)
            (right if device.kind == "cpu" else left).addWidget(roof_widget)
        left.addStretch(1)
        right.addStretch(1)
        self._grid, self._left, self._right = grid, left, right
        self._side_by_side: bool | None = None
        self._watched: QWidget | None = None  # the scroll area's viewport whose width decides
        self._place_columns(True)
        outer.addLayout(grid)
        for note in device.notes:
            label = QLabel(note)
            label.setWordWrap(True)
            set_role(label, "caption")
            outer.addWidget(label)
        outer.addStretch(1)

    def _place_columns(self, side_by_side: bool) -> None:
        """The groups in two columns, or the second column under the first where the two do not
        fit side by side: on a 1024 px projector the CPU's Compute and Memory groups were wider
        than the details pane together, and the pane scrolled sideways with values cut off."""
        if side_by_side == self._side_by_side:
            return
        self._side_by_side = side_by_side
        grid = self._grid
        grid.removeItem(self._left)
        grid.removeItem(self._right)
        grid.addLayout(self._left, 0, 0)
        grid.addLayout(self._right, 0, 1) if side_by_side else grid.addLayout(self._right, 1, 0)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1 if side_by_side else 0)

    def columns_side_by_side(self) -> bool:
        return bool(self._side_by_side)

    def fit_width(self, room: int) -> None:
        """Two columns if they fit in ``room`` pixels, else one under the other; the Live group
        arranges itself in the same room."""
        need = (
            _comfortable_width(self._left) + _comfortable_width(self._right) + self._grid.horizontalSpacing()
        )
        self._place_columns(room >= need)
        if isinstance(self.live_widget, FitsWidth):
            self.live_widget.fit_width(room)

    def _scroll_viewport(self) -> QWidget | None:
        w = self.parentWidget()
        while w is not None and not isinstance(w, QAbstractScrollArea):
            w = w.parentWidget()
        return w.viewport() if isinstance(w, QAbstractScrollArea) else None

    def _fit_viewport(self) -> None:
        """Inside a scroll area the room is its viewport's width (less the margins around this
        widget), not this widget's: a scroll area never makes its content narrower than the
        content's minimum, so two columns side by side would keep themselves side by side."""
        viewport = self._scroll_viewport()
        if viewport is None:
            self.fit_width(self.width())
            return
        content = self.parentWidget()
        margins = content.width() - self.width() if content is not None else 0
        self.fit_width(viewport.width() - max(margins, 0))

    @qt_guard
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        viewport = self._scroll_viewport()
        if viewport is not None and viewport is not self._watched:
            viewport.installEventFilter(self)
            self._watched = viewport
        self._fit_viewport()

    @qt_guard
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._watched and event.type() == QEvent.Type.Resize:
            self._fit_viewport()
        return False

    @qt_guard
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._scroll_viewport() is None:
            self.fit_width(self.width())

    def _group(
        self, title: str, rows: list[Row], explained: Sequence[tuple[str, str | None, str | None]] = ()
    ) -> FieldGroup:
        """``rows`` take their reason from the device; ``explained`` rows carry their own hover text."""
        group = FieldGroup(title)
        for label, value, field in rows:
            group.add(label, value, _reason(self.device, field), key=field)
        for label, value, hover in explained:
            group.add(label, value, hover, key=label)
        self.groups[title] = group
        return group


def _comfortable_width(column: QLayout) -> int:
    """A column's width with each group's values beside their names: two columns side by side
    only where neither then has to put its values under their names (a group can, down to its
    minimum, but one group of each shape side by side reads worse than one under the other)."""
    widest = column.minimumSize().width()
    for i in range(column.count()):
        item = column.itemAt(i)
        widget = item.widget() if item is not None else None
        if isinstance(widget, FieldGroup) and not widget.isHidden():
            widest = max(widest, widget.side_by_side_width())
    return widest
