"""The Devices panel: what is in this machine, what is only a spec sheet, and what the GPUs do now.

Left, a list: the CPU and present GPUs first, then catalog GPUs under their own header, each
marked "catalog — not present" in words, colour and icon (a teacher's projector may wash out
colour, so the words carry the meaning). Right, the selected device's details. Above, a
banner when no GPU was found, with the probes' own explanation.

Remote machines the user added ("Add remote machine…", ``explorer.ui.remote_hosts``) are listed
under their host ("ON GPU-LAB") between this machine's devices and the catalog: their devices
with the same details and live readings as local ones, or, while a host connects or when it
cannot be reached, one row saying so with ssh's reason. Selecting the host shows how it is
reached and lets the user reconnect or remove it. A remote never delays the local list.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from explorer.devices.discovery import Discovery
from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.lessons.model import DevicesState, PanelState
from explorer.lessons.resolve import devices_device
from explorer.outputs import write_output
from explorer.ui import formatting as fmt
from explorer.ui.context import AppContext
from explorer.ui.device_details import DeviceDetails
from explorer.ui.live_monitor import LiveMonitor
from explorer.ui.panel import ExportFormat, Panel
from explorer.ui.remote_hosts import RemoteHost
from explorer.ui.roof_measure import measurer
from explorer.ui.roof_section import RoofSection
from explorer.ui.theme import Theme, current_theme
from explorer.ui.widgets import Banner, set_role

if TYPE_CHECKING:  # pragma: no cover
    from explorer.launch.occupancy_truth import PredictedOccupancy
    from explorer.ui.live_plot import LiveView  # (imported when a GPU is shown)

LOOKING = "Looking for devices…"
PRESENT_HEADER = "On this machine"
CATALOG_HEADER = "Catalog — not present"
#: the folded no-GPU banner's one line, beside its title
CATALOG_SUMMARY = "Catalog GPUs stand in for launches and occupancy."
CATALOG_HINT = (
    "The catalog GPUs in the list are spec sheets of real GPUs: the launch visualizer and the "
    "occupancy lessons work with any of them. Only benchmarks need a GPU in this machine."
)

_KEY_ROLE = Qt.ItemDataRole.UserRole
#: a remote row's identity: (host ident, device key), the key None for the host's own rows
_REMOTE_ROLE = Qt.ItemDataRole.UserRole + 1
ADD_REMOTE = "Add remote machine…"
#: how long a screenshot waits for remote machines to answer (or fail) before it is taken
REMOTE_SCREENSHOT_WAIT_S = 30.0


def _dot(colour: str, hollow: bool, size: int = 18) -> QIcon:
    pix = QPixmap(size, size)
    pix.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    pen = QPen(QColor(colour))
    pen.setWidth(3)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush if hollow else QBrush(QColor(colour)))
    painter.drawEllipse(3, 3, size - 6, size - 6)
    painter.end()
    return QIcon(pix)


def list_summary(device: Device) -> str:
    """The second line of a device's list entry."""
    if device.kind == "cpu":
        cores = f"{fmt.quantity(device.physical_cores)} cores, {fmt.quantity(device.logical_cores)} threads"
        return f"CPU · {cores}"
    if device.kind == "cuda":
        parts = [f"cuda:{device.index}" if device.usable else "hidden from CUDA"]
    else:
        parts = ["catalog"]
    if device.cc_string:
        parts.append(f"CC {device.cc_string}")
    if device.sm_count:
        parts.append(f"{device.sm_count} SMs")
    if device.memory_total_bytes:
        parts.append(fmt.binary_bytes(device.memory_total_bytes, 0))
    return " · ".join(parts)


class DevicesPanel(Panel):
    #: the user asked to look for devices again (the main window runs discovery)
    refresh_requested = Signal()

    EXPORT_JSON = ExportFormat("json", "JSON (devices --json --catalog)", ".json")

    def __init__(
        self,
        context: AppContext,
        parent: QWidget | None = None,
        *,
        nvml: Any = None,
        clock: Callable[[], float] = time.monotonic,
        timer: QTimer | None = None,
        session_factory: Callable[..., Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self.context = context
        self.monitor = LiveMonitor(
            nvml=nvml, clock=clock, timer=timer, session_factory=session_factory, parent=self
        )
        self.details: DeviceDetails | None = None
        self.live_view: LiveView | None = None
        self._selected_key: str | None = None
        #: the remote row shown on the right: (host ident, device key or None for the host)
        self._selected_remote: tuple[str, str | None] | None = None
        self.remotes = context.remotes
        self.remote_page: QWidget | None = None
        self.roof_section: RoofSection | None = None
        context.roofs_measured.connect(self._roofs_measured)
        context.occupancy_predicted.connect(self._occupancy_predicted)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 12, 16, 8)
        outer.setSpacing(10)

        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)  # "Asking torch and numba…" must not widen the list
        set_role(self.status_label, "muted")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Look for devices again (F5)")
        self.refresh_button.clicked.connect(self.refresh_requested.emit)
        self.add_remote_button = QPushButton(ADD_REMOTE)
        self.add_remote_button.setToolTip(
            "Use the GPUs of a lab server or a cluster over ssh (your ssh config and keys are used)"
        )
        self.add_remote_button.clicked.connect(self.open_add_remote)

        self.banner = Banner()
        self.banner.make_foldable(CATALOG_SUMMARY)  # one line: the probes' words under Details
        self.banner.hide()
        outer.addWidget(self.banner)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        set_role(self.error_label, "error")
        self.error_label.hide()
        outer.addWidget(self.error_label)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(6)
        self.device_list = QListWidget()
        self.device_list.setObjectName("deviceList")
        self.device_list.setIconSize(QSize(18, 18))
        self.device_list.setMinimumWidth(320)
        self.device_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.device_list.setWordWrap(True)
        self.device_list.currentItemChanged.connect(self._on_item_changed)
        left_layout.addWidget(self.device_list, 1)
        left_layout.addWidget(self.status_label)
        buttons = QHBoxLayout()  # one row: at large text sizes the list needs every line
        buttons.addWidget(self.add_remote_button, 1)
        buttons.addWidget(self.refresh_button)
        left_layout.addLayout(buttons)
        splitter.addWidget(left)
        self.details_scroll = QScrollArea()
        self.details_scroll.setObjectName("details")
        self.details_scroll.setWidgetResizable(True)
        self.placeholder = QLabel(LOOKING)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        set_role(self.placeholder, "muted")
        self.details_scroll.setWidget(self.placeholder)
        splitter.addWidget(self.details_scroll)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([330, 900])
        outer.addWidget(splitter, 1)
        self.splitter = splitter

        context.discovery_changed.connect(self.set_discovery)
        self.remotes.changed.connect(self._remotes_changed)
        if context.discovery is not None:
            self.set_discovery(context.discovery)
        else:
            self.set_busy(True)
        self.remotes.start()  # in the background: a slow or dead host never delays the local list

    # ----- state from the main window
    def set_busy(self, busy: bool) -> None:
        self.refresh_button.setEnabled(not busy)
        pending = self.context.discovery.pending if self.context.discovery is not None else []
        if not (busy and pending):
            self._set_status(LOOKING if busy else "")
        if busy and self.context.discovery is None:
            self.device_list.clear()
            item = QListWidgetItem(LOOKING)
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.device_list.addItem(item)

    def _set_status(self, text: str) -> None:
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))  # an empty line would cost the list a row

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.show()

    def set_discovery(self, discovery: Discovery) -> None:
        """Show what discovery found; called again as probes that were still running report."""
        self.error_label.hide()
        self._set_status(
            f"Asking {' and '.join(discovery.pending)} for CUDA details…" if discovery.pending else ""
        )
        why = discovery.why_no_gpu()
        if why:
            title = "Why no GPU can be used here" if discovery.hidden_gpus else "Why no GPU is listed"
            self.banner.set_text(title, f"{why}\n\n{CATALOG_HINT}")
            self.banner.show()
        else:
            self.banner.hide()
        self.monitor.set_devices(discovery.installed_gpus)
        self._fill_list(discovery)

    # ----- the list
    def _fill_list(self, discovery: Discovery) -> None:
        theme = current_theme()
        keep = self._selected_key
        self.device_list.blockSignals(True)
        self.device_list.clear()
        present = [d for d in discovery.devices if d.present]
        catalog = discovery.catalog
        self._add_header(PRESENT_HEADER)
        for device in present:
            self._add_device(device, theme)
        for host in self.remotes.hosts:
            self._add_remote(host, theme)
        if catalog:
            self._add_header(CATALOG_HEADER)
            for device in catalog:
                self._add_device(device, theme)
        self.device_list.blockSignals(False)
        remote = self._selected_remote
        if remote is not None and self._remote_row(*remote) is not None:
            self.select_remote(*remote)
            return
        keys = [d.key for d in discovery.devices]
        default = (
            discovery.present_gpus[0].key if discovery.present_gpus else (present[0].key if present else None)
        )
        self.select_device(keep if keep in keys else default or (keys[0] if keys else None))

    def _add_header(self, text: str, remote: tuple[str, None] | None = None) -> None:
        item = QListWidgetItem(text.upper())
        if remote is None:
            item.setFlags(Qt.ItemFlag.NoItemFlags)
        else:  # a remote host's header opens its page
            item.setData(_REMOTE_ROLE, remote)
            item.setToolTip(f"{text}: select to see how it is reached, reconnect or remove it")
        font = QFont(self.device_list.font())
        font.setBold(True)
        item.setFont(font)
        item.setData(Qt.ItemDataRole.AccessibleTextRole, text)
        item.setForeground(QBrush(QColor(current_theme().muted)))
        self.device_list.addItem(item)

    def _add_device(self, device: Device, theme: Theme) -> None:
        item = QListWidgetItem(f"{device.name}\n{list_summary(device)}")
        item.setData(_KEY_ROLE, device.key)
        if device.kind == "catalog":
            item.setIcon(_dot(theme.catalog, hollow=True))
            item.setForeground(QBrush(QColor(theme.catalog)))
            item.setToolTip(f"{device.name}: a catalog spec sheet, not present in this machine")
        else:
            item.setIcon(_dot(theme.present, hollow=False))
            item.setToolTip(f"{device.name}: present in this machine")
        self.device_list.addItem(item)

    def _add_remote(self, host: RemoteHost, theme: Theme) -> None:
        """The host's header (selectable: it opens the host's page), then its devices or one row
        saying why there are none yet."""
        self._add_header(f"On {host.remote.host}", (host.ident, None))
        if host.status == "ready":
            for device in host.devices:
                item = QListWidgetItem(f"{device.name}\n{list_summary(device)}")
                item.setData(_REMOTE_ROLE, (host.ident, device.key))
                item.setIcon(_dot(theme.present, hollow=False))
                item.setToolTip(f"{device.name}: present on {host.remote.host}")
                self.device_list.addItem(item)
            why = host.found.why_no_gpu if host.found is not None else None
            if why:
                self._add_host_row(host, f"No GPU there: {_first_sentence(why)}", theme.muted)
            return
        if host.status == "connecting":
            said = (
                f"connecting… {host.job.short}"
                if host.job is not None
                else f"connecting… ({host.remote.label})"
            )
            self._add_host_row(host, said, theme.muted)
        else:
            self._add_host_row(host, f"✕ cannot be reached: {host.error}", theme.error)

    def _add_host_row(self, host: RemoteHost, text: str, colour: str) -> None:
        item = QListWidgetItem(text)
        item.setData(_REMOTE_ROLE, (host.ident, None))
        item.setForeground(QBrush(QColor(colour)))
        item.setToolTip(text)
        self.device_list.addItem(item)

    def _remotes_changed(self) -> None:
        if self.context.discovery is not None:
            self._fill_list(self.context.discovery)

    def remote_rows(self) -> list[tuple[str, str | None, str]]:
        """(host ident, device key or None, text) of each remote row, in list order."""
        rows = []
        for row in range(self.device_list.count()):
            item = self.device_list.item(row)
            data = item.data(_REMOTE_ROLE)
            if data:
                rows.append((data[0], data[1], item.text()))
        return rows

    def _remote_row(self, ident: str, key: str | None) -> QListWidgetItem | None:
        for row in range(self.device_list.count()):
            item = self.device_list.item(row)
            if item.data(_REMOTE_ROLE) == (ident, key):
                return item
        return None

    def select_remote(self, ident: str, key: str | None = None) -> None:
        """Show a remote device's details, or (``key`` None) the host's own page."""
        item = self._remote_row(ident, key)
        if item is None:
            return
        self.device_list.blockSignals(True)
        self.device_list.setCurrentItem(item)
        self.device_list.blockSignals(False)
        self._show_remote(ident, key)

    def open_add_remote(self) -> bool:
        """The Add remote machine dialog; True when a remote was added (it then connects and is selected)."""
        from explorer.ui.remote_dialog import AddRemoteDialog

        dialog = AddRemoteDialog(self.remotes, self)
        added = dialog.exec() == AddRemoteDialog.DialogCode.Accepted and dialog.added is not None
        if added and dialog.added is not None:
            self.select_remote(dialog.added.ident)
        dialog.deleteLater()
        return added

    def remove_remote(self, host: RemoteHost) -> None:
        try:
            self.remotes.remove(host)
        except OSError as exc:
            self.show_error(
                f"{host.remote.host} could not be removed from the list in {exc.filename or 'the data folder'}: "
                f"{exc.strerror or exc}"
            )
            return
        self.context.say(f"{host.remote.label} removed from the remote machines")

    def device_keys(self) -> list[str]:
        """Keys of the devices listed, in list order (headers skipped)."""
        keys = []
        for row in range(self.device_list.count()):
            key = self.device_list.item(row).data(_KEY_ROLE)
            if key:
                keys.append(key)
        return keys

    def list_texts(self) -> list[str]:
        return [self.device_list.item(row).text() for row in range(self.device_list.count())]

    def select_device(self, key: str | None) -> None:
        for row in range(self.device_list.count()):
            item = self.device_list.item(row)
            if key is not None and item.data(_KEY_ROLE) == key:
                self.device_list.blockSignals(True)
                self.device_list.setCurrentItem(item)
                self.device_list.blockSignals(False)
                self._show_device(key)
                return
        self.device_list.blockSignals(True)
        self.device_list.setCurrentRow(-1)
        self.device_list.blockSignals(False)
        self._show_device(None)

    def _on_item_changed(self, current: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if current is None:
            return
        remote = current.data(_REMOTE_ROLE)
        if remote:
            self._show_remote(*remote)
            return
        key = current.data(_KEY_ROLE)
        if key:
            self._show_device(key)

    # ----- the details
    def _device(self, key: str | None) -> Device | None:
        if key is None or self.context.discovery is None:
            return None
        return next((d for d in self.context.discovery.devices if d.key == key), None)

    def _show_device(self, key: str | None) -> None:
        device = self._device(key)
        self._selected_key = key if device else None
        self._selected_remote = None
        self.remote_page = None
        if device is None:
            self.details = None
            self.live_view = None
            self.placeholder = QLabel(LOOKING if self.context.discovery is None else "Select a device.")
            self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            set_role(self.placeholder, "muted")
            self.details_scroll.setWidget(self.placeholder)
            return
        live = None
        if device.kind == "cuda":
            from explorer.ui.live_plot import LiveView  # pyqtgraph loads only when a GPU is shown

            live = LiveView(self.monitor, device, prediction=self.context.predictions.get(device.key))
        body = QWidget()
        body.setObjectName("detailsBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 4, 12, 12)
        self.roof_section = RoofSection(self.context, device)  # its stored roofs, "Measure again"
        self.details = DeviceDetails(device, live, roof_widget=self.roof_section)
        self.live_view = live
        layout.addWidget(self.details)
        self.details_scroll.setWidget(body)  # deletes the previous details

    def _occupancy_predicted(self, prediction: PredictedOccupancy) -> None:
        """A launch ran for real on a GPU: its live view (when shown) sets its prediction beside GPM's."""
        if self.live_view is not None and self._selected_remote is None:
            self.live_view.set_prediction(prediction)

    def _roofs_measured(self, result: list[Any]) -> None:
        """This machine's ceilings were measured again: the CPU's record carries the new measured
        figures, and the device shown is shown anew (on the next turn of the event loop: the button
        that measured is inside it)."""
        from explorer.devices.roofs import apply_measured

        for measured in result:
            device = self._device(measured.device)
            if device is not None and device.kind == "cpu" and measured.roof is not None:
                apply_measured(device, measured.roof)
        if self._selected_key is not None and self._selected_remote is None:
            QTimer.singleShot(0, lambda key=self._selected_key: self._show_device(key))

    def _show_remote(self, ident: str, key: str | None) -> None:
        from explorer.ui.remote_page import RemoteHostPage

        host = self.remotes.host(ident)
        device = host.device(key) if host is not None and key is not None else None
        if host is None or (key is not None and device is None):
            return
        self._selected_remote = (ident, key)
        self._selected_key = None
        self.details = None
        self.live_view = None
        self.remote_page = None
        body = QWidget()
        body.setObjectName("detailsBody")
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 4, 12, 12)
        if device is None:
            page = RemoteHostPage(host)
            page.remove_requested.connect(self.remove_remote)
            self.remote_page = page
            layout.addWidget(page)
        else:
            live = None
            if device.kind == "cuda":
                from explorer.ui.live_plot import LiveView

                live = LiveView(host.live, device)
            self.details = DeviceDetails(device, live, host=host.remote.host)
            self.live_view = live
            layout.addWidget(self.details)
        self.details_scroll.setWidget(body)

    @property
    def selected_remote(self) -> tuple[str, str | None] | None:
        return self._selected_remote

    @property
    def selected_key(self) -> str | None:
        return self._selected_key

    # ----- lesson steps
    def lesson_state(self) -> DevicesState:
        return DevicesState(device=self._selected_key or "cpu")

    def show_lesson_state(self, state: PanelState) -> str:
        if not isinstance(state, DevicesState):
            return ""
        resolved = devices_device(state, self.context.devices)
        if resolved.problem:
            raise UserError(resolved.problem)
        self.select_device(resolved.key)
        return ""

    # ----- the main window's hooks
    def tick(self) -> None:
        """Take one live reading of every present GPU now (the timer calls this each second)."""
        self.monitor.tick()

    def apply_theme(self, theme: Theme) -> None:
        if self.context.discovery is not None:
            self._fill_list(self.context.discovery)

    def apply_text_scale(self, percent: int) -> None:
        # the list's section headers carry a bold font of their own, made at the old size
        if self.context.discovery is not None:
            self._fill_list(self.context.discovery)
        if self.live_view is not None:  # its graphs' text is the figures' (theme.figure_px)
            self.live_view.apply_text_scale()

    def export_formats(self) -> tuple[ExportFormat, ...]:
        return (self.EXPORT_JSON,)

    def export(self, path: Path, fmt: ExportFormat = EXPORT_JSON) -> Path:
        """Write what discovery found (the same JSON as ``device-explorer devices --json --catalog``)
        and, under ``remotes``, each remote machine as ``devices --json --host`` lists it (its
        devices marked with their host, or why it cannot be reached)."""
        from explorer.remote.session import remote_to_dict

        if self.context.discovery is None:
            raise UserError("nothing to export yet: devices are still being discovered")
        data = self.context.discovery.to_dict()
        data["remotes"] = [
            host.found.to_dict()
            if host.found is not None
            else remote_to_dict(
                host.remote,
                None,
                error=host.error or ("still connecting" if host.status == "connecting" else ""),
            )
            for host in self.remotes.hosts
        ]
        text = json.dumps(data, indent=2) + "\n"
        return write_output(path, text.encode("utf-8"), "the device list")

    def prepare_screenshot(self, wait_s: float = REMOTE_SCREENSHOT_WAIT_S) -> None:
        """Remote machines as a user sees them once each has answered or failed (at most
        ``wait_s``), the first remote GPU (else the first remote's page) shown on the right."""
        from PySide6.QtCore import QEventLoop

        hosts = self.remotes.hosts
        if any(h.status == "connecting" for h in hosts):
            loop = QEventLoop()

            def check() -> None:
                if not any(h.status == "connecting" for h in self.remotes.hosts):
                    loop.quit()

            self.remotes.changed.connect(check)
            QTimer.singleShot(int(wait_s * 1000), loop.quit)
            loop.exec()
            self.remotes.changed.disconnect(check)
        gpu = next(((h, g) for h in self.remotes.hosts for g in h.gpus), None)
        if gpu is not None:
            self.select_remote(gpu[0].ident, gpu[1].key)
        elif self.remotes.hosts:
            self.select_remote(self.remotes.hosts[0].ident)
        self.device_list.scrollToTop()

    def shutdown(self) -> None:
        self.monitor.stop()
        self.remotes.shutdown()
        measurer(self.context).shutdown()  # a "Measure again" under way: its worker goes too


def _first_sentence(text: str) -> str:
    head, dot, _rest = text.partition(". ")
    return head + ("." if dot else "")
