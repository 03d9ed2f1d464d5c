"""Run every workload's GPU variant at small sizes on a real GPU and print one line per point.

For the machine that has a GPU (this project's development machine has none): it exercises the
torch CUDA and numba code paths through the real engine (worker process, synchronized timing,
result checks against numpy). two_gpus is expected to report "needs two GPUs" on a one-GPU box.
Then the strided-copy sweep, stride 1 to 32, measured beside the coalescing model's estimate
(sector efficiency x the memory bandwidth) with their ratio, so the first session with a GPU
sees how far the model is from the hardware (``--no-sweep`` skips it).

    python benchmarks/gpu_check.py [--device cuda:0] [--budget 0.5] [--big] [--no-sweep]
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
    "strided_copy": [1, 32],
    "shared_transpose": [1024, 4096],
    "branch": [1 << 22],
    "utilization_trap": [1, 512],
}
SWEEP_STRIDES = list(range(1, 33))
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
    parser.add_argument("--no-sweep", action="store_true", help="skip the strided-copy sweep vs the model")
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
    if not args.no_sweep:
        failures += stride_sweep(args.device, args.budget)
    print(f"# {failures} unexpected error row(s)")
    return 1 if failures else 0


def stride_sweep(device: str, budget_s: float) -> int:
    """GB/s measured vs the coalescing model's estimate for every stride 1..32; the error rows."""
    from explorer.bench.runner import BenchPlan, BenchRun
    from explorer.memory.coalescing import CPU_LINE_BYTES, SECTOR_BYTES, strided_copy_model

    print("# strided copy, dst[i] = src[i * stride], float32: measured vs model (not a measurement)")
    print(f"{'stride':>6} {'measured GB/s':>14} {'model GB/s':>11} {'ratio':>6}  model efficiency")
    run = BenchRun(
        BenchPlan("strided_copy", [device], sizes=SWEEP_STRIDES, time_budget_s=budget_s, point_timeout_s=300)
    )
    errors = 0
    for p in run.run_all():
        if p.error:
            errors += 1
            print(f"{p.size:>6} ERROR: {p.error}", flush=True)
            continue
        model = f"{p.model_estimate:11.1f}" if p.model_estimate else f"{'-':>11}"
        ratio = (
            f"{p.throughput / p.model_estimate:6.2f}" if p.model_estimate and p.throughput else f"{'-':>6}"
        )
        granule = CPU_LINE_BYTES if device == "cpu" else SECTOR_BYTES
        used = f"{strided_copy_model(p.size, granule_bytes=granule).efficiency:.1%}"
        noisy = "  (disturbed)" if p.noisy else ""
        print(f"{p.size:>6} {p.throughput or 0:14.1f} {model} {ratio}  {used}{noisy}", flush=True)
    return errors


if __name__ == "__main__":
    sys.exit(main())
