"""Does the app's CPU matmul measure what the machine can do? Compare it with a bare torch loop.

The app's figure comes through the real engine (BenchRun, worker process, Timer on every
thread); the bare loop is the simplest honest measurement: ``a @ b`` in a loop under
perf_counter, median of the calls. Both run in this one invocation, interleaved size by size, so a
neighbour's load hits both alike; each side keeps its best round. Target: app >= 0.95x bare.

    python benchmarks/matmul_vs_torch.py [--sizes 512 1024 2048] [--rounds 2] [--budget 2] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def bare_torch_gflops(n: int, budget_s: float) -> tuple[float, float, int]:
    import torch

    a, b = torch.rand(n, n), torch.rand(n, n)
    a @ b  # warm-up
    times: list[float] = []
    end = time.perf_counter() + budget_s
    while time.perf_counter() < end or len(times) < 3:
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    flop = 2.0 * n**3
    return flop / statistics.median(times) / 1e9, flop / min(times) / 1e9, len(times)


def app_points(sizes: list[int], budget_s: float, threads: int | None):
    """The app's matmul points, one at a time: the worker measures a size only when asked for it,
    so the bare loop for the same size runs right after it, under the same neighbours' load."""
    from explorer.bench.results import BenchPoint
    from explorer.bench.runner import BenchPlan, BenchRun

    run = BenchRun(BenchPlan("matmul", ["cpu"], sizes=sizes, time_budget_s=budget_s, cpu_threads=threads))
    for event in run.events():
        if isinstance(event, BenchPoint):
            if event.error:
                raise SystemExit(f"app point n={event.size} failed: {event.error}")
            yield event


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[512, 1024, 2048])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per point and side")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads on both sides (default: torch's default, every core)",
    )
    args = parser.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; sizes {args.sizes}; "
        f"{args.rounds} rounds"
    )
    best = {key: {n: 0.0 for n in args.sizes} for key in ("app", "bare", "app_min", "bare_min")}
    for r in range(args.rounds):
        for point in app_points(args.sizes, args.budget, args.threads):
            n = point.size
            bare, bare_fastest, calls = bare_torch_gflops(n, args.budget)
            app_fastest = 2.0 * n**3 / point.min_s / 1e9
            print(
                f"round {r + 1}: n={n:<5} app {point.throughput:7.1f} GFLOP/s (fastest {app_fastest:6.1f}; "
                f"{point.repeats} samples, {point.threads} threads)   bare loop {bare:7.1f} GFLOP/s "
                f"(fastest {bare_fastest:6.1f}; {calls} calls)",
                flush=True,
            )
            for key, value in (
                ("app", point.throughput),
                ("bare", bare),
                ("app_min", app_fastest),
                ("bare_min", bare_fastest),
            ):
                best[key][n] = max(best[key][n], value)
    print(
        "best round of each side; 'median' compares medians, 'fastest' the fastest sample (least disturbed "
        "by other processes)"
    )
    worst = 1e9
    for n in args.sizes:
        ratio = best["app"][n] / best["bare"][n]
        ratio_min = best["app_min"][n] / best["bare_min"][n]
        worst = min(worst, ratio)
        print(
            f"n={n:<5} median: app {best['app'][n]:7.1f}  bare {best['bare'][n]:7.1f}  ratio {ratio:.3f}   "
            f"fastest: app {best['app_min'][n]:7.1f}  bare {best['bare_min'][n]:7.1f}  ratio {ratio_min:.3f}"
        )
    verdict = "OK" if worst >= 0.95 else "BELOW TARGET"
    print(f"lowest median ratio {worst:.3f} (target >= 0.95): {verdict}")
    return 0 if worst >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
