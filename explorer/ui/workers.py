"""The views' one way to run work off the GUI thread: ``run_in_daemon_thread``.

Device discovery, the real run, the measured runs, the ceilings' measurement, a remote
machine's agent and a benchmark's event stream all start here. The work runs in a plain
daemon thread, not in Qt's thread pool (superqt's workers are pooled): a driver call that
hangs (``nvmlInit`` on a GPU that fell off the bus) may keep its thread for a minute, a
benchmark's ``events()`` blocks for a whole point, and Qt waits for every pooled thread when
the application quits and starves the pool's other jobs meanwhile. A daemon thread is never
waited for unless its owner joins it (a closing panel does, briefly, after killing its child),
so quitting the window is immediate whatever the driver does. Progress, the result and any
exception reach the GUI thread as queued signals; one that arrives after the window (the
relay's parent) is gone is dropped without a word.
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
        on_finished: Callable[[], None] | None,
        parent: QObject | None,
    ) -> None:
        super().__init__(parent)
        self._on_progress_cb = on_progress
        self._on_done_cb = on_done
        self._on_error_cb = on_error
        self._on_finished_cb = on_finished
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
        try:
            self._on_done_cb(value)
        finally:
            self._end()

    @Slot(object)
    def _deliver_failed(self, exc: Any) -> None:
        try:
            self._on_error_cb(exc)
        finally:
            self._end()

    def _end(self) -> None:
        if self._on_finished_cb is not None:
            self._on_finished_cb()
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
    on_finished: Callable[[], None] | None = None,
    parent: QObject | None = None,
    name: str = "background",
) -> threading.Thread:
    """Call ``func(progress)`` in a daemon thread; ``progress(x)``, the result and any exception
    reach ``on_progress``, ``on_done`` and ``on_error`` on the GUI thread, then ``on_finished``
    (after either). The thread is returned so an owner that killed the work's child can join it
    on shutdown; nothing else waits for it."""
    relay = _Relay(on_progress, on_done, on_error, on_finished, parent)

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
