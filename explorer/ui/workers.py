"""Run slow calls (device discovery, which imports torch and numba) off the GUI thread.

Discovery runs in a plain daemon thread, not in Qt's thread pool: a driver call that hangs
(``nvmlInit`` on a GPU that fell off the bus) may keep that thread for a minute, and Qt waits
for every pooled thread when the application quits. A daemon thread is never waited for, so
quitting the window is immediate whatever the driver does. Its answers reach the GUI thread
as queued signals; one that arrives after the window is gone is dropped without a word.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot


class _Relay(QObject):
    """Lives in the GUI thread; the worker emits, the slots run on the GUI thread."""

    _progress = Signal(object)
    _done = Signal(object)
    _failed = Signal(object)

    def __init__(
        self,
        on_progress: Callable[[Any], None] | None,
        on_done: Callable[[Any], None],
        on_error: Callable[[BaseException], None],
        parent: QObject | None,
    ) -> None:
        super().__init__(parent)
        self._on_progress_cb = on_progress
        self._on_done_cb = on_done
        self._on_error_cb = on_error
        queued = Qt.ConnectionType.QueuedConnection
        self._progress.connect(self._deliver_progress, queued)
        self._done.connect(self._deliver_done, queued)
        self._failed.connect(self._deliver_failed, queued)

    @Slot(object)
    def _deliver_progress(self, value: Any) -> None:
        if self._on_progress_cb is not None:
            self._on_progress_cb(value)

    @Slot(object)
    def _deliver_done(self, value: Any) -> None:
        self._on_done_cb(value)
        self.deleteLater()

    @Slot(object)
    def _deliver_failed(self, exc: Any) -> None:
        self._on_error_cb(exc)
        self.deleteLater()

    def send(self, signal: Any, value: Any) -> None:
        """Emit from the worker thread; the receiving window may already be gone."""
        try:
            signal.emit(value)
        except RuntimeError:  # "Internal C++ object already deleted": nobody left to tell
            pass


def run_in_daemon_thread(
    func: Callable[[Callable[[Any], None]], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[BaseException], None],
    *,
    on_progress: Callable[[Any], None] | None = None,
    parent: QObject | None = None,
    name: str = "background",
) -> threading.Thread:
    """Call ``func(progress)`` in a daemon thread; ``progress(x)``, the result and any exception
    reach ``on_progress``, ``on_done`` and ``on_error`` on the GUI thread. Never joined."""
    relay = _Relay(on_progress, on_done, on_error, parent)

    def run() -> None:
        try:
            result = func(lambda value: relay.send(relay._progress, value))
        except BaseException as exc:  # the GUI thread shows it; a worker must not die silently
            relay.send(relay._failed, exc)
            return
        relay.send(relay._done, result)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
