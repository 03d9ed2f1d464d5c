"""The GPU's curves for the lessons, and the ``gpu``-marked test suite.

``check_lessons`` measures every lesson step that takes a GPU recording
(``explorer.lessons.recording``) on this machine, writes ``lesson-recordings.json`` into the output
folder (how the recordings travel back from a GPU machine that keeps nothing) and, unless told
not to, into the checkout's lesson files. ``check_gpu_tests`` runs ``pytest -m gpu tests/gpu``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.acceptance.context import CheckContext
from explorer.acceptance.judge import count_figure, record_figure
from explorer.acceptance.records import CheckResult, Status
from explorer.atomicwrite import write_text_atomic

if TYPE_CHECKING:
    from explorer.bench.results import BenchPoint
    from explorer.lessons.recording import RecordingTarget

RECORDINGS_FILE = "lesson-recordings.json"
POINT_TIMEOUT_S = 120.0

Measure = Callable[["RecordingTarget", float], "list[BenchPoint]"]
#: how many points a step's recording must hold: every point its plan has
Planned = Callable[["RecordingTarget"], int]


def measure_target(target: RecordingTarget, budget_s: float) -> list[BenchPoint]:
    """The step's workload on the step's devices, at its sizes (each device's defaults where the
    step names none), through the app's runner."""
    from explorer.bench.runner import BenchPlan, BenchRun

    plan = BenchPlan(
        target.workload,
        list(target.devices),
        sizes=list(target.sizes) if target.sizes is not None else None,
        time_budget_s=budget_s,
        point_timeout_s=POINT_TIMEOUT_S,
    )
    return BenchRun(plan).run_all()


def planned_points(target: RecordingTarget) -> int:
    """How many points the step's plan has (each device, size and variant): a recording with fewer
    measured is partial."""
    from explorer.bench.runner import BenchPlan, plan_points

    sizes = list(target.sizes) if target.sizes is not None else None
    return len(plan_points(BenchPlan(target.workload, list(target.devices), sizes=sizes)))


def missing_words(points: Sequence[BenchPoint], planned: int) -> str:
    """What a step's recording lacks, in one line ("5 of 25 points measured; n=4096 on cuda:0: out
    of time; ..."), "" where every planned point was measured (no error row, a time each)."""
    measured = [p for p in points if p.error is None and p.median_s is not None]
    if len(measured) >= planned and len(measured) == len(points):
        return ""
    failed = [p for p in points if p not in measured]
    why = "; ".join(f"{p.size_label} on {p.device}: {p.error or 'not timed'}" for p in failed[:2])
    more = f" and {len(failed) - 2} more" if len(failed) > 2 else ""
    unplanned = planned - len(points)
    lost = f"; {unplanned} planned point(s) never came back" if unplanned > 0 else ""
    text = (
        f"{len(measured)} of {max(planned, len(points))} points measured"
        + (f"; {why}{more}" if why else "")
        + lost
    )
    return " ".join(text.split())[:400]


def device_words(points: Sequence[BenchPoint]) -> str:
    """Whose results, in words: the GPU's name and driver, and the host CPU where it ran too."""
    from explorer.bench import peaks

    gpus = sorted({p.device for p in points if p.device != "cpu"})
    words = []
    for key in gpus:
        rec = peaks.device_record(key)
        name = getattr(rec, "name", None) or next(
            (str(p.extra.get("device_name")) for p in points if p.device == key), key
        )
        driver = getattr(rec, "driver_version", None)
        words.append(f"{name} ({key}{', driver ' + driver if driver else ''})")
    if any(p.device == "cpu" for p in points):
        cpu = peaks.device_record("cpu")
        cores = getattr(cpu, "physical_cores", None)
        words.append(
            f"its host's CPU, {getattr(cpu, 'name', 'CPU')}" + (f" ({cores} cores)" if cores else "")
        )
    return " with ".join(words) if len(words) == 2 else ", ".join(words)


def check_lessons(
    ctx: CheckContext,
    measure: Measure = measure_target,
    lessons: Sequence[Path] | None = None,
    planned: Planned = planned_points,
) -> CheckResult:
    """``lessons``: the lesson files to record into (the built-in ones by default; tests pass copies).
    A step whose points were not all measured (``planned``: how many its plan has) fails the check
    and is recorded nowhere, neither in the bundle nor in a lesson file: a lesson shows a whole
    curve or its old one, never 5 of 25 points."""
    from explorer import __version__
    from explorer.lessons.builtin import builtin_paths
    from explorer.lessons.recording import (
        check_recording,
        make_recorded,
        recording_targets,
        recordings_bundle,
        write_recording,
    )

    targets = recording_targets(builtin_paths() if lessons is None else lessons)
    date = datetime.now(timezone.utc).date().isoformat()
    recordings = []
    problems = []
    partial: dict[str, str] = {}
    for target in targets:
        points = measure(target, ctx.sizes.lesson_budget_s)
        for p in points:
            ctx.log(
                f"{target.name}: {p.variant} {p.size_label} {p.error or f'{p.throughput:.4g} {p.throughput_unit}'}"
            )
        # a lesson's CPU points carry no CUDA runtime: each version from the first point that has it
        versions = {k: v for p in reversed(points) for k, v in (p.versions or {}).items()}
        note = (
            f"Measured by benchmarks/gpu_acceptance.py (Device Explorer {__version__}, torch "
            f"{versions.get('torch', '?')}, CUDA {versions.get('cuda_runtime', '?')}), {ctx.sizes.lesson_budget_s:g} s per "
            "point; points other programs disturbed are marked."
        )
        missing = missing_words(points, planned(target))
        if missing:  # said in one line; the lesson keeps the recording it had
            partial[target.name] = missing
            problems.append(f"{target.name} not recorded, partial: {missing}")
            continue
        recorded = make_recorded(points, device_words(points), date, note)
        try:
            check_recording(target, recorded)
        except Exception as exc:  # said, and the other lessons still recorded
            problems.append(str(exc))
            continue
        recordings.append((target, recorded))
    bundle = recordings_bundle(recordings)
    if recordings:
        write_text_atomic(ctx.out_dir / RECORDINGS_FILE, json.dumps(bundle, indent=1) + "\n")
    written = []
    if ctx.write_lessons:
        for target, recorded in recordings:
            write_recording(target, recorded)
            written.append(target.name)
    figures = []
    for target, recorded in recordings:
        rows = recorded["points"]
        measured = sum(1 for row in rows if row.get("error") is None)
        figures.append(
            record_figure(
                f"{target.name}: {target.workload}",
                float(measured),
                f"points of {len(rows)}",
                recorded["device"],
            )
        )
    summary = (
        f"{len(recordings)} of {len(targets)} lesson steps recorded on this GPU into {RECORDINGS_FILE}"
        + (f" and the lesson files ({', '.join(written)})" if written else "")
        + (f"; {'; '.join(problems)}" if problems else "")
    )
    status: Status = "fail" if problems or not recordings else "pass"
    details = {"recordings": bundle["recordings"], "partial": partial}
    return CheckResult("lessons", status, summary, figures, details)


_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def pytest_counts(output: str) -> dict[str, int]:
    """The counts of pytest's last summary line ("3 passed, 2 skipped in 4.1s")."""
    lines = [ln for ln in output.strip().splitlines() if " in " in ln and _SUMMARY.search(ln)]
    if not lines:
        return {}
    counts: dict[str, int] = {}
    for number, word in _SUMMARY.findall(lines[-1]):
        counts["errors" if word.startswith("error") else word] = int(number)
    return counts


def check_gpu_tests(ctx: CheckContext) -> CheckResult:
    """``pytest -m gpu tests/gpu``: the GPU-marked suite, as its own process."""
    argv = [sys.executable, "-m", "pytest", "-m", "gpu", "tests/gpu", "-q", "-p", "no:cacheprovider", "-rs"]
    env = dict(os.environ, PYTHONPATH=str(ctx.repo))
    try:
        proc = subprocess.run(
            argv,
            cwd=str(ctx.repo),
            env=env,
            capture_output=True,
            text=True,
            timeout=max(30.0, ctx.deadline_s - 15),
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        sys.stderr.write(out)
        return CheckResult(
            "gpu_tests",
            "timeout",
            f"pytest did not finish in {ctx.deadline_s - 15:.0f} s",
            details={"tail": out[-4000:]},
        )
    output = proc.stdout + proc.stderr
    sys.stderr.write(output)
    counts = pytest_counts(output)
    failed = counts.get("failed", 0) + counts.get("errors", 0)
    ran = counts.get("passed", 0) + failed
    figures = [
        count_figure(
            "gpu tests passed", counts.get("passed", 0), ran, "all", "tests run", failed == 0 and ran > 0
        ),
        record_figure(
            "gpu tests skipped", float(counts.get("skipped", 0)), "", "each with its reason in acceptance.log"
        ),
    ]
    failures = [ln.strip() for ln in output.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    summary = (
        ", ".join(f"{n} {w}" for w, n in counts.items())
        or f"pytest printed no summary (exit {proc.returncode})"
    )
    if failures:
        summary += f"; {failures[0][:300]}"
    status: Status = "pass" if failed == 0 and ran > 0 and proc.returncode == 0 else "fail"
    return CheckResult(
        "gpu_tests",
        status,
        summary,
        figures,
        {"counts": counts, "failures": failures, "tail": output[-4000:]},
    )
