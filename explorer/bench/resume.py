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

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from explorer.bench.results import MAX_RESULTS_BYTES, BenchPoint, points_from_csv, points_from_json
from explorer.bench.runner import BenchPlan, plan_host, plan_points
from explorer.bench.spec import PointKey
from explorer.bench.variants import Variant
from explorer.bench.workloads import Workload, get_workload
from explorer.errors import UserError
from explorer.schema import SchemaError, loads
from explorer.statefile import Damaged, decode_text, parse_json_bytes, read_bounded
from explorer.words import count


@dataclass(frozen=True)
class Resumed:
    """What resuming a run keeps and what it still measures.

    ``plan`` measures only the points left (``BenchPlan.skip`` holds the keys of the finished
    ones); ``kept`` are the finished points of the earlier run that belong to this plan, in their
    order, the newest measurement of each point, named as this version names their variant;
    ``left`` is how many points ``plan`` runs; ``unmatched`` one line naming the earlier points
    whose variant this version cannot tell ("" when every one was matched): they are measured again.
    """

    plan: BenchPlan
    kept: list[BenchPoint]
    left: int
    unmatched: str = ""


@dataclass(frozen=True)
class Keyed:
    """Earlier points with their variant's key, and those that matched no variant of this version."""

    points: list[BenchPoint]
    unmatched: list[BenchPoint]


def keyed(workload: Workload, points: Sequence[BenchPoint]) -> Keyed:
    """``points`` of ``workload`` as this version knows them: each with its variant's stable key and
    the series name the variant has now (a relabelled variant's kept points join its new series).
    A point written before keys were saved (its ``variant_key`` empty) is matched by its series
    name against the current variants of its device; one whose key or name no current variant
    has is left as it is, and listed in ``unmatched``."""
    out: list[BenchPoint] = []
    unmatched: list[BenchPoint] = []
    by_device: dict[str, dict[str, Variant]] = {}
    for point in points:
        if point.device not in by_device:
            by_device[point.device] = {v.key: v for v in workload.variants_on(point.device)}
        variants = by_device[point.device]
        if point.variant_key:
            found = variants.get(point.variant_key)
        else:  # an earlier version's file: its label, as this version would write it
            found = next((v for v in variants.values() if v.series_name(point.device) == point.variant), None)
        if found is None:
            unmatched.append(point)
            out.append(point)
            continue
        name = found.series_name(point.device)
        same = point.variant_key == found.key and point.variant == name
        out.append(point if same else replace(point, variant_key=found.key, variant=name))
    return Keyed(out, unmatched)


def unmatched_line(workload: Workload, unmatched: Sequence[BenchPoint], source: str) -> str:
    """One line saying which finished points of ``source`` match no variant of ``workload`` in this
    version, so they cannot be kept ("" for none)."""
    if not unmatched:
        return ""
    names = list(dict.fromkeys(p.variant_key or p.variant for p in unmatched))
    shown = ", ".join(repr(n) for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (
        f"{source}: {count(len(unmatched), 'finished point')} of {shown} match no variant of {workload.name} "
        "in this version and are not kept"
    )


def resume(plan: BenchPlan, earlier: Sequence[BenchPoint], *, source: str = "the earlier run") -> Resumed:
    """The plan for the points of ``plan`` that ``earlier`` has no measurement for; points are
    matched by what they measure (``BenchPoint.key``), never by their label.

    UserError (one line) when ``earlier`` holds another workload's points or points measured on
    another machine than ``plan`` runs on (a remote's cuda:0 is not this laptop's), or when
    every point of ``plan`` already has a measurement (nothing is left to resume).
    """
    host = plan_host(plan)
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
    workload = get_workload(plan.workload)
    matched = keyed(workload, earlier)
    fresh = replace(plan, skip=frozenset(), remeasure_roof=False)
    wanted = {s.key(host) for s in plan_points(fresh)}
    newest: dict[PointKey, BenchPoint] = {}
    for point in matched.points:
        if point.ok and point.key in wanted:
            newest[point.key] = point  # a point measured again later (a resumed run appended) wins
    if not wanted - set(newest):
        raise UserError(
            f"this {plan.workload} run has {count(len(wanted), 'point')}, every one measured in {source}; "
            "nothing is left to resume"
        )
    kept = [p for p in matched.points if p.ok and newest.get(p.key) is p]
    rest = replace(fresh, skip=frozenset(newest))
    lost = [p for p in matched.unmatched if p.ok]
    return Resumed(rest, kept, len(wanted) - len(newest), unmatched_line(workload, lost, source))


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
            try:  # NaN as ``bench --json`` prints it: the point's own check names the field
                rows.append(loads(line, max_bytes=None, allow_nan=True))
            except SchemaError:
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
