"""Carry a benchmark run's event stream from a background thread to the UI thread.

``BenchRun.events()`` blocks until the worker *process* finishes each point, so it is iterated
on a thread of its own; each point or progress record reaches the panel as a queued signal,
and the UI thread never waits on the benchmark.

The thread is the views' usual one (``explorer.ui.workers``), never a pooled one: ``events()``
can block for the length of a point, and a pooled thread held that long would starve the pool's
other jobs. ``_iterate`` turns every failure into ``failed`` and always ends with ``ended``, so
the worker's own result and error callbacks have nothing left to say. The worker's priority is
the engine's business (``BenchPlan.low_priority``, set by the controls), so this module only
carries events.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from explorer.errors import UserError
from explorer.ui.workers import run_in_daemon_thread

if TYPE_CHECKING:
    from explorer.bench.runner import BenchPlan, BenchRun
    from explorer.roofs.model import RoofKey

log = logging.getLogger(__name__)


class RunStream(QObject):
    #: one ``BenchPoint`` (measured or error row), on the UI thread
    point = Signal(object)
    #: one ``Progress`` record
    progress = Signal(object)
    #: the run could not go on; one line for the user (never a traceback)
    failed = Signal(str)
    #: what the run waits for (``explorer.bench.runner.Waiting``): its place in a GPU's line, about
    #: once a second, or its Slurm job's state as Slurm changes it
    waiting = Signal(object)
    #: the roof a device's points were placed under (``Roof``; ``host`` set for a remote machine's),
    #: once per device, before that device's first point
    roof = Signal(object)
    #: the stream ended: finished, cancelled or failed
    ended = Signal()

    def __init__(self, plan: BenchPlan, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._plan = plan
        self._run: BenchRun | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = run_in_daemon_thread(
            lambda _progress: self._iterate(),
            lambda _none: None,
            lambda exc: log.error("the benchmark stream ended", exc_info=exc),
            parent=self,
            name="bench-stream",
        )

    def cancel(self) -> None:
        """Stop the run now: the engine terminates its worker process and ``events()`` ends."""
        with self._lock:
            self._cancelled = True
            run = self._run
        if run is not None:
            run.cancel()

    def wait(self, timeout_s: float = 10.0) -> bool:
        """Block until the background thread has left ``events()`` (used on shutdown only)."""
        if self._thread is None:
            return True
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    # --- the background thread ----------------------------------------------------------
    def _iterate(self) -> None:
        try:
            from explorer.bench.runner import BenchRun, Progress

            run = BenchRun(self._plan)
            run.on_waiting = self.waiting.emit  # called on this thread; delivered queued
            with self._lock:
                self._run = run
                cancelled = self._cancelled
            if cancelled:
                run.cancel()
            roofs_sent: set[RoofKey] = set()
            for event in run.events():
                if isinstance(event, Progress):
                    self.progress.emit(event)
                    continue
                for key, roof in list(run.roofs.items()):
                    if key not in roofs_sent:  # before the point, so it is drawn under its roof
                        roofs_sent.add(key)
                        self.roof.emit(roof)
                self.point.emit(event)  # a remote run's points name their host (the engine sets it)
        except UserError as exc:  # a plan the engine refuses: the user's line says why
            self.failed.emit(str(exc))
        except Exception as exc:  # shown as one line in the panel; the details go to the log
            log.exception("benchmark run failed")
            self.failed.emit(_one_line(exc))
        finally:
            self.ended.emit()


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"the benchmark stopped: {type(exc).__name__}: {text[0] if text else 'no message'}"
