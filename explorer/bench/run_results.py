"""The results the Benchmarks panel shows: the points of one run per workload, Qt-free.

The panel's table and plots read this model and nothing else, so what they show is always one
workload's run: picking Vector add after a Matrix multiply run shows Vector add's own last run
(or nothing), never the matmul's curve under a new title; going back to Matrix multiply shows
its run again. Starting a run replaces that workload's points only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from explorer.bench.results import BenchPoint


@dataclass
class RunResults:
    """Points per workload, and which workload is shown."""

    shown: str = ""
    _runs: dict[str, list[BenchPoint]] = field(default_factory=dict)

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
        self.shown = workload

    def set_run(self, workload: str, points: Iterable[BenchPoint]) -> None:
        """A whole run at once (restored from disk); points of another workload are refused."""
        points = list(points)
        stray = {p.workload for p in points} - {workload}
        if stray:
            raise ValueError(f"a {workload} run cannot hold points of {', '.join(sorted(stray))}")
        self._runs[workload] = points

    def add(self, point: BenchPoint) -> bool:
        """Add one point to its workload's run; ``True`` when it belongs to the shown workload."""
        self._runs.setdefault(point.workload, []).append(point)
        return point.workload == self.shown

    def noisy_count(self, workload: str | None = None) -> int:
        return sum(p.noisy for p in self._runs.get(workload or self.shown, ()))
