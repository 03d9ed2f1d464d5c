"""A GPU's load latency per memory level, from a pointer-chase ladder, kept beside its ceilings.

The ladder (``explorer.bench.chase``) times one thread following a chain of dependent loads over
footprints from a few KiB to four times the L2: each footprint's time per step is one *rung*.
The rungs fall into plateaus (L1, then L2, then DRAM), and which rung belongs to which level is
decided here from the figures alone (``split_levels``): the split of the rungs, in footprint
order, into three consecutive non-empty runs that leaves the least squared error around each
run's mean of log-cycles (log, because the noise of a latency grows with it). Each level's
figure is the median of its run. A chase through shared memory gives a fourth figure.

``PUBLISHED`` holds the figures published microbenchmarks report for Hopper (H100/H200), so a
measured ladder is shown against them. Qt-free; the base modules only.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Literal

from explorer.schema import SchemaError, check_fields, check_range, field_label, show

LatencyLevel = Literal["shared", "L1", "L2", "DRAM"]
LADDER_LEVELS: tuple[LatencyLevel, ...] = ("L1", "L2", "DRAM")
#: no load takes longer than this many cycles (a million: ~1 ms): more in a file is damage
MAX_CYCLES = 1e6
#: how far (a share) a measured level may sit outside the published range and still agree
AGREEMENT = 0.30


@dataclass(frozen=True)
class PublishedRange:
    """One level's load latency (SM cycles) as published microbenchmarks report it."""

    level: LatencyLevel
    low_cycles: float
    high_cycles: float

    def agrees(self, cycles: float, tolerance: float = AGREEMENT) -> bool:
        """Within ``tolerance`` (a share) of the range: ``low x (1 - t) <= cycles <= high x (1 + t)``."""
        return self.low_cycles * (1 - tolerance) <= cycles <= self.high_cycles * (1 + tolerance)

    @property
    def text(self) -> str:
        if self.low_cycles == self.high_cycles:
            return f"~{self.low_cycles:.0f}"
        return f"{self.low_cycles:.0f}-{self.high_cycles:.0f}"


#: Hopper (H100, H200) load latencies, SM cycles, from published microbenchmark figures
#: (pointer-chase studies of the Hopper architecture); L2 is the near partition's.
PUBLISHED_SOURCE = "published microbenchmark figures for Hopper (H100/H200), pointer-chase studies"
PUBLISHED: dict[LatencyLevel, PublishedRange] = {
    "shared": PublishedRange("shared", 30, 30),
    "L1": PublishedRange("L1", 33, 38),
    "L2": PublishedRange("L2", 220, 270),
    "DRAM": PublishedRange("DRAM", 650, 830),
}
#: the GPUs the published table is about (matched in the device's name)
PUBLISHED_GPUS = ("H100", "H200")


def published_applies(device_name: str) -> bool:
    """Whether ``PUBLISHED`` is about this GPU (an H100 or H200)."""
    return any(g in device_name.upper() for g in PUBLISHED_GPUS)


@dataclass(frozen=True)
class LatencyRung:
    """One footprint of the ladder: the chain's bytes and the time per dependent load."""

    footprint_bytes: int
    cycles: float  # SM cycles per step, from the kernel's own clock64
    ns: float  # nanoseconds per step, from the kernel's own %globaltimer


@dataclass(frozen=True)
class LatencyLadder:
    """A GPU's measured ladder, its levels and how it was had, as stored with its ceilings."""

    device_name: str
    measured_at: float
    rungs: tuple[LatencyRung, ...]
    shared_cycles: float | None  # a chase through shared memory, cycles per step
    sm_clock_mhz: float  # cycles / ns over the whole ladder: the clock the SM ran at
    method: str
    steps: int  # timed steps per rung
    backend: str = "gpu"  # "simulator" when run under numba's CUDA simulator (no real figures)

    def levels(self) -> dict[LatencyLevel, float]:
        """Cycles per level: L1, L2 and DRAM from the rungs (``split_levels``), shared memory's own
        chase; a level is absent when the ladder has too few rungs to tell it."""
        out: dict[LatencyLevel, float] = {}
        if self.shared_cycles is not None:
            out["shared"] = self.shared_cycles
        if len(self.rungs) >= len(LADDER_LEVELS):
            runs = split_levels([r.cycles for r in self.rungs])
            for level, (a, b) in zip(LADDER_LEVELS, runs, strict=True):
                out[level] = statistics.median(r.cycles for r in self.rungs[a:b])
        return out

    def level_ns(self, level: LatencyLevel) -> float | None:
        """A level's latency in nanoseconds (cycles at the measured SM clock)."""
        cycles = self.levels().get(level)
        return None if cycles is None else cycles / self.sm_clock_mhz * 1e3

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["rungs"] = [asdict(r) for r in self.rungs]
        return data

    @classmethod
    def from_dict(cls, data: Any, where: str = "the latency ladder") -> LatencyLadder:
        """A stored ladder, every field checked; ``SchemaError`` names the first that does not fit."""
        if not isinstance(data, dict):
            raise SchemaError(f"{where} is {show(data)}, not an object of named values")
        kwargs = check_fields(cls, data, where)
        check_range(kwargs.get("shared_cycles"), field_label(where, "shared_cycles"), 0, MAX_CYCLES)
        check_range(kwargs["sm_clock_mhz"], field_label(where, "sm_clock_mhz"), 1, 100_000)
        check_range(kwargs["steps"], field_label(where, "steps"), 1, 1 << 40)
        if len(kwargs["rungs"]) > 64:
            raise SchemaError(f"{field_label(where, 'rungs')} holds more than 64 rungs")
        # text from a file or another machine is cut before it is shown
        kwargs["device_name"] = kwargs["device_name"][:200]
        kwargs["method"] = kwargs["method"][:1000]
        kwargs["backend"] = "simulator" if kwargs.get("backend") == "simulator" else "gpu"
        for i, r in enumerate(kwargs["rungs"], 1):
            check_range(r.cycles, f"{where}'s rung {i}'s cycles", 0, MAX_CYCLES)
            check_range(r.ns, f"{where}'s rung {i}'s ns", 0, MAX_CYCLES)
            check_range(r.footprint_bytes, f"{where}'s rung {i}'s footprint_bytes", 1, 1 << 50)
        return cls(**kwargs)


def split_levels(cycles: list[float] | tuple[float, ...]) -> tuple[tuple[int, int], ...]:
    """The three consecutive runs ``[(0, i), (i, j), (j, n)]`` (L1, L2, DRAM) of a ladder's rungs,
    in footprint order, that leave the least total squared error of log-cycles around each run's
    mean; ties go to the smallest ``(i, j)``. Exact: every split is tried, each run's error from
    prefix sums in O(1). ValueError naming the count when there are fewer than three rungs, or
    naming the value when one is not positive."""
    n = len(cycles)
    if n < len(LADDER_LEVELS):
        raise ValueError(f"the ladder has {n} rungs; telling L1, L2 and DRAM apart needs at least 3")
    for c in cycles:
        if not c > 0 or not math.isfinite(c):
            raise ValueError(f"a rung took {c} cycles; every rung must take a positive, finite time")
    logs = [math.log(c) for c in cycles]
    s = [0.0]
    q = [0.0]
    for x in logs:
        s.append(s[-1] + x)
        q.append(q[-1] + x * x)

    def sse(a: int, b: int) -> float:
        total = s[b] - s[a]
        return max(0.0, (q[b] - q[a]) - total * total / (b - a))

    best: tuple[float, int, int] | None = None
    for i in range(1, n - 1):
        head = sse(0, i)
        for j in range(i + 1, n):
            err = head + sse(i, j) + sse(j, n)
            if best is None or err < best[0] - 1e-12 * (1 + abs(best[0])):
                best = (err, i, j)
    assert best is not None
    _, i, j = best
    return ((0, i), (i, j), (j, n))


def ordered(levels: dict[LatencyLevel, float]) -> bool:
    """L1 < L2 < DRAM, as a memory hierarchy must be (only the levels present are compared)."""
    present = [levels[k] for k in LADDER_LEVELS if k in levels]
    return all(a < b for a, b in zip(present, present[1:], strict=False))


def comparison_rows(ladder: LatencyLadder) -> list[tuple[str, str, str, str]]:
    """(level, measured cycles, measured ns, published cycles) for the table the Benchmarks page
    shows; the published column says "-" for a GPU it is not about."""
    levels = ladder.levels()
    applies = published_applies(ladder.device_name)
    rows: list[tuple[str, str, str, str]] = []
    for level in ("shared", *LADDER_LEVELS):
        cycles = levels.get(level)
        ns = None if cycles is None else cycles / ladder.sm_clock_mhz * 1e3
        rows.append(
            (
                "shared memory" if level == "shared" else level,
                "-" if cycles is None else f"{cycles:.0f}",
                "-" if ns is None else f"{ns:.0f}",
                PUBLISHED[level].text if applies else "-",
            )
        )
    return rows


#: the columns of ``comparison_rows``
COMPARISON_HEADERS = ("level", "measured (cycles)", "measured (ns)", "published (cycles)")
#: what the latency view says where no shown GPU has a ladder
NO_LADDER = (
    "No latency ladder is stored for a GPU shown here: it is measured with a GPU's ceilings "
    "(Measure again on the Roofline tab, on a machine with an NVIDIA GPU and numba)."
)


def ladder_caption(ladder: LatencyLadder) -> str:
    """Under the table: the SM clock and the method the figures were had by, and the published
    column's source (or why it is empty)."""
    lines = [
        f"{ladder.device_name}: {len(ladder.rungs)} rungs, SM clock {ladder.sm_clock_mhz:.0f} MHz "
        "during the ladder (cycles / ns of the kernel's own clocks)",
        f"method: {ladder.method}",
    ]
    if ladder.backend == "simulator":
        lines.append("run under numba's CUDA simulator: the times are the host's and say nothing about a GPU")
    if published_applies(ladder.device_name):
        lines.append(f"published column: {PUBLISHED_SOURCE}")
    else:
        lines.append("published column: its figures are for H100/H200 only; none is shown for this GPU")
    return "\n".join(lines)
