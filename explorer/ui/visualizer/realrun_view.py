"""'Run it for real': the kernel with this exact configuration, and a strip of who wrote each element.

The run happens in a child process (``explorer.launch.realrun``) driven from a superqt worker
thread, so the window keeps animating while numba compiles and the simulator grinds.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QVBoxLayout, QWidget

from explorer.launch.realrun import RealRunResult, run_real
from explorer.ui.guard import qt_guard
from explorer.ui.theme import current_theme
from explorer.ui.visualizer import palette


class ElementStrip(QWidget):
    """Elements 0..n-1 left to right, coloured by the block that wrote them; untouched ones in black.

    With more elements than pixels, each pixel column shows the block of its first element, and is
    black if any element in it was left untouched, so a missed element is never averaged away.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: RealRunResult | None = None
        self.setMinimumHeight(70)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._columns: list[tuple[int, int]] | None = None  # (block or -1, run length in px)

    @qt_guard
    def sizeHint(self) -> QSize:
        return QSize(600, 70)

    def set_result(self, result: RealRunResult | None) -> None:
        self.result = result
        self._columns = None
        self.update()

    @qt_guard
    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self._columns = None
        super().resizeEvent(event)

    def _runs(self, width: int) -> list[tuple[int, int]]:
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
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        p = QPainter(self)
        p.fillRect(self.rect(), palette.SM_BACKGROUND)
        font = QFont(self.font())
        font.setPixelSize(13)
        p.setFont(font)
        if self.result is None:
            p.setPen(palette.MUTED_TEXT)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No real run yet")
            return
        w = self.width() - 8
        if self._columns is None:
            self._columns = self._runs(w)
        x = 4.0
        bar_h = self.height() - 24
        for block, px in self._columns:
            colour = palette.UNTOUCHED if block < 0 else palette.BLOCK_CYCLE[block % len(palette.BLOCK_CYCLE)]
            p.fillRect(QRectF(x, 2, px, bar_h), colour)
            x += px
        p.setPen(palette.TEXT)
        p.drawText(QRectF(4, bar_h + 4, 200, 18), Qt.AlignmentFlag.AlignLeft, "element 0")
        p.drawText(
            QRectF(self.width() - 204, bar_h + 4, 200, 18),
            Qt.AlignmentFlag.AlignRight,
            f"element {self.result.n - 1:,}",
        )
        p.end()


class RealRunView(QWidget):
    """Button, explanation and strip; the panel tells it the configuration and where to run."""

    finished = Signal(object)  # RealRunResult or str (the one-line error)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        row = QHBoxLayout()
        self.button = QPushButton("Run it for real")
        self.button.setToolTip("Launch a numba vector-add kernel with exactly this grid and block")
        row.addWidget(self.button)
        self.where = QLabel("")
        self.where.setWordWrap(True)
        row.addWidget(self.where, 1)
        lay.addLayout(row)
        self.status = QLabel(
            "Each element is coloured by the block that wrote it; black: no thread wrote it."
        )
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.status)
        self.strip = ElementStrip()
        lay.addWidget(self.strip)
        lay.addStretch(1)
        self._worker = None
        self._proc = None
        self._threads_per_block = 0
        self.simulator = True

    def set_backend(self, simulator: bool, gpu_name: str | None) -> None:
        self.simulator = simulator
        if simulator:
            self.where.setText(
                "No NVIDIA GPU here: runs under numba's CUDA simulator (small launches only, "
                "each thread is a Python thread)."
            )
        else:
            self.where.setText(f"Runs on {gpu_name}.")

    @property
    def running(self) -> bool:
        return self._worker is not None

    def start(self, grid: tuple[int, int, int], block: tuple[int, int, int], n: int | None, tpb: int) -> None:
        """Start a run off the UI thread; a refused size is shown at once, without a child process."""
        from explorer.errors import UserError
        from explorer.launch.realrun import check_size

        if self._worker is not None:
            return
        try:
            check_size(grid, block, n, simulator=self.simulator)
        except UserError as exc:
            self._show_error(str(exc))
            return
        from superqt.utils import create_worker

        self._threads_per_block = tpb
        self.button.setEnabled(False)
        self.status.setText("Running... (numba compiles the kernel first)")
        self.status.setStyleSheet("")

        def keep(proc) -> None:
            self._proc = proc

        worker = create_worker(
            run_real, grid, block, n, simulator=self.simulator, on_process=keep, _start_thread=False
        )
        worker.returned.connect(self._done)
        worker.errored.connect(
            lambda exc: self._show_error(str(exc).splitlines()[0] if str(exc) else repr(exc))
        )
        worker.finished.connect(self._cleanup)
        self._worker = worker
        worker.start()

    def _done(self, result: RealRunResult) -> None:
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

    def _show_error(self, message: str) -> None:
        self.status.setStyleSheet(f"color: {current_theme().error};")
        self.status.setText(message)
        self.finished.emit(message)

    def _cleanup(self) -> None:
        self._worker = None
        self._proc = None
        self.button.setEnabled(True)

    def shutdown(self) -> None:
        """Kill a running child and wait (briefly) for the worker thread to notice."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()
        if self._worker is not None:
            from PySide6.QtCore import QThreadPool

            QThreadPool.globalInstance().waitForDone(5000)
