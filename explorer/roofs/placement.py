"""Where a measured point sits on its device's roofline: the memory level its data lives in, the
roof it is judged against at its intensity, and its share of that roof.

The level comes from the bytes the point touches (its working set) against the caches' sizes: a
working set that fits in L2 (and not in L1) lives in L2. Per-core caches shrink for a point on
fewer threads than the sweep used (one thread has one core's L2, not two), a shared cache does
not. Just past a cache's edge part of the data still comes from that faster cache, so a point
there can beat its own level's roof: it is then said why, in words.

The roof at intensity ``I`` is ``min(P, B_level x I)``: where the compute roof ``P`` is the lower,
compute binds and the point's ``roof_level`` is "compute". Its share is what it reached over that
roof (1.0 = on the roof). Zero-FLOP points (copies) are judged in GB/s against their level's
bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from explorer.roofs.model import Ceiling, Roof, level_words
from explorer.units import binary_bytes, number_text

Bound = Literal["memory", "compute", ""]
#: a point above this share of its roof is explained in words (a measurement's own noise, a few
#: per cent, is not worth a sentence; more is)
SHARE_EXPLAINED_ABOVE = 1.10


@dataclass(frozen=True)
class Placement:
    """Where one measured point sits on its device's roofline."""

    intensity_flop_per_byte: float | None
    gflops: float | None  # achieved FLOP rate (the roofline's y)
    gbps: float | None  # achieved byte rate
    bound: Bound
    ridge_flop_per_byte: float | None  # of the point's own level
    memory_level: str  # the level its working set lives in ("L2"), "" where no level is known
    memory_ceiling: Ceiling | None  # that level's roof
    roof_level: str  # memory_level, or "compute" where the compute roof is the lower at its intensity
    roof_share: float | None  # achieved / the roof at its intensity (1.0 = on the roof)


def intensity(flops: float, bytes_moved: float) -> float | None:
    """FLOP per byte from a workload's declared counts; ``None`` where it moves no bytes."""
    if bytes_moved <= 0:
        return None
    return flops / bytes_moved


def level_boundaries(roof: Roof, threads: int | None = None) -> list[tuple[Ceiling, float]]:
    """Each level's ceiling and the working set (bytes) up to which a point on ``threads`` threads
    lives in it: the caches' capacity up to that level (one level's cache holds what the levels
    nearer the cores do not: AMD's L3 takes what L2 evicts), each per-core cache counted once per
    thread up to its number; where a level's size is not known, the top of its plateau. The last
    level's bound is infinite."""
    levels = roof.levels()
    out: list[tuple[Ceiling, float]] = []
    held = 0.0
    for index, here in enumerate(levels):
        if index == len(levels) - 1:
            out.append((here, float("inf")))
            break
        if here.cache_bytes:
            size = float(here.cache_bytes)
            if threads and here.instances and threads < here.instances:
                size *= threads / here.instances
            held += size
        elif here.ws_hi_bytes:
            held = max(held, float(here.ws_hi_bytes))
        else:
            continue  # a level with no size and no working sets cannot hold any point
        out.append((here, held))
    return out


def home_level(roof: Roof, working_set_bytes: float | None, threads: int | None = None) -> Ceiling | None:
    """The ceiling of the level a working set lives in; the main-memory one where the working set
    is not known; ``None`` where the roof has no memory ceiling at all."""
    if working_set_bytes is None or working_set_bytes <= 0:
        return roof.main_memory()
    for ceiling, edge in level_boundaries(roof, threads):
        if working_set_bytes <= edge:
            return ceiling
    return roof.main_memory()


def place(
    flops: float,
    bytes_moved: float,
    seconds: float | None,
    roof: Roof | None,
    working_set_bytes: float | None = None,
    threads: int | None = None,
) -> Placement:
    """A point doing ``flops`` FLOP and moving ``bytes_moved`` bytes over ``working_set_bytes`` in
    ``seconds``, on ``threads`` threads, under ``roof``."""
    inten = intensity(flops, bytes_moved)
    ok = seconds is not None and seconds > 0
    gflops = flops / seconds / 1e9 if ok and flops > 0 and seconds else None
    gbps = bytes_moved / seconds / 1e9 if ok and bytes_moved > 0 and seconds else None
    if roof is None:
        return Placement(inten, gflops, gbps, "", None, "", None, "", None)
    memory = home_level(roof, working_set_bytes if working_set_bytes else bytes_moved or None, threads)
    compute = roof.compute_roof()  # the measured FP32 ceiling where there is one
    level = memory.level if memory is not None else ""
    ridge = roof.ridge(memory)
    if memory is not None and (not inten or compute is None or memory.value * inten <= compute.value):
        share = gbps / memory.value if gbps is not None else None
        return Placement(inten, gflops, gbps, "memory", ridge, level, memory, level, share)
    if compute is not None and flops > 0:
        share = gflops / compute.value if gflops is not None else None
        return Placement(inten, gflops, gbps, "compute", ridge, level, memory, "compute", share)
    return Placement(inten, gflops, gbps, "", ridge, level, memory, "", None)


def fits_text(level: str) -> str:
    """ "fits in L2", "in DRAM" (beyond every cache), "" where no level is known."""
    if not level:
        return ""
    return "in DRAM" if level == "DRAM" else f"fits in {level}"


def level_text(memory_level: str, roof_level: str) -> str:
    """The table's and the legend's words for a point: "fits in L2", "fits in L1, compute-bound"."""
    fits = fits_text(memory_level)
    if roof_level == "compute":
        return f"{fits}, compute-bound" if fits else "compute-bound"
    return fits


def above_roof_reason(p: Placement, roof: Roof, working_set_bytes: float | None, threads: int | None) -> str:
    """Why a point is above ``SHARE_EXPLAINED_ABOVE`` of its roof, in a few words ("" when it is
    not): the roof was measured while other programs were busy; the working set sits just past a
    faster level's edge; the cores ran faster than the clock the peak is built on."""
    if p.roof_share is None or p.roof_share <= SHARE_EXPLAINED_ABOVE:
        return ""
    if p.roof_level == "compute":
        peak = roof.compute_roof()
        if peak is not None and peak.estimate:
            return (
                f"the compute roof is an estimate from a reported clock ({peak.basis}); the cores ran faster"
            )
        return (
            "the cores ran faster than the clock the compute roof is built on (fewer busy cores turbo "
            "higher); measure the ceilings again on a quiet machine"
        )
    c = p.memory_ceiling
    if c is None:
        return ""
    name = level_words(c.level)
    if c.disturbed:
        return (
            f"the {name} roof ({number_text(c.value, 'GB/s')}) was measured while other programs used the "
            "CPU, so it is lower than this machine can do; measure the ceilings again when it is quiet"
        )
    faster = _faster_level_near(roof, c, working_set_bytes, threads)
    if faster is not None:
        return (
            f"its working set ({binary_bytes(working_set_bytes)}) is just past the edge of {faster.level}, "
            f"so part of it is still served from {faster.level} ({number_text(faster.value, 'GB/s')})"
        )
    if c.kind == "spec sheet" or c.estimate:
        return f"the {name} roof is a {c.kind_text} figure, not one measured here"
    return (
        f"it ran faster than the {name} roof measured here ({number_text(c.value, 'GB/s')}); "
        "measure the ceilings again on a quiet machine"
    )


def _faster_level_near(
    roof: Roof, level: Ceiling, working_set_bytes: float | None, threads: int | None
) -> Ceiling | None:
    """The level just nearer the cores than ``level`` when the working set is within twice its
    edge: a point there still gets part of its data from that faster level."""
    if not working_set_bytes:
        return None
    previous: tuple[Ceiling, float] | None = None
    for ceiling, edge in level_boundaries(roof, threads):
        if ceiling == level:
            break
        previous = (ceiling, edge)
    if previous is not None and working_set_bytes < 2 * previous[1]:
        return previous[0]
    return None
