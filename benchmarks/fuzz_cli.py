"""10,000 fuzzed CLI calls across every sub-command and every file the app reads: how many ended in a
traceback, in an exit status outside 0/1/2, or in a refusal longer than one line (target: 0 each).

Each call runs ``cli.main`` in this process (so the run takes minutes, not hours), with arguments
and files from tests/fuzzing.py, seeded (a failure prints its seed and call number, and
``--seed S --only N`` replays it):

* about 85 %: a sub-command's argument list with hostile values, checked up to the last step
  before the work (``check_only``), and run whole when it is pure maths and passed;
* about 10 %: a file read through the command that reads it: ``gui --lesson``,
  ``screenshot --lesson`` and ``bench --resume`` on a planted lesson or results file;
* about 5 %: ``devices`` / ``devices --json`` run whole over a planted ceilings file, and
  ``--screenshots`` (default 50) whole renders of a lesson's Benchmarks step, which opens the page
  that reads the last results and the ceilings;
* before about a third of the calls, every file is planted afresh: settings, last results,
  ceilings, remotes, a lesson and three results files (damaged, hostile values, a pipe, a folder,
  a link to /dev/zero, a file over its size limit). Settings and remotes are read only by the
  window: they are read through the loaders the window calls, counted apart.

Run:  QT_QPA_PLATFORM=offscreen python benchmarks/fuzz_cli.py [--calls 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STATE_FILES = {
    "settings": "settings.json",
    "results": "last-bench-results.json",
    "ceilings": "measured-ceilings.json",
    "remotes": "remotes.json",
}
WORK_FILES = {
    "lesson": "lesson.json",
    "resume-json": "run.json",
    "resume-csv": "run.csv",
    "resume-lines": "run.jsonl",
}


def _file_for(rng: random.Random, option: str, value: str) -> str:
    """The planted file in place of the value of ``--lesson`` and ``--resume``."""
    if option == "--lesson":
        return "lesson.json"
    if option == "--resume":
        return rng.choice(["run.json", "run.csv", "run.jsonl"])
    return value


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--screenshots", type=int, default=50, help="whole renders among the calls")
    parser.add_argument("--only", type=int, default=None, help="replay one call number")
    args = parser.parse_args()

    from tests import fuzzing

    work = Path(tempfile.mkdtemp(prefix="dx-fuzz-"))
    home = work / "home"
    home.mkdir()
    os.environ["DEVICE_EXPLORER_HOME"] = str(home)
    os.chdir(work)
    good = fuzzing.good_documents()
    limits = fuzzing.size_limits()

    def plant_all(rng: random.Random) -> None:
        for kind, name in STATE_FILES.items():
            fuzzing.plant(home / name, fuzzing.file_content(rng, kind, good), limits[kind])
        for kind, name in WORK_FILES.items():
            fuzzing.plant(work / name, fuzzing.file_content(rng, kind, good), limits[kind])

    screenshot_every = max(1, args.calls // max(1, args.screenshots)) if args.screenshots else 0
    codes: collections.Counter[str] = collections.Counter()
    per_command: collections.Counter[str] = collections.Counter()
    problems: list[tuple[int, list[str], str]] = []
    calls = loader_reads = 0
    started = time.monotonic()

    def run(number: int, argv: list[str], check_only: bool) -> fuzzing.Outcome:
        nonlocal calls
        outcome = fuzzing.call(argv, check_only)
        calls += 1
        codes["traceback" if outcome.escaped else str(outcome.code)] += 1
        per_command[argv[0] if argv and not argv[0].startswith("-") else "(none)"] += 1
        if outcome.problem:
            problems.append((number, argv, outcome.problem))
        return outcome

    numbers = [args.only] if args.only is not None else range(args.calls)
    for number in numbers:
        if calls >= args.calls and args.only is None:
            break
        rng = random.Random(args.seed * 1_000_003 + number)
        if number == 0 or rng.random() < 0.33:
            plant_all(rng)
            # the window's own reads of what it keeps: settings and remotes have no CLI reader
            from explorer.prefs import Prefs, load_with_notice, save
            from explorer.remote.saved import load_remotes

            for load in (load_with_notice, lambda: save(Prefs()), load_remotes):
                problem = fuzzing.never_raises(load)
                loader_reads += 1
                if problem:
                    problems.append((number, ["(loader)"], problem))
        roll = rng.random()
        if screenshot_every and number % screenshot_every == screenshot_every - 1:
            run(number, ["screenshot", "--lesson", "05", "--step", "2", "--out", "shot.png"], False)
        elif roll < 0.05:
            run(number, rng.choice([["devices"], ["devices", "--json"], ["devices", "--catalog"]]), False)
        elif roll < 0.15:
            argv = rng.choice(
                [
                    ["gui", "--lesson", "lesson.json"],
                    ["screenshot", "--lesson", "lesson.json", "--out", "x.png"],
                    ["bench", "matmul", "--resume", rng.choice(["run.json", "run.csv", "run.jsonl"])],
                ]
            )
            run(number, argv, True)
        else:
            command = rng.choice(fuzzing.ALL_COMMANDS)
            argv = fuzzing.argv_for(rng, command)
            if rng.random() < 0.5:  # let the files be read where the command reads one
                argv = [_file_for(rng, before, a) for before, a in zip(["", *argv[:-1]], argv, strict=True)]
            outcome = run(number, argv, True)
            if command in fuzzing.PURE and outcome.code == 0 and "-h" not in argv and "--help" not in argv:
                run(number, argv, False)
        if number % 500 == 0 and args.only is None:
            print(
                f"  {calls:,} calls, {len(problems)} problems, {time.monotonic() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    wall = time.monotonic() - started
    tracebacks = sum(1 for _n, _a, p in problems if "exception escaped" in p or "traceback" in p)
    outside = sum(v for k, v in codes.items() if k not in ("0", "1", "2"))
    not_one_line = sum(1 for _n, _a, p in problems if p.startswith("a refusal"))
    print(
        f"fuzzed CLI calls: {calls:,} in {wall:.0f} s (seed {args.seed}; {loader_reads:,} loader reads of settings and remotes beside them)"
    )
    print("by sub-command: " + ", ".join(f"{k} {v:,}" for k, v in sorted(per_command.items())))
    print("exit statuses: " + ", ".join(f"{k}: {v:,}" for k, v in sorted(codes.items())))
    print(f"tracebacks: {tracebacks}")
    print(f"exits outside 0/1/2: {outside}")
    print(f"refusals not in one line: {not_one_line}")
    for number, argv, problem in problems[:20]:
        print(f"  call {number} (--seed {args.seed} --only {number}): {argv!r:.300}\n    {problem[:1500]}")
    return 1 if problems else 0


def _main_in_a_folder_of_its_own() -> int:
    """``main``, with the planted files removed afterwards (pipes, sparse files over a limit)."""
    import shutil

    before = set(Path(tempfile.gettempdir()).glob("dx-fuzz-*"))
    try:
        return main()
    finally:
        os.chdir(ROOT)
        for folder in set(Path(tempfile.gettempdir()).glob("dx-fuzz-*")) - before:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(_main_in_a_folder_of_its_own())
