"""The app's CPU FP32 peak beside a native FMA loop's rate, with the measured ceilings.

Compiles a C loop of independent fused multiply-adds (gcc -O3 -march=native, GCC vector
extensions as wide as the ISA allows, 12 accumulators so the FMA pipes never wait on latency),
runs it on every core at once (each thread keeps its fastest of many 2 ms samples, as the app's
clock measurement does, so other programs' time slices do not count) and prints its GFLOP/s beside the app's theoretical peak (measured
clock x physical cores x FLOP/cycle), the measured clock, the measured sgemm ceiling and the
triad bandwidth, and the ratio (target: the peak within -15%/+25% of the FMA loop). Then runs the
app's own matmul benchmark and says whether any point exceeds 100% of the peak. Prints the load
average before and after: other programs running at the same time lower every measured figure.

    python benchmarks/peak_vs_fma.py [--seconds 0.5] [--repeats 5] [--no-matmul]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FMA_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <pthread.h>
#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
typedef float vf __attribute__((vector_size(LANES * 4)));
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static long iters, samples; static double secs[4096]; static float sink[4096];
#define ACC(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
static void *run(void *arg) {
  long id = (long)arg; vf b, c;
  for (int i = 0; i < LANES; i++) { b[i] = 0.999999f; c[i] = 1e-6f; }
#define DECL(k) vf a##k; for (int i = 0; i < LANES; i++) a##k[i] = (float)(k * LANES + i + id);
  ACC(DECL)
  double best = 1e30;
  for (long r = 0; r < samples; r++) {
    double t = now();
    for (long i = 0; i < iters; i++) {
#define STEP(k) a##k = a##k * b + c;
      ACC(STEP)
      /* every accumulator is opaque to the optimiser: no chain can be merged, hoisted or dropped */
      __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                            "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
    }
    t = now() - t;
    if (t < best) best = t;
  }
  secs[id] = best;
  vf s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  float tot = 0; for (int i = 0; i < LANES; i++) tot += s[i];
  sink[id] = tot; return NULL;
}
int main(int argc, char **argv) {
  int nt = atoi(argv[1]); iters = atol(argv[2]); samples = argc > 3 ? atol(argv[3]) : 1; pthread_t th[4096];
  for (long i = 0; i < nt; i++) pthread_create(&th[i], 0, run, (void *)i);
  for (int i = 0; i < nt; i++) pthread_join(th[i], 0);
  double flop = (double)iters * 12 * LANES * 2, g = 0, slowest = 0;
  for (int i = 0; i < nt; i++) { g += flop / secs[i] / 1e9; if (secs[i] > slowest) slowest = secs[i]; }
  printf("%d %d %.3f %.6f\n", nt, LANES, g, slowest);
  return 0;
}
"""


def load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
        return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} CPUs"
    except OSError:
        return "load average not available"


SAMPLE_S = 0.002


def fma_loop_gflops(threads: int, seconds: float, repeats: int) -> tuple[float, int] | str:
    """(best GFLOP/s of ``repeats`` runs on ``threads`` threads, FP32 lanes) or why it could not run.
    A run is ``seconds`` long, in samples of ``SAMPLE_S``; each thread's rate is its fastest sample."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return "gcc not found: the native FMA loop is skipped (install gcc to compare)"
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "fma.c", Path(tmp) / "fma"
        src.write_text(FMA_C, encoding="utf-8")
        build = subprocess.run(
            [gcc, "-O3", "-march=native", "-pthread", str(src), "-o", str(exe)],
            capture_output=True,
            text=True,
        )
        if build.returncode != 0:
            return f"gcc could not build the FMA loop: {build.stderr.strip()[:300]}"
        iters = 1_000_000
        _, _, _, took = subprocess.run(
            [str(exe), "1", str(iters)], capture_output=True, text=True
        ).stdout.split()
        iters = max(1000, int(iters * SAMPLE_S / max(float(took), 1e-6)))
        samples = max(1, int(seconds / SAMPLE_S))
        best, lanes = 0.0, 0
        for _ in range(repeats):
            cmd = [str(exe), str(threads), str(iters), str(samples)]
            out = subprocess.run(cmd, capture_output=True, text=True)
            _, lanes_text, gflops, _ = out.stdout.split()
            best, lanes = max(best, float(gflops)), int(lanes_text)
        return best, lanes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one FMA run")
    parser.add_argument("--repeats", type=int, default=5, help="FMA runs; the fastest is kept")
    parser.add_argument("--no-matmul", action="store_true", help="skip the app's matmul benchmark")
    args = parser.parse_args(argv)

    from explorer.bench import peaks

    print(f"before: {load()}")
    threads = os.cpu_count() or 1
    fma = fma_loop_gflops(threads, args.seconds, args.repeats)
    print(f"after the FMA loop: {load()}")
    print("measuring the app's clock and ceilings (as `device-explorer devices --measure` does)...")
    peaks.ensure_measured("cpu", force=True)
    roof = peaks.worker_roof("cpu")
    print(f"after measuring: {load()}")
    peak = peaks.peak_ceiling(roof, "compute")
    sgemm = next((c for c in roof.ceilings if c.name == "sgemm"), None)
    triad = roof.main_memory()
    print()
    print(f"CPU: {roof.name}, {threads} logical CPUs")
    if roof.clock_ghz:
        print(f"measured clock:        {roof.clock_ghz:.3f} GHz ({roof.clock_method})")
    if peak is not None:
        print(f"app's FP32 peak:       {peak.value:.1f} GFLOP/s ({peak.basis})")
    if sgemm is not None:
        print(f"measured sgemm:        {sgemm.value:.1f} GFLOP/s ({sgemm.basis})")
    if triad is not None:
        print(f"measured DRAM:         {triad.value:.2f} GB/s ({triad.basis})")
    print(f"measurement note:      {roof.note}")
    if isinstance(fma, str):
        print(fma)
    else:
        gflops, lanes = fma
        print(
            f"native FMA loop:       {gflops:.1f} GFLOP/s ({threads} threads, {lanes} FP32 lanes, best of {args.repeats})"
        )
        if peak is not None:
            ratio = peak.value / gflops
            verdict = "within" if 0.85 <= ratio <= 1.25 else "OUTSIDE"
            print(f"peak / FMA loop:       {ratio:.3f} ({verdict} the -15%/+25% target)")
    if not args.no_matmul and peak is not None:
        from explorer.bench.runner import BenchPlan, BenchRun

        print()
        print("the app's matmul benchmark against that peak:")
        points = BenchRun(
            BenchPlan("matmul", ["cpu"], sizes=[256, 512, 1024, 2048], measure_roof=True)
        ).run_all()
        over = 0
        for p in points:
            share = (p.throughput or 0) / p.peak if p.peak else 0
            over += share > 1
            print(f"  n={p.size:<5} {p.throughput or 0:8.1f} GFLOP/s  {100 * share:5.1f}% of peak")
        print(f"points above 100% of the peak: {over} of {len(points)}")
        print(f"after the matmul benchmark: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
