"""Do the CPU's roofs hold still? Measures them several times in one run, as the app does, and prints:

1. each memory level, the FP32 FMA ceiling, the sgemm and the clock, once per measurement, with
   the spread (highest over lowest) and whether the app would call a remeasure steady (every
   figure within 10% of the first measurement's);
2. DRAM against the app's own long read-only and triad streams over DRAM (a DRAM roof above the
   fastest stream is impossible: the app refuses it);
3. the measured FP32 ceiling against the theoretical peak (measured clock x physical cores x
   FLOP per cycle), and the sentence the app says where they differ by more than a quarter.

    python benchmarks/roofs_check.py [--runs 3]

Nothing is stored: each measurement is ``explorer.bench.ceilings.measure_cpu_roof``, the one the
Devices page's "Measure again" and ``devices --measure`` run. It keeps both cores busy for about
15 s a run on a quiet 2-core machine; other programs lower every figure, so the load average
(as ``uptime`` reports it) is printed beside each run. Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

LEVELS = ("L1", "L2", "L3", "DRAM")


def load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
        return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} CPUs"
    except OSError:
        return "load average unknown"


def spread(values: list[float]) -> float:
    return max(values) / min(values) - 1.0 if values and min(values) > 0 else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="measurements in this run (at least 2)")
    args = parser.parse_args(argv)
    runs = max(2, args.runs)

    from explorer.bench import ceilings
    from explorer.devices.cpu import core_flops_per_cycle, probe_cpu
    from explorer.devices.isa import cpu_fp32_peak_gflops
    from explorer.devices.roofs import fingerprint
    from explorer.roofs.model import STEADY_TOLERANCE, Ceiling, Roof, unsteady_changes
    from explorer.roofs.plateaus import STREAM_TOLERANCE
    from explorer.roofs.store import MeasuredRoof
    from explorer.roofs.texts import peak_gap_text

    cpu = probe_cpu()
    fp = fingerprint(cpu) or "cpu"
    per_cycle = core_flops_per_cycle(cpu)
    print(f"CPU: {cpu.name}; {cpu.physical_cores} cores / {cpu.logical_cores} threads; {per_cycle.basis}")
    print(f"caches: {', '.join(f'{c.level} {c.size_bytes >> 10} KiB x {c.instances}' for c in cpu.caches)}")
    print(f"before: {load()}\n")

    measured = []
    for run in range(runs):
        started = time.perf_counter()
        roof = ceilings.measure_cpu_roof(cpu, fp)
        took = time.perf_counter() - started
        quiet = "quiet" if roof.quiet else f"BUSY: {roof.busy_reason}"
        print(f"run {run + 1}: {took:.1f} s, {quiet}; after it: {load()}")
        measured.append(roof)

    checks: list[tuple[str, bool]] = []

    def check(name: str, ok: bool) -> None:
        checks.append((name, ok))
        print(f"  [{'pass' if ok else 'FAIL'}] {name}")

    def figure(roof: MeasuredRoof, quantity: str, level: str = "", name: str = "") -> Ceiling | None:
        return next(
            (
                c
                for c in roof.ceilings
                if c.quantity == quantity and c.level == level and (not name or c.name == name)
            ),
            None,
        )

    print(f"\n1. each figure, {runs} measurements (spread = highest / lowest - 1)")
    print(f"  {'':<10}" + "".join(f"{'run ' + str(i + 1):>12}" for i in range(runs)) + f"{'spread':>9}")
    rows: list[tuple[str, str, str, str]] = [
        ("FP32 FMA", "compute", "", "FP32 FMA"),
        ("sgemm", "compute", "", "sgemm"),
        *((level, "memory", level, "") for level in LEVELS),
    ]
    for label, quantity, level, name in rows:
        values = [figure(r, quantity, level, name) for r in measured]
        if not all(values):
            print(
                f"  {label:<10}"
                + "".join(f"{(v.value if v else 0):>12,.1f}" for v in values)
                + "   (missing)"
            )
            continue
        numbers = [v.value for v in values if v is not None]
        unit = values[0].unit if values[0] else ""
        print(
            f"  {label:<10}" + "".join(f"{n:>12,.1f}" for n in numbers) + f"{spread(numbers):>9.1%}  {unit}"
        )
    clocks = [r.clock_ghz or 0.0 for r in measured]
    print(f"  {'clock':<10}" + "".join(f"{c:>12.3f}" for c in clocks) + f"{spread(clocks):>9.1%}  GHz")
    for index, roof in enumerate(measured[1:], 2):
        moved = unsteady_changes(measured[0].ceilings, roof.ceilings)
        said = f"run {index} against run 1: every figure within {STEADY_TOLERANCE:.0%}" + (
            f" (moved: {'; '.join(moved)})" if moved else ""
        )
        if measured[0].quiet and roof.quiet:
            check(said, not moved)
        else:  # the app compares quiet measurements only: a busy one never replaces a quiet one
            print(f"  [not judged: not both quiet] {said}")
    print("\n2. DRAM against the app's own streams over DRAM (GB/s)")
    for index, roof in enumerate(measured, 1):
        dram = figure(roof, "memory", "DRAM")
        streams = roof.streams_gbps
        fastest = max(streams.values(), default=0.0)
        if dram is None or not fastest:
            check(f"run {index}: DRAM and the streams measured", False)
            continue
        size = f"{(roof.streams_bytes or 0) / 2**20:,.0f} MiB"
        said = ", ".join(f"{k} {v:,.2f}" for k, v in streams.items())
        print(
            f"  run {index}: DRAM {dram.value:,.2f} over {(dram.ws_lo_bytes or 0) / 2**20:,.0f} to "
            f"{(dram.ws_hi_bytes or 0) / 2**20:,.0f} MiB; streams over {size}: {said}"
        )
        check(
            f"run {index}: DRAM {dram.value:,.2f} is {dram.value / fastest:.3f}x the fastest stream "
            f"(at most {STREAM_TOLERANCE:.2f})",
            dram.value <= fastest * STREAM_TOLERANCE,
        )

    print("\n3. the measured FP32 ceiling against the theoretical peak (GFLOP/s)")
    for index, roof in enumerate(measured, 1):
        fma = figure(roof, "compute", "", "FP32 FMA")
        if fma is None or not roof.clock_ghz or not cpu.physical_cores:
            check(f"run {index}: the FMA ceiling and the clock measured", False)
            continue
        peak = cpu_fp32_peak_gflops(roof.clock_ghz, cpu.physical_cores, per_cycle)
        print(
            f"  run {index}: FMA {fma.value:,.1f}; theoretical {peak:,.1f} (measured clock {roof.clock_ghz:.3f} GHz "
            f"x {cpu.physical_cores} cores x {per_cycle.flop_per_cycle} FLOP/cycle): {fma.value / peak:.1%}"
        )
    last = measured[-1]
    shown = Roof(
        "cpu",
        cpu.name,
        [
            Ceiling(
                "compute",
                cpu_fp32_peak_gflops(last.clock_ghz or 0.0, cpu.physical_cores or 0, per_cycle),
                "theoretical",
                "FP32 peak",
                "",
            ),
            *last.usable_ceilings(),
        ],
    )
    gap = peak_gap_text(shown)
    print(f"  the app says: {gap or 'they agree within 25%'}")
    print(f"\nafter: {load()}")
    failed = [name for name, ok in checks if not ok]
    print(f"{len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
