"""How long from launching Device Explorer to its first painted window, against a bare Qt window.

The baseline is the least any PySide6 + pyqtgraph app can do: a QMainWindow holding one plot.
Both run as fresh processes (cold interpreter, warm disk cache), alternately, several times; the
parent notes the wall clock just before starting each child, and the child prints the wall clock
when the first frame of its window has been painted (the event loop turn after the
first paint event of any of its widgets). For Device Explorer the child also reports when
device discovery (NVML, the CUDA driver, torch and numba; in the background after the first paint) has filled
the Devices panel.

    .venv/bin/python benchmarks/time_to_window.py [--runs 7]

Target: Device Explorer's median at most 1.0 x the bare window's: the window does nothing before
its first paint that a bare one does not (devices, torch, numba and the lessons' checks come after).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

#: Device Explorer's first paint over the bare window's, at most
TARGET = 1.0

# Both children watch for their first painted frame the same way; the bare one exits there, the
# app's child waits on for device discovery.
FIRST_PAINT = r"""
class FirstPaint(QObject):
    seen = False
    def __init__(self, exit_on_paint):
        super().__init__()
        self.exit_on_paint = exit_on_paint
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not self.seen:
            self.seen = True
            QTimer.singleShot(0, self.done)  # runs once the whole first frame is painted
        return False
    def done(self):
        print(f"PAINT {time.time():.6f}", flush=True)
        if self.exit_on_paint:
            os._exit(0)
"""

CHILD_BARE = (
    r"""
import os, sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
import pyqtgraph as pg

"""
    + FIRST_PAINT
    + r"""

app = QApplication(sys.argv[:1])
window = QMainWindow()
window.setWindowTitle("bare")
plot = pg.PlotWidget()
plot.plot([0, 1, 2, 3], [0, 1, 4, 9])
window.setCentralWidget(plot)
window.resize(1280, 800)
watcher = FirstPaint(exit_on_paint=True)
app.installEventFilter(watcher)
window.show()
app.exec()
"""
)

# The same calls as `device-explorer` (cli -> commands.gui -> app + main window), with a
# first-paint watcher installed before the window is shown.
CHILD_EXPLORER = (
    r"""
import os, sys, time
import explorer.cli  # what the console script imports first
from explorer.commands import gui  # what the `gui` handler imports
from PySide6.QtCore import QEvent, QObject, QTimer
from explorer.ui.app import create_application
from explorer.ui.main_window import MainWindow

"""
    + FIRST_PAINT
    + r"""

def filled(discovery):
    if discovery.pending:  # the first rows (CPU, NVML); wait for torch and numba
        return
    print(f"FILLED {time.time():.6f}", flush=True)
    os._exit(0)

app = create_application()
window = MainWindow()
watcher = FirstPaint(exit_on_paint=False)
app.installEventFilter(watcher)
window.context.discovery_changed.connect(filled)
window.show()
QTimer.singleShot(120_000, lambda: os._exit(3))
app.exec()
"""
)


def run_child(code: str, env: dict[str, str]) -> dict[str, float]:
    start = time.time()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
    marks = {}
    for line in proc.stdout.splitlines():
        name, _, value = line.partition(" ")
        if name in ("PAINT", "FILLED"):
            marks[name] = float(value) - start
    if "PAINT" not in marks:
        raise SystemExit(f"child did not paint (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return marks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each (default 7)")
    parser.add_argument(
        "--platform",
        default=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        help="Qt platform plugin (default offscreen; xcb under xvfb-run for real exposure)",
    )
    args = parser.parse_args()
    env = dict(os.environ, QT_QPA_PLATFORM=args.platform)
    # what users have: compiled bytecode kept (with this set, every run would compile every module)
    env.pop("PYTHONDONTWRITEBYTECODE", None)

    # one untimed run of each so both start from a warm disk cache
    run_child(CHILD_BARE, env)
    run_child(CHILD_EXPLORER, env)

    bare: list[float] = []
    explorer: list[float] = []
    filled: list[float] = []
    for i in range(args.runs):
        b = run_child(CHILD_BARE, env)["PAINT"]
        e = run_child(CHILD_EXPLORER, env)
        bare.append(b)
        explorer.append(e["PAINT"])
        if "FILLED" in e:
            filled.append(e["FILLED"])
        print(
            f"run {i + 1}: bare {b * 1000:7.0f} ms   Device Explorer {e['PAINT'] * 1000:7.0f} ms"
            f"   (devices filled in at {e.get('FILLED', float('nan')) * 1000:7.0f} ms)",
            flush=True,
        )

    med_bare = statistics.median(bare)
    med_explorer = statistics.median(explorer)
    ratio = med_explorer / med_bare
    print()
    print(
        f"platform: {args.platform}; python {sys.version.split()[0]}; {os.cpu_count()} CPUs; runs: {args.runs}"
    )
    print(
        f"bare PySide6 + pyqtgraph window, first paint: median {med_bare * 1000:.0f} ms "
        f"(min {min(bare) * 1000:.0f}, max {max(bare) * 1000:.0f})"
    )
    print(
        f"Device Explorer main window, first paint:    median {med_explorer * 1000:.0f} ms "
        f"(min {min(explorer) * 1000:.0f}, max {max(explorer) * 1000:.0f})"
    )
    if filled:
        print(
            f"Device Explorer devices listed (torch, numba answered): median {statistics.median(filled) * 1000:.0f} ms"
        )
    print(f"ratio: {ratio:.2f}x (target <= {TARGET:.2f}x): {'OK' if ratio <= TARGET else 'OVER TARGET'}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} at the end ({os.cpu_count()} CPUs)")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
