"""Run every workload's GPU variant at small sizes on a real GPU and print one line per point.

For the machine that has a GPU (this project's development machine has none): it exercises the
torch CUDA and numba code paths through the real engine (worker process, synchronized timing,
result checks against numpy). two_gpus is expected to report "needs two GPUs" on a one-GPU box.

    python benchmarks/gpu_check.py [--device cuda:0] [--budget 0.5] [--big]
"""

from __future__ import annotations

import argparse
import sys
import time

SMALL = {
    "matmul": [64, 1024, 4096],
    "vector_add": [1000, 1_000_000],
    "matvec": [100_000],
    "copies": [4096, 1 << 20, 64 << 20],
    "small_vs_big": [1000],
    "cnn_step": [16, 256],
    "timing_lesson": [2048],
    "two_gpus": [1024],
}
BIG = {
    "matmul": [8192],
    "copies": [1 << 30],
    "cnn_step": [1024],
    "timing_lesson": [8192],
    "vector_add": [100_000_000],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per point")
    parser.add_argument("--big", action="store_true", help="also the largest default sizes")
    parser.add_argument("--workloads", nargs="+", default=list(SMALL))
    args = parser.parse_args(argv)

    import torch

    from explorer.bench.results import format_point
    from explorer.bench.runner import BenchPlan, BenchRun

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        print("no CUDA device visible to torch; this script needs a GPU", file=sys.stderr)
        return 2
    print(f"# {count} GPU(s): " + ", ".join(torch.cuda.get_device_name(i) for i in range(count)))

    failures = 0
    for name in args.workloads:
        sizes = SMALL[name] + (BIG.get(name, []) if args.big else [])
        t0 = time.monotonic()
        run = BenchRun(
            BenchPlan(name, [args.device], sizes=sizes, time_budget_s=args.budget, point_timeout_s=300)
        )
        for p in run.run_all():
            expected = name == "two_gpus" and p.error and p.error.startswith("needs two GPUs")
            failures += bool(p.error) and not expected
            print(format_point(p), flush=True)
        print(f"# {name}: {time.monotonic() - t0:.1f} s, {run.workers_started} worker(s)", flush=True)
    print(f"# {failures} unexpected error row(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
