"""The roofline's drawn geometry: the x range a plot needs, each ceiling as a line, and the steps
of the bandwidth view. The roofs themselves and where a point sits under them are
``explorer.roofs`` (``Roof``, ``place``); this module only turns them into lines for a view.

Two pictures of the same roofs:

* the roofline (FLOP per byte against GFLOP/s): each memory level's bandwidth ``B`` rises as
  ``B x intensity`` until it meets the compute roof; each compute ceiling runs flat from where it
  meets the fastest level's slant. L1's slant is the highest, DRAM's the lowest: a point under
  L2's line but above DRAM's is fast because its data fits in L2.
* the bandwidth view (working set in bytes against GB/s), for workloads that do no arithmetic
  (copies) and so have no place on a roofline: each level's roof is a flat step over the working
  sets it holds, falling at each cache's edge, and each point sits at its own working set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.roofs.model import Ceiling, Roof
from explorer.roofs.placement import level_boundaries


def plot_range(roofs: Sequence[Roof], intensities: Sequence[float]) -> tuple[float, float]:
    """The x range (FLOP/byte) a roofline plot needs: every point and every ridge, with room
    either side, never narrower than 1/16 .. 64."""
    xs = [i for i in intensities if i and i > 0]
    for r in roofs:
        memories = r.levels() or [m for m in (r.main_memory(),) if m is not None]
        xs += [x for x in (r.ridge(c) for c in memories) if x]
    lo = min([1 / 16, *[x / 4 for x in xs]])
    hi = max([64.0, *[x * 4 for x in xs]])
    return lo, hi


@dataclass(frozen=True)
class Segment:
    """One ceiling as drawn: from (x0, y0) to (x1, y1) in FLOP/byte and GFLOP/s."""

    ceiling: Ceiling
    x0: float
    y0: float
    x1: float
    y1: float


def segments(roof: Roof, x_lo: float, x_hi: float) -> list[Segment]:
    """Each ceiling of ``roof`` as a line between ``x_lo`` and ``x_hi``: a memory ceiling B rises as
    B x intensity until it meets the highest compute roof; a compute ceiling P runs flat from where
    it meets the highest memory roof (the fastest level's). Lower ceilings (a measured sgemm under
    the theoretical peak, DRAM under L1) show how far below the roof real code stays."""
    top_p, top_b = roof.top("compute"), roof.top("memory")
    out: list[Segment] = []
    for c in roof.ceilings:
        if c.value <= 0:
            continue
        if c.quantity == "memory":
            end = min(x_hi, top_p.value / c.value) if top_p else x_hi
            if end > x_lo:
                out.append(Segment(c, x_lo, c.value * x_lo, end, c.value * end))
        else:
            start = max(x_lo, c.value / top_b.value) if top_b else x_lo
            if start < x_hi:
                out.append(Segment(c, start, c.value, x_hi, c.value))
    return out


@dataclass(frozen=True)
class LevelStep:
    """One level's roof in the bandwidth view: ``gbps`` over working sets ``x0`` to ``x1`` bytes."""

    ceiling: Ceiling
    x0: float
    x1: float

    @property
    def gbps(self) -> float:
        return self.ceiling.value


def bandwidth_steps(roof: Roof, x_lo: float, x_hi: float, threads: int | None = None) -> list[LevelStep]:
    """Each memory level's roof as a flat step over the working sets judged against it (for a
    point on ``threads`` threads), between ``x_lo`` and ``x_hi`` bytes; the next level's step
    starts where one ends. A roof with no levels gives its one memory figure across the view."""
    bounds = level_boundaries(roof, threads)
    if not bounds:
        main = roof.main_memory()
        return [LevelStep(main, x_lo, x_hi)] if main is not None else []
    out: list[LevelStep] = []
    start = x_lo
    for ceiling, edge in bounds:
        end = min(edge, x_hi)
        if end > start:
            out.append(LevelStep(ceiling, start, end))
        start = max(start, edge)
        if start >= x_hi:
            break
    return out


def bandwidth_range(roofs: Sequence[Roof], working_sets: Sequence[float]) -> tuple[float, float]:
    """The x range (bytes) of the bandwidth view: every point's working set and every level's
    measured working sets, with room either side, at least 1 KiB to 1 GiB."""
    xs = [w for w in working_sets if w and w > 0]
    for r in roofs:
        for c in r.levels():
            xs += [x for x in (c.ws_lo_bytes, c.ws_hi_bytes, c.cache_bytes) if x]
    lo = min([1024.0, *[x / 2 for x in xs]])
    hi = max([float(1 << 30), *[x * 2 for x in xs]])
    return lo, hi
