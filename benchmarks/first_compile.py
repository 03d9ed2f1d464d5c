"""How long the README's dispatch example takes the first time (numba compiles the dispatch loop)
and the times after (numba loads it from its on-disk cache), each a fresh process.

The first run uses an empty ``NUMBA_CACHE_DIR`` made for it, so it is a new user's first run
whatever this machine has cached; later runs use that same folder. Prints each run's wall time
and CPU time, and whether the run announced its compile on stderr (it must, the first time only).

    .venv/bin/python benchmarks/first_compile.py [--later 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: the README's first dispatch example, exactly
EXAMPLE = ["dispatch", "--device", "1650", "--grid", "98", "--block", "1024", "--durations", "rows:1,1,1,8"]
NOTICE = "compiling the dispatch loop once"


def run_once(cache: Path) -> tuple[float, float, bool]:
    """(wall s, CPU s of the child, whether it printed the compile notice)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", *EXAMPLE], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(
            f"first_compile.py: the example failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, NOTICE in proc.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--later", type=int, default=3, help="runs after the first (default 3)")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"device-explorer {' '.join(EXAMPLE)}")
    print(f"machine: {os.cpu_count()} logical CPUs, load average {load:.2f} at the start")
    cache = Path(tempfile.mkdtemp(prefix="dx-first-compile-"))
    try:
        wall, cpu, said = run_once(cache)
        print(
            f"first run (empty cache): {wall:5.1f} s wall, {cpu:5.1f} s CPU, notice {'shown' if said else 'MISSING'}"
        )
        walls = []
        for i in range(args.later):
            wall, cpu, said = run_once(cache)
            walls.append(wall)
            print(
                f"later run {i + 1}:              {wall:5.1f} s wall, {cpu:5.1f} s CPU, "
                f"notice {'SHOWN (should not be)' if said else 'none'}"
            )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if walls:
        print(f"later runs: median {sorted(walls)[len(walls) // 2]:.1f} s wall")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
