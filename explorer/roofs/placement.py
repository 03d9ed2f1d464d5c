"""Where a measured point sits on its device's roofline: the memory level its data lives in, the
roof it is judged against at its intensity, and its share of that roof.

The level comes from the bytes the point touches (its working set) against the caches' sizes: a
working set that fits in L2 (and not in L1) lives in L2. Per-core caches shrink for a point on
fewer threads than the sweep used (one thread has one core's L2, not two), a shared cache does
not. Just past a cache's edge part of the data still comes from that faster cache, so a point
there can beat its own level's roof: it is then said why, in words. Within twice a cache's edge
either way (``NEAR_EDGE``) a point is also measured against the level on the edge's other side
(``Placement.neighbour``): its data is served by both, and one share alone would mislead.

The roof at intensity ``I`` is ``min(P, B_level x I)``: where the compute roof ``P`` is the lower,
compute binds and the point's ``roof_level`` is "compute". Its share is what it reached over that
roof (1.0 = on the roof). Zero-FLOP points (copies) are judged in GB/s against their level's
bandwidth. A share above 100% of a roof measured while other programs were busy is no figure at
all (the roof is too low, by an unknown amount): ``share_words`` says ">100% (roof measured while
busy)" instead of "258%".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from explorer.roofs.model import ABOVE_HARDWARE, INVALID_WORDS, Ceiling, Roof, level_words
from explorer.units import binary_bytes, number_text
from explorer.words import percent

Bound = Literal["memory", "compute", ""]
#: a point above this share of its roof is explained in words (a measurement's own noise, a few
#: per cent, is not worth a sentence; more is)
SHARE_EXPLAINED_ABOVE = 1.10
#: a working set within this factor of a cache's edge (either side) is served by the levels on
#: both sides of it: its share of each is shown
NEAR_EDGE = 2.0
#: what a share above 100% of a roof measured while busy reads as
BUSY_ROOF_WORDS = "roof measured while busy"


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
    #: the roof at its intensity was measured while other programs were busy (lower than it can be)
    roof_busy: bool = False
    #: where a memory-bound working set is within ``NEAR_EDGE`` of a cache's edge: the level on the
    #: edge's other side, and the point's share of that level's roof
    neighbour: Ceiling | None = None
    neighbour_share: float | None = None


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
        ws = working_set_bytes if working_set_bytes else bytes_moved or None
        near = neighbour_level(roof, memory, ws, threads)
        near_share = gbps / near.value if near is not None and gbps is not None else None
        return Placement(
            inten,
            gflops,
            gbps,
            "memory",
            ridge,
            level,
            memory,
            level,
            share,
            roof_busy=_busy(memory),
            neighbour=near,
            neighbour_share=near_share,
        )
    if compute is not None and flops > 0:
        share = gflops / compute.value if gflops is not None else None
        return Placement(
            inten, gflops, gbps, "compute", ridge, level, memory, "compute", share, roof_busy=_busy(compute)
        )
    return Placement(inten, gflops, gbps, "", ridge, level, memory, "", None)


def _busy(c: Ceiling) -> bool:
    """A ceiling measured while other programs were busy (a theoretical one never is)."""
    return c.kind == "measured" and c.disturbed


def neighbour_level(
    roof: Roof, home: Ceiling, working_set_bytes: float | None, threads: int | None = None
) -> Ceiling | None:
    """The level on the other side of the cache edge nearest ``working_set_bytes``, where the
    working set is within ``NEAR_EDGE`` of it: the faster level just past whose edge it lies, or
    the slower one it nearly spills into (the nearer edge, by ratio, where both are near);
    ``None`` where no edge is that near, or the working set is not known."""
    if not working_set_bytes or working_set_bytes <= 0:
        return None
    bounds = level_boundaries(roof, threads)
    index = next((i for i, (c, _) in enumerate(bounds) if c == home), None)
    if index is None:
        return None
    found: list[tuple[float, Ceiling]] = []  # (how far from the edge, as a ratio >= 1; the level)
    if index > 0:  # the faster level's edge, below the working set
        edge = bounds[index - 1][1]
        if edge < working_set_bytes < NEAR_EDGE * edge:
            found.append((working_set_bytes / edge, bounds[index - 1][0]))
    if index + 1 < len(bounds):  # this level's own edge, above it
        edge = bounds[index][1]
        if edge / NEAR_EDGE < working_set_bytes <= edge:
            found.append((edge / working_set_bytes, bounds[index + 1][0]))
    return min(found, key=lambda f: f[0])[1] if found else None


def share_words(share: float, busy: bool, of: str = "", decimals: int = 1) -> str:
    """A share of a roof as it is shown: "81.3%", "81% of its L2 roof"; above 100% of a roof measured
    while busy, ">100% (roof measured while busy)" (no figure: that roof is too low by an unknown
    amount, and "258%" would be read before any note)."""
    if busy and share > 1:
        return f">100%{of} ({BUSY_ROOF_WORDS})"
    return f"{percent(share, decimals=decimals)}{of}"


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


def beyond_hardware(figure: float, peak: float) -> bool:
    """Whether ``figure`` is above what the hardware can do: more than ``ABOVE_HARDWARE`` times its
    theoretical peak at boost clock (the one rule every invalid verdict is made by)."""
    return peak > 0 and figure > ABOVE_HARDWARE * peak


def boost_peak(roof: Roof) -> tuple[float, str] | None:
    """The FP32 peak at boost clock no FP32 or FP64 point may beat, with its basis: the roof's own
    (``Roof.boost_peak_gflops``) where it carries one; else, for a GPU (its theoretical and its
    spec-sheet peaks are at boost already), its theoretical peak; else ``None`` (a CPU whose
    maximum clock is not known)."""
    if roof.boost_peak_gflops:
        return roof.boost_peak_gflops, roof.boost_peak_basis
    if roof.device.split(":")[-1] != "cpu":
        peak = roof.theoretical()
        if peak is not None and peak.value > 0:
            return peak.value, peak.basis
    return None


def last_cache_bytes(roof: Roof) -> float | None:
    """All of the last-level cache, bytes: the roof's own figure, else the edge of its last cache
    level (the bound below DRAM's); ``None`` where neither is known."""
    edges = [edge for _, edge in level_boundaries(roof)[:-1]]
    known = [float(x) for x in (roof.llc_bytes, *edges) if x]
    return max(known) if known else None


def above_hardware(
    roof: Roof | None,
    gflops: float | None,
    gbps: float | None,
    working_set_bytes: float | None,
    *,
    fp32_bound: bool = True,
) -> str:
    """Why a point is invalid, "" where it is not: its GFLOP/s above ``ABOVE_HARDWARE`` of the FP32
    peak at boost (``fp32_bound``: an FP32 or FP64 point, whose precision that peak bounds; a
    half-precision or TF32 one has tensor cores' higher peak), or its GB/s above that share of the
    theoretical DRAM bandwidth with a working set past twice the last-level cache (``NEAR_EDGE``:
    no cache serves it). The words name the figure and the bound."""
    if roof is None:
        return ""
    peak = boost_peak(roof) if fp32_bound else None
    if peak is not None and gflops is not None and beyond_hardware(gflops, peak[0]):
        return (
            f"{INVALID_WORDS} ({number_text(gflops, 'GFLOP/s')} is {gflops / peak[0]:.0%} of the FP32 peak "
            f"at boost clock, {number_text(peak[0], 'GFLOP/s')}: {peak[1] or 'theoretical'})"
        )
    dram = roof.dram_peak()
    llc = last_cache_bytes(roof)
    past = working_set_bytes is not None and llc is not None and working_set_bytes > NEAR_EDGE * llc
    if dram is not None and gbps is not None and past and beyond_hardware(gbps, dram.value):
        return (
            f"{INVALID_WORDS} ({number_text(gbps, 'GB/s')} over {binary_bytes(working_set_bytes)}, past the "
            f"last-level cache, is {gbps / dram.value:.0%} of the {dram.kind} DRAM bandwidth, "
            f"{number_text(dram.value, 'GB/s')})"
        )
    return ""


def above_roof_reason(p: Placement, roof: Roof, working_set_bytes: float | None, threads: int | None) -> str:
    """Why a point is above ``SHARE_EXPLAINED_ABOVE`` of its roof, in a few words ("" when it is
    not): the roof was measured while other programs were busy; the working set sits just past a
    faster level's edge; the cores ran faster than the clock the peak is built on. Only for a
    point below the hardware's own limit: one above it (``above_hardware``) is invalid, and no
    words explain it away (a GPU's peak is at boost already)."""
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
