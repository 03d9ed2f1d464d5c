"""Sample the present GPUs' sensors about once a second and keep a short history for the plots.

The timer, the clock and the NVML module are injected so tests drive ``tick()`` by hand with
a fake clock and a stand-in NVML: no sleeps, no real driver. Readings come from the core's
``NvmlSession``; this object only schedules them and remembers the last minute.

A GPU can fall off the bus while the window is open, and then an NVML call blocks for a minute.
Each tick's reads therefore run under a deadline (``LIVE_DEADLINE_S``): the window waits for a
hung driver at most that long once; while the call stays stuck, later ticks are answered at once
with a reading that says so, and nothing piles up in the driver.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from explorer.devices.deadline import ProbeTimedOut, call_with_deadline
from explorer.devices.live import LiveReading
from explorer.devices.model import CudaGpu

HISTORY_SAMPLES = 60
INTERVAL_MS = 1000
#: seconds one tick may wait for NVML (the window's GUI thread waits with it)
LIVE_DEADLINE_S = 0.5
#: seconds starting NVML and shutting it down may take (nvmlInit can take a while without the persistence daemon)
LIVE_INIT_DEADLINE_S = 1.0


class LiveHistory(QObject):
    """The last minute of readings per GPU, as the Live group draws them. Where they come from is
    the subclass's business: this machine's NVML (``LiveMonitor``) or a remote machine's agent
    (``explorer.ui.remote_hosts.RemoteLive``)."""

    #: emitted after each round of readings
    updated = Signal()
    #: emitted with a plain sentence when live readings cannot be taken at all
    unavailable = Signal(str)
    #: emitted with a plain sentence when readings are not taken on purpose (not a failure)
    noted = Signal(str)

    def __init__(self, history_samples: int = HISTORY_SAMPLES, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._history: dict[str, deque[LiveReading]] = {}
        self._history_samples = history_samples
        self.error: str | None = None
        #: why no more readings are taken, when that is by design (shown as a note, not an error)
        self.note: str | None = None

    def _record(self, key: str, reading: LiveReading) -> None:
        self._history.setdefault(key, deque(maxlen=self._history_samples)).append(reading)

    def _keep_only(self, keys: set[str]) -> None:
        self._history = {k: v for k, v in self._history.items() if k in keys}

    def history(self, key: str) -> list[LiveReading]:
        return list(self._history.get(key, ()))

    def latest(self, key: str) -> LiveReading | None:
        samples = self._history.get(key)
        return samples[-1] if samples else None


class LiveMonitor(LiveHistory):
    """This machine's GPUs, read through NVML once a second."""

    def __init__(
        self,
        *,
        nvml: Any = None,
        clock: Callable[[], float] = time.monotonic,
        timer: QTimer | None = None,
        session_factory: Callable[..., Any] | None = None,
        history_samples: int = HISTORY_SAMPLES,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(history_samples, parent)
        self._nvml = nvml
        self._clock = clock
        self._session_factory = session_factory
        self._session: Any = None
        self._devices: list[CudaGpu] = []
        self.timer = timer if timer is not None else QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.tick)

    # ----- lifecycle
    def set_devices(self, devices: list[CudaGpu]) -> None:
        """Watch these GPUs (those with an NVML index); starts or stops the timer accordingly."""
        watched = [d for d in devices if d.kind == "cuda" and d.nvml_index is not None]
        keys = {d.key for d in watched}
        self._keep_only(keys)
        self._devices = watched
        if not watched:
            self.stop()
            return
        if self._open_session():
            self.tick()
            self.timer.start()

    def _open_session(self) -> bool:
        if self._session is not None:
            return True
        try:
            if self._session_factory is not None:
                session = self._session_factory(nvml=self._nvml, clock=self._clock)
            else:
                from explorer.devices.nvml import NvmlSession

                session = NvmlSession(nvml=self._nvml, clock=self._clock)
            call_with_deadline("nvml", session.init, LIVE_INIT_DEADLINE_S, key=("init", id(self._nvml)))
        except Exception as exc:  # NvmlUnavailable and ProbeTimedOut carry a plain sentence
            self.error = f"Live readings are unavailable: {exc}"
            self.unavailable.emit(self.error)
            return False
        self._session = session
        self.error = None
        return True

    def stop(self) -> None:
        self.timer.stop()
        session, self._session = self._session, None
        if session is not None:
            try:  # a driver stuck in a live read may block its shutdown too: never wait long for it
                call_with_deadline(
                    "nvml", session.shutdown, LIVE_INIT_DEADLINE_S, key=("shutdown", id(session))
                )
            except ProbeTimedOut:
                pass

    @property
    def running(self) -> bool:
        return self.timer.isActive()

    # ----- sampling
    def tick(self) -> None:
        """Read every watched GPU once; a GPU whose read fails gets a reading that says why."""
        session = self._session
        if session is None:
            return
        devices = list(self._devices)

        def read_all() -> list[LiveReading]:
            readings = []
            for device in devices:
                try:
                    readings.append(session.read_live(device.nvml_index))
                except Exception as exc:
                    readings.append(LiveReading.failed(self._clock(), f"NVML could not read this GPU: {exc}"))
            return readings

        try:
            readings = call_with_deadline("nvml", read_all, LIVE_DEADLINE_S, key=("live", id(session)))
        except ProbeTimedOut as exc:
            readings = [LiveReading.failed(self._clock(), str(exc)) for _ in devices]
        for device, reading in zip(devices, readings, strict=True):
            self._record(device.key, reading)
        self.updated.emit()
