"""Concurrent writers of one output file: are points ever lost or files ever half-written?

Two parts, each printing counts:

1. ``--trials`` pairs of ``device-explorer bench matmul --csv same.csv`` started together (the
   issue's case: on 0e96256 both said "wrote" and 9 in 10 files were corrupt). Counted: how often
   exactly one run wrote and the other was refused in one line, and whether the file then holds one
   whole run's points.
2. ``--writers`` processes each exporting ``--rounds`` times to one CSV while a reader parses the
   file in a loop. Counted: writes done, writes refused by the lock, and reads that found a partial
   or unparsable file (must be 0: every write replaces the file in one step).

    python benchmarks/concurrent_exports.py [--trials 10] [--writers 6] [--rounds 100] [--naive]

``--naive`` runs part 2 with a plain ``open(path, "w")`` instead, to show the reader does catch
half-written files when there are any.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SIZES = ["16", "32", "64"]


def _pair(folder: Path) -> tuple[int, bool]:
    """Start two runs on one CSV together; (runs that wrote, the file holds one whole run)."""
    from explorer.bench.results import read_csv

    out = folder / "same.csv"
    out.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "explorer", "bench", "matmul", "--repeats", "2", "--sizes", *SIZES]
    runs = [
        subprocess.Popen(
            [*argv, "--csv", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=600), p.stderr.read() if p.stderr else "") for p in runs]
    for p in runs:
        if p.stdout:
            p.stdout.close()
        if p.stderr:
            p.stderr.close()
    wrote = sum(1 for code, err in results if code == 0 and "wrote" in err)
    refused = [err for code, err in results if code == 2]
    assert all("being written by another device-explorer run" in e for e in refused), refused
    try:
        whole = [str(p.size) for p in read_csv(out)] == SIZES
    except (OSError, ValueError):
        whole = False
    return wrote, whole


def _writer(path: str, rounds: int, tag: int, counts, naive: bool) -> None:  # a Manager dict
    from explorer.bench.export import export_csv
    from explorer.bench.results import BenchPoint, points_to_csv
    from explorer.errors import UserError

    points = [
        BenchPoint(
            workload="matmul", variant=f"w{tag}", device="cpu", size=n, size_label=f"n={n}", median_s=1e-3
        )
        for n in range(1, 200)
    ]
    done = refused = 0
    for _ in range(rounds):
        try:
            if naive:  # the control: what a plain open(path, "w") does
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(points_to_csv(points))
            else:
                export_csv(points, path)
            done += 1
        except UserError:
            refused += 1
    counts[tag] = (done, refused)


def _hammer(folder: Path, writers: int, rounds: int, naive: bool) -> tuple[int, int, int, int]:
    from explorer.bench.results import read_csv

    path = folder / "shared.csv"
    with multiprocessing.Manager() as manager:
        counts = manager.dict()
        procs = [
            multiprocessing.Process(target=_writer, args=(str(path), rounds, i, counts, naive))
            for i in range(writers)
        ]
        for p in procs:
            p.start()
        reads = bad = 0
        while any(p.is_alive() for p in procs):
            if path.exists():
                reads += 1
                try:
                    rows = read_csv(path)
                    if len(rows) != 199 or len({r.variant for r in rows}) != 1:
                        bad += 1
                except (OSError, ValueError, TypeError):
                    bad += 1
        for p in procs:
            p.join()
        done = sum(d for d, _r in counts.values())
        refused = sum(r for _d, r in counts.values())
    return done, refused, reads, bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument(
        "--naive",
        action="store_true",
        help="control: writers use a plain open(path, 'w'), to show the reader catches it",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.naive:
            one_wrote = whole = 0
            for _ in range(args.trials):
                wrote, ok = _pair(folder)
                one_wrote += wrote == 1
                whole += ok
            print(
                f"bench --csv, two runs at once, {args.trials} trials: exactly one wrote and the other "
                f"was refused in {one_wrote}; the file held one whole run in {whole}"
            )
        done, refused, reads, bad = _hammer(folder, args.writers, args.rounds, args.naive)
        how = "plain open(path, 'w') writes" if args.naive else "CSV exports"
        print(
            f"{args.writers} processes x {args.rounds} {how} to one file: {done} written, {refused} "
            f"refused by the lock; a reader parsed the file {reads} times, {bad} partial or mixed"
        )
        left = sorted(p.name for p in folder.iterdir() if p.name not in ("same.csv", "shared.csv"))
        print(f"files left beside the outputs: {left or 'none'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
