"""Utilization truth: the visualizer's predicted occupancy of a launch, beside what NVML's GPM
measured while that launch ran for real ("Run it for real").

The prediction is the occupancy model's (``explorer.launch.occupancy``): resident warps per SM
against the SM's warp slots, while the kernel runs. GPM's SM occupancy is an *average* over its
sample window (the Devices page reads once a second); a kernel that ran for part of the window
leaves the rest empty, so GPM reads the prediction times the share of the window the kernel ran:

    expected reading = predicted x min(1, busy_s / window_s)

(the GPU idle otherwise). The real run's vector add lasts microseconds, so its second reads
near 0 % whatever its occupancy: the lesson is that GPM averages, and the acceptance check runs
kernels long enough to fill whole windows. ``PredictedOccupancy`` is the typed record the
visualizer hands the live view; ``occupancy_truth`` joins it with the readings. Qt-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.devices.live import LiveReading
from explorer.launch.config import LaunchConfig, dims_text
from explorer.launch.occupancy import RESOURCE_NAMES
from explorer.launch.schedule import LaunchPlan

#: how far (percentage points) a measured occupancy may sit from the expected one and agree
AGREE_POINTS = 10.0


@dataclass(frozen=True)
class PredictedOccupancy:
    """The occupancy the visualizer predicts for a launch that was just run for real on a GPU."""

    device_key: str  # "cuda:0": the GPU it ran on (this machine's)
    device_name: str
    config: LaunchConfig
    occupancy_pct: float  # resident warps / warp slots per SM while the kernel runs, 0..100
    active_warps_per_sm: int
    max_warps_per_sm: int
    limiters: tuple[str, ...]  # what limits it, in words ("registers per thread")
    busy_s: float  # how long the kernel ran (its launches together), seconds
    launches: int  # how many times it ran in that time (the real run: a warm-up and a timed one)
    #: wall times (``time.time()``) the run (its child process) began and ended: the kernel ran
    #: between them, the readings around them cover it
    started_at: float
    ended_at: float

    @classmethod
    def from_plan(
        cls,
        device_key: str,
        device_name: str,
        plan: LaunchPlan,
        busy_s: float,
        started_at: float,
        ended_at: float,
        launches: int = 1,
    ) -> PredictedOccupancy:
        occ = plan.occupancy
        return cls(
            device_key=device_key,
            device_name=device_name,
            config=plan.config,
            occupancy_pct=100.0 * occ.occupancy,
            active_warps_per_sm=occ.active_warps_per_sm,
            max_warps_per_sm=occ.max_warps_per_sm,
            limiters=tuple(RESOURCE_NAMES[r] for r in occ.limiters),
            busy_s=busy_s,
            launches=launches,
            started_at=started_at,
            ended_at=ended_at,
        )

    @property
    def launch_text(self) -> str:
        c = self.config
        return f"grid {dims_text(c.grid)} x block {dims_text(c.block)}"


def expected_reading(predicted_pct: float, busy_s: float, window_s: float) -> float:
    """What a GPM average over ``window_s`` reads when the kernel ran ``busy_s`` of it at
    ``predicted_pct`` and the GPU was idle otherwise. ValueError naming the value when the window
    is not positive or the busy time negative."""
    if not window_s > 0:
        raise ValueError(f"the GPM window is {window_s} s; it must be longer than 0")
    if busy_s < 0:
        raise ValueError(f"the kernel ran {busy_s} s; a time cannot be negative")
    return predicted_pct * min(1.0, busy_s / window_s)


@dataclass(frozen=True)
class OccupancyAgreement:
    """A measured occupancy against the expected one, in percentage points."""

    expected_pct: float
    measured_pct: float
    tolerance_points: float

    @property
    def difference_points(self) -> float:
        return self.measured_pct - self.expected_pct

    @property
    def within(self) -> bool:
        return abs(self.difference_points) <= self.tolerance_points

    @property
    def text(self) -> str:
        verdict = "within" if self.within else "not within"
        return (
            f"GPM read {self.measured_pct:.1f} %, {self.difference_points:+.1f} points from the expected "
            f"{self.expected_pct:.1f} % ({verdict} {self.tolerance_points:g} points)"
        )


def compare(
    expected_pct: float, measured_pct: float, tolerance_points: float = AGREE_POINTS
) -> OccupancyAgreement:
    return OccupancyAgreement(expected_pct, measured_pct, tolerance_points)


@dataclass(frozen=True)
class OccupancyTruth:
    """A prediction joined with the live readings: the GPM windows that cover the run (from the
    reading before it began to the first at or after its end), their length together, the reading
    expected over them, the comparison; or why there is none yet."""

    prediction: PredictedOccupancy
    windows: int
    window_s: float | None
    agreement: OccupancyAgreement | None
    why: str  # why there is no comparison ("" when there is one)

    def lines(self) -> list[str]:
        p = self.prediction
        lines = [
            f"{p.occupancy_pct:.0f} % while the kernel runs ({p.active_warps_per_sm} of "
            f"{p.max_warps_per_sm} warp slots, limited by {' and '.join(p.limiters) or 'nothing'}): "
            f"the visualizer's {p.launch_text}, run for real: {p.launches} launch"
            f"{'es' if p.launches != 1 else ''}, {p.busy_s * 1e3:.3g} ms in all (CUDA events)"
        ]
        if self.agreement is not None and self.window_s is not None:
            lines.append(
                f"GPM averages over its windows ({self.windows}, {self.window_s:.1f} s together): "
                f"expected {p.occupancy_pct:.0f} % x {p.busy_s:.3g} s / {self.window_s:.1f} s = "
                f"{self.agreement.expected_pct:.2f} %; {self.agreement.text}"
            )
        else:
            lines.append(self.why)
        return lines


def occupancy_truth(
    prediction: PredictedOccupancy, history: Sequence[LiveReading], tolerance_points: float = AGREE_POINTS
) -> OccupancyTruth:
    """Join ``prediction`` with ``history`` (one GPU's readings, oldest first). Each reading's GPM
    figure is the average since the reading before it; the run (``started_at`` .. ``ended_at``)
    lies inside the windows from the last reading at or before its start to the first at or after
    its end, so over those windows together GPM measured ``sum(reading x window) / sum(window)``
    and the prediction expects ``predicted x busy_s / sum(window)`` (the GPU idle otherwise)."""
    p = prediction
    first = max((i for i, r in enumerate(history) if r.timestamp_s <= p.started_at), default=None)
    last = next((i for i, r in enumerate(history) if r.timestamp_s >= p.ended_at), None)
    if last is None:
        return OccupancyTruth(p, 0, None, None, "waiting for the GPM reading that covers the end of the run")
    if first is None:
        return OccupancyTruth(
            p, 0, None, None, "no reading was taken before the run began: none covers it whole"
        )
    total = weighted = 0.0
    for before, after in zip(history[first:last], history[first + 1 : last + 1], strict=True):
        if after.sm_occupancy_pct is None:
            why = after.unavailable.get("sm_occupancy_pct") or "GPM gave no SM occupancy for that window"
            return OccupancyTruth(p, last - first, None, None, f"no GPM SM occupancy to compare: {why}")
        window = after.timestamp_s - before.timestamp_s
        total += window
        weighted += after.sm_occupancy_pct * window
    if total <= 0:
        return OccupancyTruth(p, last - first, None, None, "the readings around the run span no time")
    expected = expected_reading(p.occupancy_pct, p.busy_s, total)
    return OccupancyTruth(p, last - first, total, compare(expected, weighted / total, tolerance_points), "")
