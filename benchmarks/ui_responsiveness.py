"""How long does the UI thread stall while the Benchmarks panel runs a CPU benchmark?

A 5 ms precise QTimer measures its own lateness on the UI thread while the panel runs the CPU
matmul (sizes up to 2048, every core busy in the worker process). The longest lateness is the
longest time the window could not answer a click or repaint. Target: at most 50 ms.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/ui_responsiveness.py [--seconds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TICK_MS = 5
TARGET_MS = 50.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long to measure (default 20)")
    parser.add_argument("--sizes", default="256, 512, 1024, 2048", help="matmul sizes to run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--verbose", action="store_true", help="list each stall over 20 ms with what the panel was doing"
    )
    args = parser.parse_args(argv)
    # keep the run's "last results" out of the user's folder
    os.environ.setdefault("DEVICE_EXPLORER_HOME", tempfile.mkdtemp(prefix="de-ui-resp-"))

    from PySide6.QtCore import QElapsedTimer, Qt, QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow

    from explorer.devices.discover import discover
    from explorer.ui.bench_panel import BenchPanel
    from explorer.ui.context import AppContext

    app = QApplication.instance() or QApplication(sys.argv)
    window = QMainWindow()
    window.resize(1280, 800)
    panel = BenchPanel(AppContext(discover()))
    window.setCentralWidget(panel)
    window.show()

    panel.controls.set_workload("matmul")
    for key, box in panel.controls.device_boxes().items():
        box.setChecked(key == "cpu")
    panel.controls.sizes_edit.setText(args.sizes)
    panel.controls.repeats_spin.setValue(0)
    panel.controls.budget_spin.setValue(3.0)

    lateness_ms: list[float] = []
    clock = QElapsedTimer()
    state = {"last_ns": 0, "runs": 0, "points": 0, "errors": 0}
    events: list[tuple[float, str]] = []  # (seconds since start, what happened) for --verbose
    stalls: list[tuple[float, float]] = []

    def note(what: str) -> None:
        events.append((clock.nsecsElapsed() / 1e9, what))

    def tick() -> None:
        now = clock.nsecsElapsed()
        if state["last_ns"]:
            late = max(0.0, (now - state["last_ns"]) / 1e6 - TICK_MS)
            lateness_ms.append(late)
            if late > 20:
                stalls.append((now / 1e9, late))
        state["last_ns"] = now

    def on_point(point) -> None:
        state["points"] += 1
        state["errors"] += point.error is not None
        note(f"point {point.size_label} {'ERROR ' + point.error if point.error else ''}".strip())

    def restart_if_idle() -> None:
        # keep the CPU busy for the whole window: start again when a run finishes
        if not panel.running:
            state["runs"] += 1
            note("run started")
            panel.start()
            panel._stream.point.connect(on_point)

    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    keeper = QTimer()
    keeper.setInterval(200)
    keeper.timeout.connect(restart_if_idle)

    restart_if_idle()
    clock.start()
    timer.start()
    keeper.start()
    QTimer.singleShot(int(args.seconds * 1000), app.quit)
    app.exec()
    timer.stop()
    keeper.stop()
    points = state["points"]
    panel.shutdown()
    if args.verbose:
        for t, late in stalls:
            before = [what for when, what in events if when <= t][-1:] or ["(nothing yet)"]
            print(f"  stall {late:6.1f} ms at {t:6.2f} s; last event: {before[0]}")

    lateness_ms.sort()
    p99 = statistics.quantiles(lateness_ms, n=100)[98] if len(lateness_ms) >= 100 else max(lateness_ms)
    result = {
        "seconds": args.seconds,
        "ticks": len(lateness_ms),
        "max_stall_ms": round(max(lateness_ms), 1),
        "p99_stall_ms": round(p99, 1),
        "median_stall_ms": round(statistics.median(lateness_ms), 2),
        "points_measured": points,
        "error_points": state["errors"],
        "runs_started": state["runs"],
        "target_ms": TARGET_MS,
        "cpu_cores": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"UI thread lateness over {args.seconds:.0f} s ({len(lateness_ms)} ticks of {TICK_MS} ms) "
            f"while the CPU matmul ran ({points} points, {state['runs']} run(s), {os.cpu_count()} cores):"
        )
        print(
            f"  max {result['max_stall_ms']} ms   p99 {result['p99_stall_ms']} ms   "
            f"median {result['median_stall_ms']} ms   (target: max <= {TARGET_MS:.0f} ms)"
        )
        print("  PASS" if result["max_stall_ms"] <= TARGET_MS else "  FAIL")
    return 0 if result["max_stall_ms"] <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
