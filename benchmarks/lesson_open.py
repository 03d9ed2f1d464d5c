"""Time opening a lesson and showing its step 1 (target: under 0.5 s).

Three figures per built-in lesson, each the median of ``--repeats`` runs, wall clock and this
thread's CPU time (the machine may be shared; CPU time is what the work itself costs):

* read: reading and checking the file (``load_lesson``);
* first: in a window that is open on the Devices page, the Lessons menu's open (read, build the
  page the step names the first time it is shown, apply the step, lay out and paint);
* again: the same once the page exists (a second lesson, or reopening one).

Run:  QT_QPA_PLATFORM=offscreen python benchmarks/lesson_open.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    from explorer.devices.discover import discover
    from explorer.lessons import load_lesson
    from explorer.lessons.builtin import builtin_paths
    from explorer.ui.app import create_application
    from explorer.ui.context import AppContext
    from explorer.ui.main_window import MainWindow

    app = create_application()
    discovery = discover(include_catalog=True)

    def timed(work) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.thread_time()
        work()
        return time.perf_counter() - wall, time.thread_time() - cpu

    def show(window: MainWindow, path) -> None:
        assert window.lessons.open_path(path)
        window.repaint()  # paint now, as the screen would
        QApplication.processEvents()

    def fmt(samples: list[tuple[float, float]]) -> str:
        wall = statistics.median(s[0] for s in samples) * 1e3
        cpu = statistics.median(s[1] for s in samples) * 1e3
        return f"{wall:6.1f} ms (CPU {cpu:5.1f})"

    worst = 0.0
    print(f"{'lesson':<24} {'read':>22} {'first':>22} {'again':>22}")
    for path in builtin_paths():
        read = [timed(lambda p=path: load_lesson(p)) for _ in range(args.repeats)]
        first, again = [], []
        for _ in range(args.repeats):
            window = MainWindow(AppContext(discovery), discover_on_show=False)
            window.resize(1280, 800)
            window.show()
            QApplication.processEvents()
            first.append(timed(lambda w=window, p=path: show(w, p)))
            window.lessons.close_lesson()
            window.show_panel("devices")
            QApplication.processEvents()
            again.append(timed(lambda w=window, p=path: show(w, p)))
            window.close()
            window.deleteLater()
            QApplication.processEvents()
        worst = max(worst, statistics.median(s[0] for s in first))
        print(f"{path.stem:<24} {fmt(read):>22} {fmt(first):>22} {fmt(again):>22}")
    print(f"slowest median open-and-show-step-1 (first time): {worst * 1e3:.0f} ms (target < 500 ms)")
    app.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
