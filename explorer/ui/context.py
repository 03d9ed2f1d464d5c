"""State every panel shares: the devices found, and places to say things (status bar, notices).

Panels subscribe to its signals (napari's model/view split): the main window owns one
``AppContext`` and hands it to each panel's constructor as ``Panel(context, parent)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from explorer.devices.model import Device, Discovery, Gpu
from explorer.devices.roofs import RoofBook

if TYPE_CHECKING:
    from explorer.launch.occupancy_truth import PredictedOccupancy
    from explorer.roofs.model import Roof
    from explorer.ui.remote_hosts import RemoteHosts


class AppContext(QObject):
    #: emitted with the new ``Discovery`` whenever devices are (re)discovered
    discovery_changed = Signal(object)
    #: a short message for the status bar
    status_message = Signal(str)
    #: a sentence the user must read once, e.g. that a damaged file was moved aside (the window
    #: shows it in a banner until dismissed)
    notice_added = Signal(str)
    #: this machine's ceilings were measured again (a list of ``explorer.bench.remeasure.Measured``):
    #: the Devices page and the roofline show the stored roofs anew
    roofs_measured = Signal(object)
    #: a launch was run for real on this machine's GPU: its ``PredictedOccupancy``
    #: (``explorer.launch.occupancy_truth``), which the Devices page's live view sets beside GPM's
    occupancy_predicted = Signal(object)

    def __init__(self, discovery: Discovery | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.discovery: Discovery | None = discovery
        #: every notice so far, so a window that connects later still shows them
        self.notices: list[str] = []
        self._remotes: RemoteHosts | None = None
        #: this machine's roof per device, built once from its record and the stored ceilings and
        #: shown by every page (the Devices page's ceilings, the roofline of a run that carries
        #: none): rebuilt only when the devices are found anew, replaced when measured again
        self.roofs = RoofBook()
        self.roofs_measured.connect(self._measured)
        #: the latest predicted occupancy run for real, per device key (a live view opened later shows it)
        self.predictions: dict[str, PredictedOccupancy] = {}

    def predict_occupancy(self, prediction: PredictedOccupancy) -> None:
        """Keep ``prediction`` for its GPU and tell the live views."""
        self.predictions[prediction.device_key] = prediction
        self.occupancy_predicted.emit(prediction)

    def add_notice(self, text: str) -> None:
        """Tell the user something they must not miss; empty text is ignored."""
        if text:
            self.notices.append(text)
            self.notice_added.emit(text)

    @property
    def remotes(self) -> RemoteHosts:
        """The remembered remote machines (read on first use; connecting is ``remotes.start()``)."""
        if self._remotes is None:
            from explorer.ui.remote_hosts import RemoteHosts

            self._remotes = RemoteHosts(parent=self)
            self.add_notice(self._remotes.notice)
        return self._remotes

    def set_discovery(self, discovery: Discovery) -> None:
        self.discovery = discovery
        self.roofs.clear()  # new records: each roof is built again from them when next shown
        self.discovery_changed.emit(discovery)

    def roof_of(self, device: Device) -> Roof:
        """``device``'s roof from the book (built on first ask); what building it must tell the
        user (a damaged store moved aside) is said once, as a notice."""
        roof = self.roofs.roof(device)
        self.add_notice(self.roofs.take_notice())
        return roof

    def _measured(self, result: list[Any]) -> None:
        """Ceilings measured again: each device's new roof stands from now on (connected first,
        so every page that hears ``roofs_measured`` after this finds it in the book)."""
        for measured in result:
            if measured.roof is not None:
                self.roofs.replace(measured.roof)

    @property
    def devices(self) -> list[Device]:
        return list(self.discovery.devices) if self.discovery else []

    @property
    def gpus(self) -> list[Gpu]:
        """GPUs CUDA can use here first, then catalog GPUs: what the launch visualizer can choose from.

        GPUs hidden by ``CUDA_VISIBLE_DEVICES`` are left out: no CUDA program here can launch on them.
        """
        usable: list[Gpu] = [d for d in self.devices if d.kind == "cuda" and d.usable]
        return usable + [d for d in self.devices if d.kind == "catalog"]
