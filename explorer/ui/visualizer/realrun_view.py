"""'Run it for real': the kernel with this exact configuration, and a strip of who wrote each element.

A view of the ``LaunchSession``'s edited side: the button runs that side's ``LaunchConfig`` on its
device (another machine's GPU through its agent), and a run or a strip belongs to the launch it was
made for, so a changed launch ends the one under way and clears the last one's picture. The run
happens in a child process (``explorer.launch_runs.realrun``) driven from a worker thread
(``explorer.ui.workers``), so the window keeps animating while numba compiles and the simulator
grinds.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QElapsedTimer, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics, QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from explorer.launch.config import LaunchConfig
from explorer.launch.occupancy_truth import PredictedOccupancy
from explorer.launch.schedule import LaunchPlan
from explorer.launch.session import LaunchSession
from explorer.launch_runs.realrun import (
    BACKEND_WORDS,
    SIMULATOR_PREFERRED_MAX_THREADS,
    RealRunResult,
    cpu_backend,
    run_real,
)
from explorer.ui.guard import qt_guard
from explorer.ui.theme import current_theme, figure_font, px
from explorer.ui.visualizer import palette
from explorer.ui.workers import run_in_daemon_thread
from explorer.words import on_host

if TYPE_CHECKING:  # pragma: no cover
    from explorer.agent.child import AgentProcess
    from explorer.remote.target import Remote

#: the longest a closing window waits for a stopped run's worker thread (it needs milliseconds once
#: the child is killed; the bound only matters should the OS be slow to end the child)
STOP_WAIT_MS = 3000


class ElementStrip(QWidget):
    """Elements 0..n-1 left to right, coloured by the block that wrote them; untouched ones in black.

    With more elements than pixels, each pixel column shows the block of its first element, and is
    black if any element in it was left untouched, so a missed element is never averaged away.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: RealRunResult | None = None
        self.fit_height()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._columns: list[tuple[int, float]] | None = None  # (block or -1, run length in px)
        self._image: QImage | None = None

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(600, 70)

    def set_result(self, result: RealRunResult | None) -> None:
        self.result = result
        self._columns = None
        self._image = None
        self.fit_height()
        self.update()

    def font_now(self) -> QFont:
        """The strip's words (the theme's figure text, a notch under the labels)."""
        return figure_font(0.9, base=self.font())

    def fit_height(self) -> None:
        """A strip with its line of words under it, or a 2D/3D run's image (it needs room), at
        the current text size."""
        words = QFontMetrics(self.font_now()).height() + 8
        image = self.result is not None and self.result.extent is not None
        self.setFixedHeight(px(IMAGE_HEIGHT) + words if image else px(STRIP_HEIGHT - 20) + words)

    def picture(self, width: int, height: int) -> QImage:
        """The z = 0 slice of a 2D/3D run, one pixel per element or per cell of elements when it is
        larger than the widget; a cell with any untouched element is black, so none is hidden."""
        import numpy as np

        r = self.result
        assert r is not None and r.extent is not None
        ex, ey, _ez = r.extent
        plane = ex * ey
        writes = r.writes_per_element[:plane].reshape(ey, ex)
        blocks = r.block_of_element[:plane].reshape(ey, ex)
        scale = min(width / ex, height / ey)
        cols, rows = max(1, min(ex, int(ex * scale))), max(1, min(ey, int(ey * scale)))
        xs = (np.arange(cols, dtype=np.int64) * ex) // cols
        ys = (np.arange(rows, dtype=np.int64) * ey) // rows
        touched = np.minimum.reduceat(np.minimum.reduceat(writes, xs, axis=1), ys, axis=0) > 0
        block = blocks[np.ix_(ys, xs)]
        gx, gy, _gz = r.grid
        # neighbouring tiles differ in colour across and down: (bx + 3 by + 5 bz) mod 6
        tile = (block % gx) + 3 * ((block // gx) % gy) + 5 * (block // (gx * gy))
        table = np.array([c.rgb() & 0xFFFFFFFF for c in palette.BLOCK_CYCLE], dtype=np.uint32)
        argb = np.where(touched, table[tile % len(table)], np.uint32(palette.UNTOUCHED.rgb() & 0xFFFFFFFF))
        argb = np.ascontiguousarray(argb, dtype=np.uint32)
        return QImage(argb.data, cols, rows, cols * 4, QImage.Format.Format_RGB32).copy()

    @qt_guard
    def resizeEvent(self, event) -> None:
        self._columns = None
        self._image = None
        super().resizeEvent(event)

    def _runs(self, width: int) -> list[tuple[int, float]]:
        import numpy as np

        r = self.result
        assert r is not None
        n = r.n
        cols = max(1, min(width, n))
        starts = (np.arange(cols, dtype=np.int64) * n) // cols
        blocks = r.block_of_element[starts]
        untouched = np.minimum.reduceat(r.writes_per_element, starts) == 0
        blocks = np.where(untouched, -1, blocks)
        runs: list[tuple[int, int]] = []
        px_per_col = width / cols
        for b in blocks.tolist():
            if runs and runs[-1][0] == b:
                runs[-1] = (b, runs[-1][1] + 1)
            else:
                runs.append((b, 1))
        return [(b, c * px_per_col) for b, c in runs]

    @qt_guard
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        c = palette.canvas()
        p.fillRect(self.rect(), c.sm_face)
        p.setFont(self.font_now())
        if self.result is None:
            p.setPen(c.muted)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No real run yet")
            return
        if self.result.extent is not None:
            self._paint_image(p)
            p.end()
            return
        w = self.width() - 8
        if self._columns is None:
            self._columns = self._runs(w)
        x = 4.0
        label_h = p.fontMetrics().height() + 4
        bar_h = self.height() - label_h - 4
        for block, run_w in self._columns:
            colour = palette.UNTOUCHED if block < 0 else palette.BLOCK_CYCLE[block % len(palette.BLOCK_CYCLE)]
            p.fillRect(QRectF(x, 2, run_w, bar_h), colour)
            x += run_w
        p.setPen(c.text)
        half = self.width() / 2 - 4
        p.drawText(QRectF(4, bar_h + 4, half, label_h), Qt.AlignmentFlag.AlignLeft, "element 0")
        p.drawText(
            QRectF(self.width() / 2, bar_h + 4, half, label_h),
            Qt.AlignmentFlag.AlignRight,
            f"element {self.result.n - 1:,}",
        )
        p.end()

    def _paint_image(self, p: QPainter) -> None:
        r = self.result
        assert r is not None and r.extent is not None
        ex, ey, ez = r.extent
        text_h = p.fontMetrics().height()
        room_w, room_h = self.width() - 8, self.height() - text_h - 8
        if self._image is None:
            self._image = self.picture(room_w, room_h)
        scale = min(room_w / ex, room_h / ey)
        target = QRectF(4, 2, ex * scale, ey * scale)
        p.drawImage(target, self._image)  # scaled up without smoothing: elements stay square
        p.setPen(palette.canvas().text)  # the theme's: the strip's ground is the theme's too
        words = f"{ex:,} x {ey:,} image as written" if ez == 1 else f"slice z = 0 of {ez:,} ({ex:,} x {ey:,})"
        p.drawText(QRectF(4, room_h + 4, self.width() - 8, text_h + 2), Qt.AlignmentFlag.AlignLeft, words)


STRIP_HEIGHT = 70
IMAGE_HEIGHT = 220
RUN_TIP = "Launch a numba vector-add kernel with exactly this grid and block"


class RealRunView(QWidget):
    """Button, explanation and strip for the session's edited launch."""

    finished = Signal(object)  # RealRunResult or str (the one-line error)
    #: a launch finished on this machine's GPU: its ``PredictedOccupancy`` for the live view
    occupancy_run = Signal(object)

    def __init__(self, session: LaunchSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        self.button = QPushButton("Run it for real")
        self.button.setToolTip(RUN_TIP)
        # the button reads "Stop" while a run is under way: it keeps its width, nothing jumps
        self.button.setMinimumWidth(self.button.sizeHint().width())
        row.addWidget(self.button)
        row.addStretch(1)
        lay.addLayout(row)
        self.where = QLabel("")  # on its own line: beside the button it was a narrow column
        self.where.setWordWrap(True)
        lay.addWidget(self.where)
        self.status = QLabel(
            "Each element is coloured by the block that wrote it; black: no thread wrote it."
        )
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.status)
        self.strip = ElementStrip()
        lay.addWidget(self.strip)
        lay.addStretch(1)
        self._worker: threading.Thread | None = None
        self._proc: AgentProcess | None = None
        self._threads_per_block = 0
        self._backend = "gpu"
        self._host = ""  # the remote machine of the run under way, "" for this one
        self._local_where = ""  # the "where" line for this machine, shown again after a remote run
        self._cancelled = ""  # why the running child was killed on purpose
        #: the launch run on this machine's GPU, for its predicted occupancy: (key, name, plan)
        self._predicting: tuple[str, str, LaunchPlan] | None = None
        self._started_at = 0.0
        self._clock = QElapsedTimer()
        self._ticker = QTimer(self)
        self._ticker.setInterval(200)
        self._ticker.timeout.connect(self._show_progress)
        self.simulator = True
        self._ran_for: tuple[str, LaunchConfig] | None = None  # (device key, launch) of the last run
        self.button.clicked.connect(self.run_or_stop)
        session.events.devices.connect(self._show_devices)
        session.events.launch.connect(self._follow_launch)
        self._show_devices()
        self._follow_launch()

    def _show_devices(self) -> None:
        present = [c.device for c in self.session.devices if c.device.kind == "cuda" and c.remote is None]
        self.set_backend(not present, present[0].name if present else None)

    def _edited(self) -> tuple[str, LaunchConfig] | None:
        side = self.session.edited_side
        if side.plan is None or side.choice is None:
            return None
        return (side.choice.key, side.plan.config)

    def _follow_launch(self) -> None:
        """A run or a strip belongs to the launch it was made for: a changed one ends the run under
        way and clears the last one's picture, so no old N is ever reported as the new one."""
        self.button.setEnabled(self.session.edited_side.plan is not None)
        if self._edited() == self._ran_for:
            return  # the same launch planned again
        self._ran_for = None
        if self.running:
            self.cancel("The launch changed, so its run was stopped: run it again.")
        elif self.strip.result is not None:
            self.strip.set_result(None)
            self.status.setText("The launch changed since the last run: run it again.")

    def run_or_stop(self) -> None:
        """The button: run the edited side's launch on its device, or stop the run under way."""
        if self.running:
            self.cancel("Stopped: the run was ended before it finished.")
            return
        side = self.session.edited_side
        self._ran_for = self._edited()
        if side.plan is None or side.choice is None:
            return
        choice = side.choice
        # what the live view compares GPM with: the occupancy the visualizer predicts for this launch
        self._predicting = (choice.key, choice.device.name, side.plan) if choice.remote is None else None
        self.start(side.plan.config, choice.remote, choice.remote_index)

    def set_backend(self, simulator: bool, gpu_name: str | None) -> None:
        """``simulator``: no GPU here, so small launches run under numba's CUDA simulator and larger
        ones as the compiled CPU emulation of the same kernel (``explorer.launch_runs.realrun``)."""
        self.simulator = simulator
        if simulator:
            self.where.setText(
                f"No NVIDIA GPU here: launches of up to {SIMULATOR_PREFERRED_MAX_THREADS:,} threads run under "
                "numba's CUDA simulator, larger ones as a compiled CPU emulation of the same kernel "
                "(numba @njit). Both check the index arithmetic, not a GPU's speed."
            )
        else:
            self.where.setText(f"Runs on {gpu_name}.")
        self._local_where = self.where.text()

    @property
    def running(self) -> bool:
        return self._worker is not None

    @property
    def process(self) -> AgentProcess | None:
        """The child (or the remote's agent) of the run under way, once it exists."""
        return self._proc

    def start(
        self, config: LaunchConfig, remote: Remote | None = None, device_index: int | None = None
    ) -> None:
        """Start a run of ``config`` off the UI thread; a refused size is shown at once, without a
        child process. With ``remote`` it runs on that machine's GPU ``device_index`` through its
        agent over ssh."""
        from explorer.errors import UserError
        from explorer.launch_runs.realrun import check_launch

        if self._worker is not None:
            return
        threads = config.grid.count * config.block.count
        backend = "gpu" if remote is not None else cpu_backend(threads) if self.simulator else "gpu"
        self._host = remote.host if remote is not None else ""
        self.where.setText(
            f"Runs on {self._host}'s GPU (cuda:{device_index}) through its agent over ssh; the "
            "records of who wrote each element come back through the same pipe."
            if remote is not None
            else self._local_where
        )
        self.strip.set_result(None)  # the last run's strip belongs to another launch
        try:
            check_launch(config, backend)
        except UserError as exc:
            self._show_error(str(exc))
            return
        self._threads_per_block = config.block.count
        self._backend = backend
        self._started_at = time.time()
        self._cancelled = ""
        self.button.setText("Stop")
        self.button.setToolTip("Stop the run (its child process is ended)")
        self.status.setStyleSheet("")
        self._clock.start()
        self._show_progress()
        self._ticker.start()

        def keep(agent) -> None:  # in the worker thread, before the child starts
            self._proc = agent
            if self._cancelled:  # stopped already: the agent will not start
                agent.cancel()

        # errors come back to _errored as one line, never raised in the event loop: a stopped run
        # (its child killed) ends in an error that is the kill we asked for
        self._worker = run_in_daemon_thread(
            lambda _progress: run_real(
                config, backend=backend, on_process=keep, remote=remote, device_index=device_index
            ),
            self._done,
            self._errored,
            on_finished=self._cleanup,
            parent=self,
            name="real-run",
        )

    def _show_progress(self) -> None:
        """What is running and for how long: numba's compile and the run give no finer progress."""
        self.status.setText(
            f"Running {on_host(BACKEND_WORDS[self._backend], self._host)}: "
            f"{self._clock.elapsed() / 1000:.1f} s "
            "(numba compiles the kernel first). Stop ends it."
        )

    def cancel(self, why: str) -> None:
        """End a run in progress (the launch changed, or Stop): kill its child and say why."""
        if self._worker is None:
            return
        self._cancelled = why
        agent = self._proc
        if agent is not None:
            agent.cancel()  # kills the child's whole process group
        self._ticker.stop()
        self.status.setStyleSheet("")
        self.status.setText(why)

    def _done(self, result: RealRunResult) -> None:
        self._ticker.stop()  # before the result is shown: a late tick must not write over it
        if self._cancelled:  # finished just as it was stopped: its launch is no longer shown
            return
        mismatches = result.mismatches(self._threads_per_block)
        check = (
            "every written element was written by the block and thread the visualizer predicts"
            if mismatches == 0
            else f"{mismatches:,} elements were written by another thread than the visualizer predicts"
        )
        self.status.setStyleSheet("")
        self.status.setText(f"{result.summary()} {check[0].upper()}{check[1:]}.")
        self.strip.set_result(result)
        self.finished.emit(result)
        if self._predicting is not None and result.backend == "gpu" and not result.host:
            key, name, plan = self._predicting
            self.occupancy_run.emit(
                PredictedOccupancy.from_plan(
                    key,
                    name,
                    plan,
                    result.kernel_s,  # the timed launch; the warm-up before it ran one thread
                    self._started_at,
                    time.time(),
                )
            )

    def _errored(self, exc: BaseException) -> None:
        text = str(exc)
        self._show_error(text.splitlines()[0] if text else repr(exc))

    def _show_error(self, message: str) -> None:
        self._ticker.stop()
        if self._cancelled:  # the kill we asked for: the reason is already shown
            self.finished.emit(self._cancelled)
            return
        self.status.setStyleSheet(f"color: {current_theme().error};")
        self.status.setText(message)
        self.finished.emit(message)

    def _cleanup(self) -> None:
        self._worker = None
        self._proc = None
        self._ticker.stop()
        self.button.setText("Run it for real")
        self.button.setToolTip(RUN_TIP)

    def apply_text_scale(self) -> None:
        """The strip's painted labels grow with the text; so does its height."""
        self.strip.fit_height()
        self.strip.update()

    def shutdown(self) -> None:
        """The window is closing: stop the run now, before its child starts if it has not yet (the
        worker's ``keep`` sees the flag), kill the child's process group if it has, and wait for
        the worker thread, which then only has to read the child's end: well under ``STOP_WAIT_MS``."""
        if self._worker is None:
            return
        self._cancelled = "the window was closed"
        agent = self._proc
        if agent is not None:
            agent.cancel()
        self._worker.join(STOP_WAIT_MS / 1000)
