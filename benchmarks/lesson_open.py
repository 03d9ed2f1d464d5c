"""Time opening a lesson and showing its step 1 (target: under 0.5 s).

Three figures per built-in lesson, each the median of ``--repeats`` runs, wall clock and this
thread's CPU time (the machine may be shared; CPU time is what the work itself costs):

* read: reading and checking the file (``load_lesson``);
* first: in a window that is open on the Devices page, the Lessons menu's open (read, build the
  page the step names the first time it is shown, apply the step, lay out and paint);
* again: the same once the page exists (a second lesson, or reopening one).

``--recorded N`` adds a lesson whose benchmarks step carries N recorded points (20,000 is a
3.7 MB file: the size that once took 110 s to show, 107 s of it in ``QTextEdit.setMarkdown``).

Run:  QT_QPA_PLATFORM=offscreen python benchmarks/lesson_open.py [--repeats 5] [--recorded 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--recorded", type=int, default=0, help="add a lesson with this many recorded points")
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
    paths = builtin_paths()
    if args.recorded:
        paths.append(big_lesson(args.recorded, Path(tempfile.mkdtemp())))
    for path in paths:
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


def big_lesson(points: int, folder: Path) -> Path:
    """Built-in lesson 05's recorded step with ``points`` recorded points (a sweep of sizes)."""
    from explorer.lessons.builtin import builtin_paths

    source = next(p for p in builtin_paths() if p.stem.startswith("05"))
    lesson = json.loads(source.read_text(encoding="utf-8"))
    step = next(s for s in lesson["steps"] if "recorded" in s.get("state", {}))
    step["state"]["recorded"]["points"] = [
        {
            "workload": "matmul",
            "variant": "cpu",
            "device": "cpu",
            "size": 16 + i,
            "size_label": f"n={16 + i}",
            "median_s": 1e-4 * (1 + i % 7),
            "repeats": 5,
            "throughput": 10.0 + i % 100,
            "throughput_unit": "GFLOP/s",
        }
        for i in range(points)
    ]
    lesson["steps"] = [step]
    path = folder / f"recorded-{points}.json"
    path.write_text(json.dumps(lesson), encoding="utf-8")
    return path


if __name__ == "__main__":
    raise SystemExit(main())
