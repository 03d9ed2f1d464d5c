"""How long "Run it for real" makes a class wait without a GPU.

Target: the N = 100,000 lesson (98 blocks of 1,024 threads) in at most 3 s from the click to the
result, on a 2-core laptop, as the compiled CPU emulation. Measured as the window waits for it:
``run_real`` wall time, which includes starting the child process, importing numpy and numba,
loading the compiled emulation (from numba's on-disk cache after the first run) and copying the
records back. The first run after an install also compiles; it is printed on its own line.
The CUDA simulator, kept for small launches, is timed on the same lesson for comparison.
Prints the median and the spread of several runs, and the machine's load, measured here.

    python benchmarks/realrun_speed.py [--repeats N] [--no-simulator]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch_runs import realrun

LESSON = LaunchConfig(Dim3(98), Dim3(1024), n=100_000)
TARGET_S = 3.0


def _wall(backend: str) -> tuple[float, float]:
    start = time.perf_counter()
    result = realrun.run_real(LESSON, backend=backend, timeout_s=600)
    wall = time.perf_counter() - start
    assert result.mismatches(1024) == 0 and result.untouched == 0, result.summary()
    return wall, result.kernel_s


def _cache_dirs() -> list[Path]:
    here = Path(realrun.__file__).parent / "__pycache__"
    return [p for p in here.glob("realrun_emulation.*") if p.suffix in (".nbi", ".nbc")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-simulator", action="store_true", help="skip the slow simulator timing")
    args = parser.parse_args()
    print(f"CPU cores: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f}")
    for path in _cache_dirs():  # the first run after an install: nothing compiled yet
        path.unlink()
    wall, kernel = _wall("emulation")
    print(
        f"emulation, first run (compiles, fills the cache): {wall:.2f} s wall, {kernel * 1e3:.1f} ms emulating"
    )
    samples = [_wall("emulation") for _ in range(args.repeats)]
    walls = [w for w, _ in samples]
    med = statistics.median(walls)
    print(
        f"emulation, N = 100,000, click to result: median {med:.2f} s (min {min(walls):.2f}, max "
        f"{max(walls):.2f}, {len(walls)} runs); emulating itself: median "
        f"{statistics.median(k for _, k in samples) * 1e3:.1f} ms; target <= {TARGET_S:.0f} s: "
        f"{'met' if med <= TARGET_S else 'MISSED'}"
    )
    if not args.no_simulator:
        wall, kernel = _wall("simulator")
        print(f"simulator, same lesson, one run: {wall:.2f} s wall, {kernel:.2f} s in the kernel")
    print(f"load average after: {os.getloadavg()[0]:.2f} (other programs share these cores)")


if __name__ == "__main__":
    main()
