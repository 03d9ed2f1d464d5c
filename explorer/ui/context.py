"""The window's Qt adapter of the app-wide model: the devices found, their roofs, notices, status.

The state lives in ``explorer.app_model.AppModel`` (Qt-free, tested without Qt); this adapter
turns each of its events into a Qt signal carrying the new value, for the pages that connect to
signals, and holds the one thing the model cannot: the remembered remote machines, whose
connections are Qt objects. The main window owns one ``AppContext`` and hands it to each panel's
constructor as ``Panel(context, parent)``; a panel changes app-wide state through its methods
(``set_discovery``, ``add_notice``, ``say``, ``measured_again``), never by emitting a signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from explorer.app_model import AppModel
from explorer.devices.discovery import Discovery
from explorer.devices.model import Device, Gpu
from explorer.devices.roofs import RoofBook

if TYPE_CHECKING:
    from explorer.bench.remeasure import Measured
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

    def __init__(
        self, discovery: Discovery | None = None, parent: QObject | None = None, model: AppModel | None = None
    ) -> None:
        super().__init__(parent)
        self.model = model if model is not None else AppModel(discovery)
        self._remotes: RemoteHosts | None = None
        events = self.model.events
        events.discovery.connect(self._discovery_changed)
        events.status.connect(self._status_said)
        events.notice.connect(self._notice_added)
        events.roofs.connect(self._roofs_measured)
        events.occupancy.connect(self._occupancy_predicted)

    # --- the model's state, read through ----------------------------------------------------
    @property
    def discovery(self) -> Discovery | None:
        return self.model.discovery

    @property
    def notices(self) -> list[str]:
        """Every notice so far, so a window that connects later still shows them."""
        return self.model.notices

    @property
    def roofs(self) -> RoofBook:
        """This machine's roof per device (``AppModel.roofs``)."""
        return self.model.roofs

    @property
    def devices(self) -> list[Device]:
        return self.model.devices

    @property
    def gpus(self) -> list[Gpu]:
        """GPUs CUDA can use here first, then catalog GPUs (``AppModel.gpus``)."""
        return self.model.gpus

    def roof_of(self, device: Device) -> Roof:
        return self.model.roof_of(device)

    @property
    def predictions(self) -> dict[str, PredictedOccupancy]:
        """The predicted occupancy last run for real, per GPU key (``AppModel.predictions``)."""
        return self.model.predictions

    # --- changes, made in the model -----------------------------------------------------------
    def set_discovery(self, discovery: Discovery) -> None:
        self.model.set_discovery(discovery)

    def add_notice(self, text: str) -> None:
        """Tell the user something they must not miss; empty text is ignored."""
        self.model.add_notice(text)

    def say(self, text: str) -> None:
        """A short message for the status bar; empty text is ignored."""
        self.model.say(text)

    def measured_again(self, result: Sequence[Measured]) -> None:
        """The ceilings were measured again: the book first, then every page hears it."""
        self.model.measured_again(result)

    def predict_occupancy(self, prediction: PredictedOccupancy) -> None:
        """A launch ran for real on a GPU here: the model keeps it, the live views hear it."""
        self.model.predict_occupancy(prediction)

    @property
    def remotes(self) -> RemoteHosts:
        """The remembered remote machines (read on first use; connecting is ``remotes.start()``)."""
        if self._remotes is None:
            from explorer.ui.remote_hosts import RemoteHosts

            self._remotes = RemoteHosts(parent=self)
            self.add_notice(self._remotes.notice)
        return self._remotes

    # --- the model's events as signals ----------------------------------------------------------
    def _discovery_changed(self) -> None:
        self.discovery_changed.emit(self.model.discovery)

    def _status_said(self) -> None:
        self.status_message.emit(self.model.status)

    def _notice_added(self) -> None:
        self.notice_added.emit(self.model.notices[-1])

    def _roofs_measured(self) -> None:
        self.roofs_measured.emit(list(self.model.measured))

    def _occupancy_predicted(self) -> None:
        self.occupancy_predicted.emit(self.model.last_prediction)
