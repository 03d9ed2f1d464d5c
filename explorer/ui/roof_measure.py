"""Measuring this machine's ceilings again on request, with progress, for every page at once.

``RoofMeasurer`` (one per window, ``measurer(context)``) runs ``explorer.bench.remeasure`` in a
worker process, driven from a worker thread (``explorer.ui.workers``; it blocks for seconds)
whose progress reaches the window as queued signals: the window never waits. One measurement at
a time, whichever page asked: two at once would disturb each other's figures. When it ends,
``AppContext.roofs_measured`` tells every page, so the Devices page and the roofline show the
same stored values.

``MeasureAgain`` is the button the Devices page (beside a device's roofs) and the roofline (above
the plot) each show: a view of the one measurer, so both show its progress whoever started it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy, QWidget

from explorer.ui.context import AppContext
from explorer.ui.workers import run_in_daemon_thread

IDLE_TEXT = "Measure again"
TIP = (
    "Measure this machine's roofs again: the clock, the best matmul and the bandwidth of every "
    "memory level (L1, L2, L3, DRAM), on every core, in a worker process (seconds; close other "
    "programs first: a measurement they disturb never replaces a quiet one)"
)


class RoofMeasurer(QObject):
    """The one measurement of this machine's ceilings that may run at a time."""

    #: (devices) a measurement started
    started = Signal(object)
    #: (device, fraction of that device, what it does now)
    progress = Signal(str, float, str)
    #: a list of ``Measured`` (empty when stopped before any device), and whether it was stopped
    finished = Signal(object, bool)

    def __init__(self, context: AppContext) -> None:
        super().__init__(context)
        self._context = context
        self._job: Any = None
        self._thread: threading.Thread | None = None
        self.finished.connect(self._ended)

    @property
    def running(self) -> bool:
        return self._job is not None

    def start(self, devices: list[str]) -> bool:
        """Measure ``devices`` now; ``False`` when one runs already or there is nothing to measure."""
        if self.running or not devices:
            return False
        from explorer.bench.remeasure import Measured, RoofMeasurement

        job = self._job = RoofMeasurement(devices)

        def failed(exc: BaseException) -> None:  # one line for the user, never a traceback
            why = f"the ceilings could not be measured: {type(exc).__name__}: {exc}"
            self.finished.emit([Measured("", None, why)], job.cancelled)

        self.started.emit(devices)
        self._thread = run_in_daemon_thread(
            lambda progress: job.run(lambda d, f, m: progress((d, f, m))),
            lambda result: self.finished.emit(result, job.cancelled),
            failed,
            on_progress=lambda step: self.progress.emit(*step),
            parent=self,
            name="measure-roofs",
        )
        return True

    def stop(self) -> None:
        if self._job is not None:
            self._job.cancel()

    def shutdown(self, timeout_s: float = 10.0) -> None:
        """Stop a measurement and wait for its thread: closing the window leaves no worker behind."""
        self.stop()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)

    def _ended(self, result: list[Any], _stopped: bool) -> None:
        self._job, self._thread = None, None
        if result:
            self._context.measured_again(result)


def measurer(context: AppContext) -> RoofMeasurer:
    """The window's one ``RoofMeasurer`` (made on first use, owned by the context)."""
    found = context.findChild(RoofMeasurer)
    return found if found is not None else RoofMeasurer(context)


class MeasureAgain(QWidget):
    """A button and, while the window's measurer runs, a bar saying which device and which part."""

    def __init__(
        self, context: AppContext, devices: Callable[[], list[str]], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._devices = devices
        self.measurer = measurer(context)
        self.button = QPushButton(IDLE_TEXT)
        self.button.setToolTip(TIP)
        self.button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(True)
        self.bar.hide()
        self.status = QLabel()
        self.status.setProperty("role", "caption")
        self.status.setWordWrap(True)
        self.status.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.button)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.status, 1)
        layout.addStretch(0)
        self.button.clicked.connect(self._clicked)
        self.measurer.started.connect(self._started)
        self.measurer.progress.connect(self._on_progress)
        self.measurer.finished.connect(self._on_done)
        if self.measurer.running:
            self._started([])

    @property
    def running(self) -> bool:
        return self.measurer.running

    def start(self) -> bool:
        return self.measurer.start(self._devices())

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self.measurer.shutdown(timeout_s)

    def _clicked(self) -> None:
        if self.measurer.running:
            self.bar.setFormat("stopping…")
            self.measurer.stop()
        else:
            self.start()

    def _started(self, devices: list[str]) -> None:
        self.button.setText("Stop")
        self.status.hide()
        self.bar.setValue(0)
        what = ", ".join(devices) if devices else "this machine"
        self.bar.setFormat(f"starting the worker to measure {what}…")
        self.bar.show()

    def _on_progress(self, device: str, fraction: float, message: str) -> None:
        self.bar.setValue(int(round(100 * fraction)))
        self.bar.setFormat(f"{device}: {message} (%p%)")

    def _on_done(self, result: list[Any], stopped: bool) -> None:
        self.bar.hide()
        self.button.setText(IDLE_TEXT)
        lines = [m.message for m in result if m.message]
        self.status.setText("stopped" if stopped and not lines else " ".join(lines))
        self.status.setToolTip(" ".join(lines))
        self.status.setVisible(bool(self.status.text()))
