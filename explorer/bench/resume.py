"""Resume a benchmark run that did not finish: measure only the points it has no result for.

Why: a run on a remote GPU can lose its connection (a laptop's Wi-Fi, a login node rebooted, a
Slurm job's time limit), and a long sweep on a slow laptop can be stopped half-way. The points
that finished are kept (the window's table, the CLI's ``--json`` lines or ``--csv`` file); this
module turns them and the run's plan into a plan for the rest: the same workload, devices and
sizes, minus every point that already has a measurement. Error rows (a dropped connection, a
point that timed out, "not measured: ...") count as not done, so they are measured again.

Qt-free: the Benchmarks panel's Resume button and ``device-explorer bench --resume FILE`` both
come here, so they keep and skip the same points.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from explorer.bench.results import MAX_RESULTS_BYTES, BenchPoint, points_from_csv, points_from_json
from explorer.bench.runner import BenchPlan, PointKey, plan_points
from explorer.errors import UserError
from explorer.schema import SchemaError
from explorer.statefile import Damaged, decode_text, parse_json_bytes, read_bounded


@dataclass(frozen=True)
class Resumed:
    """What resuming a run keeps and what it still measures.

    ``plan`` measures only the points left (``BenchPlan.skip`` holds the finished ones);
    ``kept`` are the finished points of the earlier run that belong to this plan, in their
    order, the newest measurement of each point; ``left`` is how many points ``plan`` runs.
    """

    plan: BenchPlan
    kept: list[BenchPoint]
    left: int


def point_key(point: BenchPoint) -> PointKey:
    """The identity of a point within a run: (device, series, size)."""
    return (point.device, point.variant, point.size)


def resume(plan: BenchPlan, earlier: Sequence[BenchPoint], *, source: str = "the earlier run") -> Resumed:
    """The plan for the points of ``plan`` that ``earlier`` has no measurement for.

    UserError (one line) when ``earlier`` holds another workload's points or points measured on
    another machine than ``plan`` runs on (a remote's cuda:0 is not this laptop's), or when
    every point of ``plan`` already has a measurement (nothing is left to resume).
    """
    host = plan.remote.host if plan.remote is not None else ""
    others = sorted({p.workload for p in earlier} - {plan.workload})
    if others:
        raise UserError(
            f"{source} holds points of {', '.join(others)}, not of {plan.workload}; "
            f"resume with the workload it ran"
        )
    hosts = sorted({p.host for p in earlier} - {host})
    if hosts:
        where = f"on {hosts[0]}" if hosts[0] else "on this machine"
        here = f"on {host}" if host else "on this machine"
        raise UserError(
            f"{source} was measured {where}, but this run is {here}; resume it where it ran"
            + (f" (--host {hosts[0]})" if hosts[0] else " (without --host)")
        )
    fresh = replace(plan, skip=frozenset(), remeasure_roof=False)
    wanted = {(s["device"], s["variant"], s["size"]) for s in plan_points(fresh)}
    newest: dict[PointKey, BenchPoint] = {}
    for point in earlier:
        key = point_key(point)
        if point.ok and key in wanted:
            newest[key] = point  # a point measured again later (a resumed run appended) wins
    if not wanted - set(newest):
        raise UserError(
            f"all {len(wanted)} point(s) of this {plan.workload} run were measured in {source}; "
            "nothing is left to resume"
        )
    kept = [p for p in earlier if p.ok and newest.get(point_key(p)) is p]
    rest = replace(fresh, skip=frozenset(newest))
    return Resumed(rest, kept, len(wanted) - len(newest))


def read_points(path: str | Path) -> list[BenchPoint]:
    """The points of an earlier run from a file the app wrote: a CSV (``bench --csv``, Export
    CSV), a JSON export (``{"format_version": 1, "points": [...]}``) or the JSON lines that
    ``bench --json`` prints, one point per line (a point's ``"host": null`` is this machine).

    UserError with one line naming the file and what is wrong with it."""
    shown = str(path)
    if "\0" in shown:
        raise UserError(f"--resume {shown!r}: a file name cannot hold a NUL character")
    expanded = os.path.expanduser(shown)
    if expanded.startswith("~"):  # ~user naming no user: Path.expanduser would raise
        user = shown[1:].split("/", 1)[0]
        raise UserError(f"--resume {shown!r}: there is no user {user!r} whose home '~' could mean")
    file = Path(expanded)
    try:
        data = read_bounded(file, MAX_RESULTS_BYTES)
    except Damaged as exc:
        raise UserError(f"--resume {shown!r}: {exc}") from None
    except OSError as exc:
        raise UserError(f"--resume {shown!r} cannot be read: {exc.strerror or exc}") from None
    if data is None:
        raise UserError(f"--resume {shown!r}: there is no such file")
    try:
        if file.suffix.lower() == ".csv":
            points = points_from_csv(decode_text(data))
        else:
            points = _points_from_json_text(data)
    except (Damaged, SchemaError, ValueError) as exc:
        raise UserError(f"--resume {shown!r} is not a results file the app wrote: {exc}") from None
    except RecursionError:
        raise UserError(f"--resume {shown!r}: its values are nested too deeply") from None
    if not points:
        raise UserError(f"--resume {shown!r} holds no points")
    return points


def _points_from_json_text(data: bytes) -> list[BenchPoint]:
    try:
        whole_file = parse_json_bytes(data)
    except Damaged as whole:
        # not one JSON document: perhaps JSON lines (``bench --json``), one point per line
        lines = [ln for ln in data.decode("utf-8-sig", errors="replace").splitlines() if ln.strip()]
        if len(lines) < 2 or not lines[0].lstrip().startswith("{"):
            raise whole from None
        rows: list[Any] = []
        for number, line in enumerate(lines, start=1):
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise SchemaError(f"line {number} is not JSON") from None
    else:
        if not (isinstance(whole_file, dict) and "points" not in whole_file and "workload" in whole_file):
            return points_from_json(whole_file)
        rows = [whole_file]  # one line of ``bench --json``: a run of one point
    return [_cli_point(row, number) for number, row in enumerate(rows, start=1)]


def _cli_point(row: Any, number: int) -> BenchPoint:
    """A point of ``bench --json``, which writes ``"host": null`` for this machine."""
    if isinstance(row, dict) and row.get("host") is None:
        row = {**row, "host": ""}
    return BenchPoint.from_dict(row, where=f"line {number}")
