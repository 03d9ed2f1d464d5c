"""Measuring a machine's ceilings again on request (the Devices page's and the roofline's "Measure
again" button), in a worker process, with progress.

The work is the agent method ``roofs.measure`` (``explorer.bench.peaks.ensure_measured``, forced)
in a fresh local agent, one device after another: the window never measures in its own process,
a crash costs one line, and Stop kills the worker's whole process group. What comes back is each
device's roof as now stored (a busy measurement does not replace a quiet one, and the line says
so). A quiet measurement more than 10% from the quiet one stored, at any level or the FP32
ceiling, is not stored either: the line says the machine is not steady and the earlier one is
kept (``explorer.bench.peaks.unsteady_against_stored``). Qt-free: ``explorer.ui.roof_measure``
carries it to the window.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from explorer.agent.child import AgentCancelled, AgentFailed, AgentProcess, local_agent
from explorer.agent.protocol import AgentError
from explorer.roofs.model import Roof

#: a measurement of one device takes seconds (at most 15 on a 2-core laptop); a hung one is stopped
MEASURE_TIMEOUT_S = 180.0
LABEL = "the ceilings' worker"


@dataclass(frozen=True)
class Measured:
    """One device measured: its roof as stored now, and one line saying what happened."""

    device: str
    roof: Roof | None
    message: str


Progress = Callable[[str, float, str], None]  # (device, fraction of that device, what it does now)


class RoofMeasurement:
    """Measure ``devices`` of this machine again, one after another, in a worker process."""

    def __init__(self, devices: Sequence[str], *, low_priority: bool = False) -> None:
        self.devices = list(devices)
        self.low_priority = low_priority
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._worker: AgentProcess | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()
        with self._lock:
            worker = self._worker
        if worker is not None:
            worker.cancel()

    def run(self, progress: Progress | None = None) -> list[Measured]:
        """Measure each device; never raises: a device that could not be measured gets its line."""
        out: list[Measured] = []
        worker = local_agent(label=LABEL)
        with self._lock:
            self._worker = worker
        try:
            if self.cancelled:
                return out
            worker.start()
            if self.low_priority:
                worker.request("bench.prepare", {"preload": [], "low_priority": True}, timeout_s=60)
            for device in self.devices:
                if self.cancelled:
                    break
                out.append(self._one(worker, device, progress))
        except AgentCancelled:
            pass
        except AgentError as exc:  # the worker died or hung: the device it was on says so
            device = self.devices[min(len(out), len(self.devices) - 1)] if self.devices else ""
            out.append(Measured(device, None, f"the ceilings of {device} could not be measured: {exc}"))
        finally:
            with self._lock:
                self._worker = None
            worker.close(grace_s=0 if self.cancelled else 1.0)
        return out

    def _one(self, worker: AgentProcess, device: str, progress: Progress | None) -> Measured:
        def event(data: dict) -> None:
            fraction, message = data.get("progress"), data.get("message")
            if progress is not None and isinstance(fraction, (int, float)) and isinstance(message, str):
                progress(device, float(fraction), message)

        try:
            answer = worker.request(
                "roofs.measure", {"device": device}, timeout_s=MEASURE_TIMEOUT_S, on_event=event
            )
        except AgentFailed as exc:  # the method failed; the worker goes on serving
            return Measured(device, None, f"the ceilings of {device} could not be measured: {exc}")
        try:
            roof = Roof.from_dict(answer.get("roof"))
        except ValueError as exc:
            return Measured(device, None, f"the worker sent no roof for {device}: {exc}")
        message = answer.get("message")
        return Measured(device, roof, message[:300] if isinstance(message, str) else "")
