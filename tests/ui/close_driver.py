"""Run the real window (``run_event_loop``, as ``device-explorer`` does) with background work going.

Used by tests/ui/test_close_and_signals.py as a child process:
``python close_driver.py WORK FOLDER`` where WORK is ``bench`` (a benchmark run whose second point
hangs), ``realrun`` (the launch visualizer's real run under the simulator; ``realrun-early`` closes the
window in the same turn of the event loop that started it, writing FOLDER/closing with the
time.monotonic() of the close) or ``discovery`` (the
device discovery the window starts when it is shown). The driver writes FOLDER/ready once the work
is under way, and closes the window as a user would (``window.close()``) when FOLDER/close appears;
the test may instead send it a signal. It prints nothing itself: whatever the process prints is the
app's.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from PySide6.QtCore import QTimer

from explorer.bench.runner import BenchPlan
from explorer.commands.gui import open_main_window, run_event_loop
from explorer.launch.config import Dim3, LaunchConfig


def main() -> int:
    work, folder = sys.argv[1], Path(sys.argv[2])
    app, window = open_main_window(
        "visualizer" if work.startswith("realrun") else "benchmarks", remember=True
    )

    def ready(*_args: object) -> None:
        # Benchmarks and real runs are marked ready once discovery is done too, so what the test
        # times is the stopping of that work, not the window waiting for torch to finish importing.
        if work == "discovery" or window.context.discovery is not None:
            (folder / "ready").write_text("ready")
        else:
            window.context.discovery_changed.connect(ready)

    if work == "bench":
        panel = window.panels["benchmarks"]
        panel.controls.build_plan = lambda: BenchPlan("_hang_test", ["cpu"], sizes=[1, 2, 3], repeats=2)

        def start() -> None:
            panel.start()
            panel._stream.point.connect(ready)  # the first point is in: the worker now hangs on size 2

        QTimer.singleShot(0, start)
    elif work in ("realrun", "realrun-early"):
        view = window.panels["visualizer"].realrun_view
        view.set_backend(True, None)

        def run_for_real(*_args: object) -> None:
            if window.context.discovery is None:
                window.context.discovery_changed.connect(run_for_real)
                return
            # 8,192 threads: under numba's simulator, so the child imports numba and then runs each
            # thread as a Python thread: seconds in which the test closes the window.
            view.start(LaunchConfig(Dim3(32), Dim3(256)))
            if work == "realrun-early":  # closed before the run's child even exists
                (folder / "closing").write_text(repr(time.monotonic()))
                window.close()
            else:
                ready()

        QTimer.singleShot(0, run_for_real)
    else:  # discovery starts once the window has painted; mark ready when it is under way
        started = QTimer(window)
        started.timeout.connect(lambda: window._discovering and (started.stop(), ready()))
        started.start(20)

    poll = QTimer()
    poll.timeout.connect(lambda: (folder / "close").exists() and window.close())
    poll.start(50)
    return run_event_loop(app)


if __name__ == "__main__":
    sys.exit(main())
