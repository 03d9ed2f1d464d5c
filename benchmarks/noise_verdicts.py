"""Noise verdicts quiet vs loaded: is a disturbed CPU matmul point close to its quiet value, or marked?

Runs ``device-explorer bench matmul --device cpu --sizes 256,512 --json`` several times with the
machine as it is ("quiet"), then as many times with BUSY programs spinning at normal priority
(``python -c 'while True: pass'``, the "another program is busy" case), and prints each point's
median, min, verdict and reason, and its ratio to the quiet median of the same size. The issue's
check: loaded, every point is within 2x of quiet or ``"noisy": true``; quiet, at most one point in
ten is marked. The load average is printed before each phase: on a shared machine "quiet" is only
as quiet as the other users let it be, and the verdicts say so.

    python benchmarks/noise_verdicts.py [--rounds 5] [--busy 2] [--sizes 256,512] [--nice N]
        [--separate-session]

``--nice 10`` runs the bench at the priority the window's worker uses; ``--separate-session``
starts the busy programs in their own session (on Linux with autogroup scheduling, a program
started from another terminal competes as its own group).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def bench_once(sizes: str, nice: int) -> list[dict]:
    cmd = [sys.executable, "-m", "explorer", "bench", "matmul", "--device", "cpu", "--sizes", sizes, "--json"]
    if nice:
        cmd = ["nice", "-n", str(nice), *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    points = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not points:
        raise SystemExit(f"bench printed no points: {done.stderr.strip()[-400:]}")
    return points


def start_busy(count: int, separate_session: bool) -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=separate_session)
        for _ in range(count)
    ]


def stop_busy(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


def fmt_s(value: float | None) -> str:
    if value is None:
        return "-"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value * 1e9:.3g} ns"


def load_text() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def show(phase: str, rounds: list[list[dict]], quiet_median: dict[int, float] | None) -> None:
    print(f"\n{phase}")
    print(f"{'round':>5} {'size':>8} {'median':>10} {'min':>10} {'ratio':>6}  verdict")
    for r, points in enumerate(rounds, 1):
        for p in points:
            ratio = ""
            if quiet_median and p.get("median_s") and p["size"] in quiet_median:
                ratio = f"{p['median_s'] / quiet_median[p['size']]:.2f}x"
            verdict = f"NOISY: {p['noise_reason']}" if p.get("noisy") else "ok"
            if p.get("error"):
                verdict = f"ERROR: {p['error']}"
            print(
                f"{r:>5} {p['size_label']:>8} {fmt_s(p.get('median_s')):>10} {fmt_s(p.get('min_s')):>10} "
                f"{ratio:>6}  {verdict}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2, help="busy programs in the loaded phase")
    parser.add_argument("--sizes", default="256,512")
    parser.add_argument("--nice", type=int, default=0, help="run the bench at this niceness")
    parser.add_argument("--separate-session", action="store_true")
    args = parser.parse_args(argv)

    print(f"quiet phase: {load_text()}", flush=True)
    quiet = [bench_once(args.sizes, args.nice) for _ in range(args.rounds)]
    by_size: dict[int, list[float]] = {}
    for points in quiet:
        for p in points:
            if p.get("median_s"):
                by_size.setdefault(p["size"], []).append(p["median_s"])
    quiet_median = {n: statistics.median(v) for n, v in by_size.items()}
    # The fastest sample any quiet run saw: what the machine does undisturbed, even when the
    # "quiet" phase was not (a shared machine); a stricter reference than the quiet median.
    fastest = {
        n: min(p["min_s"] for points in quiet for p in points if p["size"] == n and p.get("min_s"))
        for n in quiet_median
    }

    busy = start_busy(args.busy, args.separate_session)
    try:
        time.sleep(1.0)
        print(f"loaded phase ({args.busy} busy programs at normal priority): {load_text()}", flush=True)
        loaded = [bench_once(args.sizes, args.nice) for _ in range(args.rounds)]
    finally:
        stop_busy(busy)

    show("QUIET", quiet, quiet_median)
    show(f"LOADED ({args.busy} busy programs)", loaded, quiet_median)

    quiet_points = [p for points in quiet for p in points if not p.get("error")]
    loaded_points = [p for points in loaded for p in points if not p.get("error")]
    marked_quiet = sum(bool(p.get("noisy")) for p in quiet_points)
    silent_off = [
        p
        for p in loaded_points
        if not p.get("noisy") and not (0.5 <= p["median_s"] / quiet_median[p["size"]] <= 2.0)
    ]
    silent_vs_fastest = [
        p
        for points in (*quiet, *loaded)
        for p in points
        if not p.get("error") and not p.get("noisy") and p["median_s"] > 2.0 * fastest[p["size"]]
    ]
    quiet_others = [p["others_cpu_share"] for p in quiet_points if p.get("others_cpu_share") is not None]
    marked_loaded = sum(bool(p.get("noisy")) for p in loaded_points)
    print("\nSUMMARY")
    print("quiet medians: " + ", ".join(f"n={n}: {fmt_s(v)}" for n, v in sorted(quiet_median.items())))
    print("fastest quiet samples: " + ", ".join(f"n={n}: {fmt_s(v)}" for n, v in sorted(fastest.items())))
    if quiet_others:
        print(
            f"other programs' CPU use during the quiet phase: median {100 * statistics.median(quiet_others):.0f}% "
            "(the quiet check means something only when this is low)"
        )
    print(f"quiet points marked noisy: {marked_quiet} of {len(quiet_points)} (check: at most 1 in 10)")
    print(f"loaded points marked noisy: {marked_loaded} of {len(loaded_points)}")
    print(
        f"loaded points more than 2x off the quiet median and NOT marked: {len(silent_off)} of "
        f"{len(loaded_points)} (check: 0)"
    )
    print(
        f"points (either phase) more than 2x the fastest quiet sample and NOT marked: "
        f"{len(silent_vs_fastest)} of {len(quiet_points) + len(loaded_points)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
