"""The results the Benchmarks panel shows: the points of one run per workload, and the roofs they
were placed under, Qt-free.

The panel's table and plots read this model and nothing else, so what they show is always one
workload's run: picking Vector add after a Matrix multiply run shows Vector add's own last run
(or nothing), never the matmul's curve under a new title; going back to Matrix multiply shows
its run again. Starting a run replaces that workload's points only.

Each run carries one roof per (host, device), as the worker that measured it placed its points
(``BenchRun.roofs``): the roofline draws those, never a file read again on every batch. When the
ceilings are measured again, every run's points of that device are judged against the new roof.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from explorer.bench.judge import judged_again
from explorer.bench.results import BenchPoint
from explorer.roofs.model import Roof, RoofKey


@dataclass
class RunResults:
    """Points per workload, and which workload is shown."""

    shown: str = ""
    _runs: dict[str, list[BenchPoint]] = field(default_factory=dict)
    _roofs: dict[str, dict[RoofKey, Roof]] = field(default_factory=dict)

    @property
    def points(self) -> list[BenchPoint]:
        """The shown workload's points, in the order they arrived."""
        return list(self._runs.get(self.shown, ()))

    def points_of(self, workload: str) -> list[BenchPoint]:
        return list(self._runs.get(workload, ()))

    def workloads(self) -> list[str]:
        """Workloads with results kept, in the order their runs started."""
        return [name for name, points in self._runs.items() if points]

    def show(self, workload: str) -> bool:
        """Show ``workload``'s run; ``True`` when that changes what is shown."""
        changed = workload != self.shown
        self.shown = workload
        return changed

    def start_run(self, workload: str) -> None:
        """A new run of ``workload``: its old points go, other workloads' runs stay, and it is shown."""
        self._runs[workload] = []
        self._roofs[workload] = {}
        self.shown = workload

    def set_run(
        self, workload: str, points: Iterable[BenchPoint], roofs: Iterable[Roof] | None = None
    ) -> None:
        """A whole run at once (restored from disk, or the kept part of a resumed one), with the
        roofs its points were placed under where known; points of another workload are refused."""
        points = list(points)
        stray = {p.workload for p in points} - {workload}
        if stray:
            raise ValueError(f"a {workload} run cannot hold points of {', '.join(sorted(stray))}")
        self._runs[workload] = points
        if roofs is not None:
            self._roofs[workload] = {r.key: r for r in roofs}

    def roofs_of(self, workload: str | None = None) -> list[Roof]:
        """The roofs the run's points were placed under (the shown workload's by default)."""
        return list(self._roofs.get(self.shown if workload is None else workload, {}).values())

    def add_roof(self, roof: Roof, workload: str | None = None) -> None:
        """The roof a device's points of the run under way were placed under (its first one wins:
        the worker places every point of a device under one roof)."""
        self._roofs.setdefault(self.shown if workload is None else workload, {}).setdefault(roof.key, roof)

    def measured_again(self, roof: Roof) -> bool:
        """This machine's ``roof`` was measured anew: every run's points of that device are judged
        against it, and it replaces the one they were placed under. ``True`` when the shown run
        changed."""
        changed = False
        for workload, points in self._runs.items():
            mine = [p for p in points if p.device == roof.device and p.host == roof.host]
            if not mine and roof.key not in self._roofs.get(workload, {}):
                continue
            self._runs[workload] = [
                judged_again(p, roof) if p.device == roof.device and p.host == roof.host else p
                for p in points
            ]
            self._roofs.setdefault(workload, {})[roof.key] = roof
            changed |= workload == self.shown
        return changed

    def add(self, point: BenchPoint) -> bool:
        """Add one point to its workload's run; ``True`` when it belongs to the shown workload."""
        self._runs.setdefault(point.workload, []).append(point)
        return point.workload == self.shown

    def noisy_count(self, workload: str | None = None) -> int:
        return sum(p.noisy for p in self._runs.get(workload or self.shown, ()))

    def restore_last(self) -> tuple[str | None, str]:
        """The last run kept on disk, as this one's points (one run is one workload: the first
        point's): (its workload, or ``None`` when there is none; a notice for the user, "" when
        none). Never raises: a damaged file is moved aside and the notice says so."""
        from explorer.bench.results import load_last_run

        loaded = load_last_run()
        if loaded.value is None or not loaded.value.points:
            return None, loaded.notice
        workload = loaded.value.points[0].workload
        points = [p for p in loaded.value.points if p.workload == workload]
        self.set_run(workload, points, loaded.value.roofs)
        return workload, loaded.notice

    def measured_words(self) -> str:
        """When the shown run's last point was measured, as the progress bar says it."""
        return time.strftime("%d %b %H:%M", time.localtime(max(p.timestamp for p in self.points)))
