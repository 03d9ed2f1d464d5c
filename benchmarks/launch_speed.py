"""How fast the launch core answers what the visualizer asks on every slider move.

Targets: the three occupancy sweeps together under 50 ms; planning the largest
grid CUDA allows, (2^31-1, 65535, 65535), plus one thread lookup in it under 10 ms.
Prints the median of several runs (and the spread), measured here, never assumed.

    python benchmarks/launch_speed.py [--repeats N] [--cc X.Y]
"""

from __future__ import annotations

import argparse
import statistics
import time

from explorer.devices.limits import limits_for_cc, parse_cc
from explorer.devices.model import CatalogGpu
from explorer.launch.config import parse_launch
from explorer.launch.schedule import plan_launch
from explorer.launch.sweep import sweep_block_size, sweep_registers, sweep_shared_memory


def _time(fn, repeats: int) -> list[float]:
    fn()  # warm-up: first call reads the limits table
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def _report(label: str, samples: list[float], target_s: float) -> bool:
    med = statistics.median(samples)
    ok = med < target_s
    print(
        f"{label}: median {med * 1e3:.3f} ms (min {min(samples) * 1e3:.3f}, max {max(samples) * 1e3:.3f}, "
        f"{len(samples)} runs); target < {target_s * 1e3:.0f} ms: {'met' if ok else 'MISSED'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument(
        "--cc", default="9.0", help="compute capability (9.0 has the most shared-memory steps)"
    )
    args = parser.parse_args()
    limits = limits_for_cc(parse_cc(args.cc))

    def sweeps():
        a = sweep_block_size(limits, 32, 4096, 256)
        b = sweep_registers(limits, 256, 4096, 32)
        c = sweep_shared_memory(limits, 256, 32, 4096)
        return len(a.xs) + len(b.xs) + len(c.xs)

    points = sweeps()
    device = CatalogGpu(name=f"CC {limits.cc_string} GPU", compute_capability=limits.cc, sm_count=132)

    def extreme():
        plan = plan_launch(parse_launch("2147483647,65535,65535", "1024"), device, limits)
        info = plan.thread(plan.total_blocks - 1, 1023)
        return info.global_linear

    print(
        f"compute capability {limits.cc_string} ({limits.arch_name}); {points} occupancy points per sweep set"
    )
    ok = _report("three sweeps (block size, registers, shared memory)", _time(sweeps, args.repeats), 0.050)
    ok &= _report(
        "extreme grid (2^31-1, 65535, 65535): plan + thread lookup", _time(extreme, args.repeats), 0.010
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
