"""Carry a benchmark run's event stream from a background thread to the UI thread.

``BenchRun.events()`` blocks until the worker *process* finishes each point, so it is iterated in
a superqt generator worker (napari's pattern); each point or progress record reaches the panel as
a queued signal, and the UI thread never waits on the benchmark.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QObject, Signal
from superqt.utils import thread_worker


class RunStream(QObject):
    #: one ``BenchPoint`` (measured or error row), on the UI thread
    point = Signal(object)
    #: one ``Progress`` record
    progress = Signal(object)
    #: the run could not go on; one line for the user (never a traceback)
    failed = Signal(str)
    #: the stream ended: finished, cancelled or failed
    ended = Signal()

    def __init__(self, plan: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._plan = plan
        self._run: Any = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._done = threading.Event()
        self._worker = None

    def start(self) -> None:
        self._worker = _iterate(self)
        self._worker.yielded.connect(self._deliver)
        self._worker.finished.connect(self.ended)
        self._worker.errored.connect(lambda exc: self.failed.emit(_one_line(exc)))
        self._worker.start()

    def cancel(self) -> None:
        """Stop the run now: the engine terminates its worker process and ``events()`` ends."""
        with self._lock:
            self._cancelled = True
            run = self._run
        if run is not None:
            run.cancel()

    def wait(self, timeout_s: float = 10.0) -> bool:
        """Block until the background thread has left ``events()`` (used on shutdown only)."""
        if self._worker is None:
            return True
        return self._done.wait(timeout_s)

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def _deliver(self, event: Any) -> None:
        if hasattr(event, "total") and hasattr(event, "done"):
            self.progress.emit(event)
        else:
            self.point.emit(event)

    # runs on the background thread
    def _open(self) -> Any:
        from explorer.bench.runner import BenchRun

        run = BenchRun(self._plan)
        with self._lock:
            self._run = run
            cancelled = self._cancelled
        if cancelled:
            run.cancel()
        return run


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    message = text[0] if text else type(exc).__name__
    return message if type(exc).__name__ == "UserError" else f"{type(exc).__name__}: {message}"


@thread_worker(ignore_errors=True)
def _iterate(stream: RunStream):
    try:
        if stream.cancelled:
            return
        run = stream._open()
        yield from run.events()
    finally:
        stream._done.set()
