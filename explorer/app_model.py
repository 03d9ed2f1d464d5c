"""State every page shares, Qt-free: the devices found, their roofs, and what the user is told.

``AppModel`` is the window's model as ``LaunchSession`` is the visualizer's: it owns the app-wide
state and emits an ``explorer.events.Event`` when it changes; the window's Qt adapter
(``explorer.ui.context.AppContext``) turns each event into the signal the pages connect to.

What it owns:

- the **discovery**: the devices found here (``Discovery``), set anew on every probe;
- the **roofs**: this machine's roof per device, built once from its record and the stored
  ceilings (``RoofBook``), rebuilt when the devices are found anew, replaced when the ceilings are
  measured again (``measured``: what the last measurement said, device by device);
- the **notices**: sentences the user must read once (a damaged file moved aside), in order;
- the **status**: the last short message for the status bar;
- the **predictions**: per GPU, the ``PredictedOccupancy`` of the visualizer's launch last run for
  real on it, which the Devices page's live view sets beside GPM's measured occupancy.

Events (``model.events``; callbacks take no argument): ``discovery`` (devices found anew),
``roofs`` (ceilings measured again: the book already holds the new roofs when it is emitted),
``notice`` (a notice was added: the last of ``notices``) and ``status`` (a status message was
said; a message is an occurrence, so saying the same words again emits again) and ``occupancy``
(a launch was run for real: the last one is ``last_prediction``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from explorer.devices.discovery import Discovery
from explorer.devices.model import Device, Gpu
from explorer.devices.roofs import RoofBook
from explorer.errors import UserError
from explorer.events import Event

if TYPE_CHECKING:  # pragma: no cover
    from explorer.bench.remeasure import Measured
    from explorer.launch.occupancy_truth import PredictedOccupancy
    from explorer.roofs.model import Roof


class AppEvents:
    """The app model's events; see the module's docstring for when each is emitted."""

    def __init__(self) -> None:
        self.discovery = Event("discovery")
        self.roofs = Event("roofs")
        self.notice = Event("notice")
        self.status = Event("status")
        self.occupancy = Event("occupancy")


class AppModel:
    """The devices found, their roofs, the notices and the status line (no Qt)."""

    def __init__(self, discovery: Discovery | None = None) -> None:
        self.events = AppEvents()
        self.discovery: Discovery | None = discovery
        #: every notice so far, so a window that connects later still shows them
        self.notices: list[str] = []
        #: the last status message said ("" before any)
        self.status = ""
        #: this machine's roof per device (built on first ask, see ``roof_of``)
        self.roofs = RoofBook()
        #: what the last measurement of the ceilings said, device by device
        self.measured: tuple[Measured, ...] = ()
        #: the predicted occupancy last run for real, per GPU key (a live view opened later shows it)
        self.predictions: dict[str, PredictedOccupancy] = {}
        self.last_prediction: PredictedOccupancy | None = None

    # --- state read by the views ------------------------------------------------------------
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

    def roof_of(self, device: Device) -> Roof:
        """``device``'s roof from the book (built on first ask); what building it must tell the
        user (a damaged store moved aside) is said once, as a notice."""
        roof = self.roofs.roof(device)
        self.add_notice(self.roofs.take_notice())
        return roof

    # --- setters --------------------------------------------------------------------------
    def set_discovery(self, discovery: Discovery) -> None:
        """The devices were found anew: each roof is built again from the new records."""
        if not isinstance(discovery, Discovery):
            raise UserError(f"devices are set from a Discovery, not {type(discovery).__name__}")
        self.discovery = discovery
        self.roofs.clear()
        self.events.discovery.emit()

    def add_notice(self, text: str) -> None:
        """Tell the user something they must not miss; empty text is ignored."""
        if not isinstance(text, str):
            raise UserError(f"a notice is a sentence, not {type(text).__name__}")
        if text:
            self.notices.append(text)
            self.events.notice.emit()

    def say(self, text: str) -> None:
        """A short message for the status bar; empty text is ignored, a repeat is said again."""
        if not isinstance(text, str):
            raise UserError(f"a status message is a sentence, not {type(text).__name__}")
        if text:
            self.status = text
            self.events.status.emit()

    def predict_occupancy(self, prediction: PredictedOccupancy) -> None:
        """A launch was run for real on a GPU here: keep its predicted occupancy for that GPU."""
        self.predictions[prediction.device_key] = prediction
        self.last_prediction = prediction
        self.events.occupancy.emit()

    def measured_again(self, result: Sequence[Measured]) -> None:
        """This machine's ceilings were measured again: each device's new roof stands from now
        on, in the book before any page hears ``roofs``. An empty result changes nothing."""
        result = tuple(result)
        if not result:
            return
        for measured in result:
            if measured.roof is not None:
                self.roofs.replace(measured.roof)
        self.measured = result
        self.events.roofs.emit()
