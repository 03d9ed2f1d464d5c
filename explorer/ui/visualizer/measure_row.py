"""The measured part of the timeline and latency views: a button, and one line of what happens.

A measured run (``explorer.launch_runs.measured``) runs kernels in a child agent process and blocks
until it answers, so it runs off the GUI thread (``explorer.ui.workers``), as "Run it for real"
does; the window keeps drawing meanwhile. Stop, a changed launch or a closing window ``cancel``
it: the child's process group is killed and the line says why. Where nothing can be measured (no GPU in this
machine, a catalog sheet shown) the button is off and the line says why, in one sentence.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from explorer.ui.widgets import ElidedLine
from explorer.ui.workers import run_in_daemon_thread

if TYPE_CHECKING:  # pragma: no cover
    from explorer.agent.child import AgentProcess

#: the longest a closing window waits for a stopped run's worker thread (the child is killed first)
STOP_WAIT_MS = 3000

Job = Callable[[Callable[["AgentProcess"], None]], Any]


class MeasureRow(QWidget):
    """``MeasureRow(label)``: ``set_unavailable(why)`` or ``set_ready(words)``, then ``start(job,
    on_result)`` runs ``job(on_process)`` off the UI thread and hands its result to ``on_result``
    (on the UI thread), unless it was cancelled meanwhile."""

    def __init__(self, label: str, tip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._label, self._tip = label, tip
        self.button = QPushButton(label)
        self.button.setToolTip(tip)
        self.button.setMinimumWidth(self.button.sizeHint().width())
        self.status = ElidedLine()  # one line, cut with "…" where the row is short; whole on hover
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.button)
        lay.addWidget(self.status, 1)
        self._worker: threading.Thread | None = None
        self._proc: AgentProcess | None = None
        self._cancelled = ""
        self._on_result: Callable[[Any], object] | None = None
        self._for: object = None  # what the measurement under way belongs to
        self._clock = QElapsedTimer()
        self._ticker = QTimer(self)
        self._ticker.setInterval(200)
        self._ticker.timeout.connect(self._show_progress)
        self._what = ""
        self.button.clicked.connect(self._clicked)
        self.on_click: Callable[[], None] | None = None

    @property
    def running(self) -> bool:
        return self._worker is not None

    def set_unavailable(self, why: str, detail: str = "") -> None:
        """Nothing can be measured here: the button off, ``why`` in one line (``detail``, such as
        discovery's whole reason there is no GPU, is added on hover)."""
        if self.running:
            return
        self.button.setEnabled(False)
        self._say(why, muted=True, detail=detail)

    def set_ready(self, words: str) -> None:
        """A measurement can run: the button on, ``words`` beside it."""
        if self.running:
            return
        self.button.setEnabled(True)
        self._say(words, muted=True)

    def follow(self, shown: object, why: str, detail: str = "", ready: str | None = None) -> None:
        """What is shown changed (a launch, a device) or may have: a measurement under way for
        something else (``shown`` is what it belongs to) is stopped; then the button is off with
        ``why`` (``detail`` on hover) or, ``why`` empty, on with ``ready`` (None: the line of the
        result shown stays)."""
        if self.running and shown != self._for:
            self.cancel("What is shown changed, so its measurement was stopped: measure it again.")
        if why:
            self.set_unavailable(why, detail)
        elif ready is not None:
            self.set_ready(ready)

    def _clicked(self) -> None:
        if self.running:
            self.cancel("Stopped before it finished.")
        elif self.on_click is not None:
            self.on_click()

    def start(self, what: str, job: Job, on_result: Callable[[Any], object], shown: object = None) -> None:
        """Run ``job(on_process)`` in a worker thread; ``what`` names it in the progress line and
        ``shown`` is what it belongs to (``follow`` stops it when that is no longer shown)."""
        if self.running:
            return
        self._cancelled, self._what, self._on_result, self._for = "", what, on_result, shown

        def keep(agent: AgentProcess) -> None:  # in the worker thread, before the child starts
            self._proc = agent
            if self._cancelled:
                agent.cancel()

        self.button.setText("Stop")
        self.button.setToolTip("Stop the measurement (its child process is ended)")
        self._clock.start()
        self._show_progress()
        self._ticker.start()
        self._worker = run_in_daemon_thread(
            lambda _progress: job(keep),
            self._done,
            self._errored,
            on_finished=self._cleanup,
            parent=self,
            name="measure",
        )

    def _show_progress(self) -> None:
        self._say(
            f"{self._what}: {self._clock.elapsed() / 1000:.1f} s (numba compiles the kernels first). Stop ends it."
        )

    def cancel(self, why: str) -> None:
        """End the measurement under way (if any) and say ``why``."""
        if self._worker is None:
            return
        self._cancelled = why
        if self._proc is not None:
            self._proc.cancel()
        self._ticker.stop()
        self._say(why)

    def _done(self, result: Any) -> None:
        self._ticker.stop()
        if self._cancelled or self._on_result is None:
            return
        self._say("")
        self._on_result(result)

    def _errored(self, exc: BaseException) -> None:
        self._ticker.stop()
        if self._cancelled:
            return
        text = str(exc)
        self._say(text.splitlines()[0] if text else repr(exc), error=True)

    def _cleanup(self) -> None:
        self._worker = None
        self._proc = None
        self._ticker.stop()
        self.button.setText(self._label)
        self.button.setToolTip(self._tip)

    def _say(self, text: str, muted: bool = False, error: bool = False, detail: str = "") -> None:
        """``text`` in the theme's muted or error colour (the app's stylesheet roles, so a theme
        switch recolours it); the whole of it, and ``detail``, on hover."""
        self.status.setProperty("role", "error" if error else ("muted" if muted else ""))
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
        self.status.setText(text)
        self.status.setToolTip("\n\n".join(t for t in (text, detail) if t))

    def shutdown(self) -> None:
        """The window is closing: kill the child and wait briefly for the worker thread."""
        worker = self._worker
        if worker is None:
            return
        self._cancelled = "the window was closed"
        if self._proc is not None:
            self._proc.cancel()
        worker.join(STOP_WAIT_MS / 1000)
