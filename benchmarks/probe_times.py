"""How long the device probes keep a user waiting: the window's list, a catalog launch, a hung driver.

Each figure is a fresh process (cold interpreter, warm disk cache), run several times; the
minimum and the median are printed (on a shared machine the minimum is the least disturbed).

1. The window (offscreen): from the first painted frame to the first rows of the device list
   (the CPU, the GPUs of NVML and the CUDA driver, the catalog) and to the full merge (torch and
   numba answered: on a machine where NVML and the CUDA driver see no GPU, read from their
   installed files, not imported). Target: the full list within 1 s of the first paint.
2. ``device-explorer launch --device 1650 --grid 98 --block 1024`` (a catalog GPU), wall time
   of the whole command. Target: under 0.1 s.
3. ``device-explorer devices``: NVML and the CUDA driver (ctypes), never torch or numba.
   Target: under 0.6 s on a quiet 2-core machine.
4. ``device-explorer devices`` with a stand-in ``pynvml`` whose ``nvmlInit`` sleeps 60 s
   (``tests/devices/hung_nvml`` first on ``PYTHONPATH``).
   Target: NVML's deadline (3 s) plus the rest of discovery, not 60 s.

Beside them, the same interpreter doing nothing (``python -c pass``), timed in the same rounds:
what no code of ours can go below, and a gauge of how fast the machine was while it ran.

    .venv/bin/python benchmarks/probe_times.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HUNG = ROOT / "tests" / "devices" / "hung_nvml"

WINDOW_CHILD = r"""
import os, sys, time
T0 = time.time()
from PySide6.QtCore import QEvent, QObject, QTimer
from explorer.ui.app import create_application
from explorer.ui.main_window import MainWindow

class FirstPaint(QObject):
    seen = False
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and not self.seen:
            self.seen = True
            QTimer.singleShot(0, lambda: print(f"PAINT {time.time():.6f}", flush=True))
        return False

first = []
def changed(discovery):
    if not first:
        first.append(1)
        print(f"FIRST {time.time():.6f} {len(discovery.devices)}", flush=True)
    if not discovery.pending:
        print(f"FULL {time.time():.6f}", flush=True)
        os._exit(0)

app = create_application()
window = MainWindow()
watcher = FirstPaint()
app.installEventFilter(watcher)
window.context.discovery_changed.connect(changed)
window.show()
QTimer.singleShot(120_000, lambda: os._exit(3))
app.exec()
"""


def _console_script() -> list[str]:
    script = Path(sys.executable).with_name("device-explorer")
    if script.exists():
        return [str(script)]
    found = shutil.which("device-explorer")
    return [found] if found else [sys.executable, "-m", "explorer"]


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return took, done


def _window(env: dict[str, str]) -> dict[str, float]:
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", WINDOW_CHILD], capture_output=True, text=True, env=env, timeout=180
    )
    marks = {}
    for line in done.stdout.splitlines():
        name, _, rest = line.partition(" ")
        if name in ("PAINT", "FIRST", "FULL"):
            marks[name] = float(rest.split()[0]) - start
    if not {"PAINT", "FIRST", "FULL"} <= set(marks):
        raise SystemExit(f"window child gave {marks} (exit {done.returncode}):\n{done.stderr}")
    return marks


def _summary(label: str, values: list[float], unit: str = "ms") -> str:
    scale = 1000 if unit == "ms" else 1
    return (
        f"{label}: min {min(values) * scale:.0f} {unit}, median {statistics.median(values) * scale:.0f} {unit}"
        f" ({len(values)} runs)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    env.pop("CUDA_VISIBLE_DEVICES", None)
    # what users have: compiled bytecode kept (with this set, every run would compile every module)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    hung_env = dict(env, PYTHONPATH=os.pathsep.join([str(HUNG), env.get("PYTHONPATH", "")]))
    hung_env["HUNG_NVML_SLEEP_S"] = "60"
    cli = _console_script()
    launch = [*cli, "launch", "--device", "1650", "--grid", "98", "--block", "1024"]

    _window(env)  # warm the disk cache
    _timed(launch, env)
    first_rows, full_merge, paint = [], [], []
    launches, devices_ok, devices_hung, bare = [], [], [], []
    for _ in range(args.runs):
        marks = _window(env)
        paint.append(marks["PAINT"])
        first_rows.append(marks["FIRST"] - marks["PAINT"])
        full_merge.append(marks["FULL"] - marks["PAINT"])
        launches.append(_timed(launch, env)[0])
        bare.append(_timed([sys.executable, "-c", "pass"], env)[0])
        devices_ok.append(_timed([*cli, "devices"], env)[0])
    for _ in range(min(args.runs, 3)):  # each costs the 3 s deadline
        took, done = _timed([*cli, "devices"], hung_env)
        if "NVML did not answer within" not in done.stdout:
            raise SystemExit("the hung stand-in NVML was not reported:\n" + done.stdout)
        devices_hung.append(took)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; load average {load:.1f} at the end")
    print(_summary("window first painted (from process start)", paint))
    print(
        _summary("device list: CPU + NVML + CUDA driver rows after first paint", first_rows)
        + "   target < 1000 ms"
    )
    print(_summary("device list: torch/numba merged after first paint", full_merge) + "   target < 1000 ms")
    print(_summary("launch --device 1650 --grid 98 --block 1024", launches) + "   target < 100 ms")
    print(_summary("bare interpreter (python -c pass), for scale", bare))
    print(_summary("devices (healthy or absent driver)", devices_ok) + "   target < 600 ms")
    print(_summary("devices with nvmlInit asleep for 60 s", devices_hung, "s"))
    ok = max(full_merge) < 1.0 and min(launches) < 0.1 and min(devices_ok) < 0.6
    print("targets:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
