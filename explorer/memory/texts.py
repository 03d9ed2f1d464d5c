"""The words the CLI and the window both show for a memory pattern or a branch: made once, here."""

from __future__ import annotations

from explorer.memory.banks import BankConflicts, SharedAccess
from explorer.memory.coalescing import WARP_SIZE, Coalescing, GlobalAccess, GlobalGather
from explorer.memory.divergence import Divergence, WarpBranch
from explorer.words import count, percent

#: what NVML's "GPU utilization" means, said wherever the utilization trap shows it
UTILIZATION_MEANING = (
    "NVML's 'GPU utilization' is the share of its last sample period (1/6 s to 1 s) in which at "
    "least one kernel was running, not the share of SMs or lanes at work: one warp on one SM reads "
    "100%. How much of the GPU works is the occupancy and the SMs with blocks, which the Launch "
    "visualizer shows, or 'SM activity', which NVML's GPM counters measure on Hopper and newer GPUs "
    "(the Devices page draws it beside utilization)."
)


def coalescing_headline(c: Coalescing) -> str:
    a = c.access
    lanes = count(a.active_lanes, "lane")
    if isinstance(a, GlobalGather):  # a traced kernel's lanes, each at its own address
        what = f"{lanes} {'reads' if a.active_lanes == 1 else 'read'} {a.elem_bytes}-byte elements"
        return (
            what
            + f": {count(c.sectors_per_request, 'sector')} of 32 B ({count(c.lines_per_request, 'line')} of "
            f"128 B), {percent(c.efficiency)} of the fetched bytes used"
        )
    if a.stride == 0 and a.active_lanes > 1:
        what = f"{lanes} read one {a.elem_bytes}-byte element (a uniform load: one fetch serves them all)"
    else:
        what = (
            f"{lanes} reads one {a.elem_bytes}-byte element"
            if a.active_lanes == 1
            else f"{lanes} read {a.elem_bytes}-byte elements {a.stride} apart"
        )
    return (
        what
        + (f" from element {a.offset}" if a.offset else "")
        + f": {count(c.sectors_per_request, 'sector')} of 32 B ({count(c.lines_per_request, 'line')} of 128 B), "
        f"{percent(c.efficiency)} of the fetched bytes used"
    )


def coalescing_lines(c: Coalescing) -> list[str]:
    a = c.access
    return [
        f"sectors per request (32 B): {c.sectors_per_request} (fewest possible: {c.ideal_sectors})",
        f"lines per request (128 B):  {c.lines_per_request}",
        f"bytes requested / fetched:  {c.bytes_requested} / {c.bytes_fetched}",
        f"efficiency:                 {percent(c.efficiency)}",
        f"(warp {a.warp} of its block; addresses in bytes from a 256-byte-aligned base)"
        if isinstance(a, GlobalAccess)
        else "(addresses in bytes from the array's base, taken as 256-byte aligned as cudaMalloc gives)",
    ]


def dram_lines(c: Coalescing) -> list[str]:
    """Both levels in words: what L1/L2 fetch (sectors) and what DRAM moves for them (granules), and
    where the granule size comes from (an estimate unless chosen)."""
    d = c.dram
    return [
        f"L1/L2 fetch {count(c.sectors_per_request, 'sector')} ({c.bytes_fetched} B); DRAM moves "
        f"{c.dram_bytes_fetched} bytes in {d.bytes}-byte granules ({count(len(c.dram_granules), 'granule')}, "
        f"{percent(c.dram_efficiency)} of the bytes used) when the sectors miss the L2",
        f"DRAM granularity: {d.basis}",
    ]


PHASE_WORDS = {32: "one request for the warp", 16: "two half-warp requests", 8: "four quarter-warp requests"}


def bank_headline(b: BankConflicts) -> str:
    a = b.access
    kind = "conflict-free" if b.conflict_degree == 1 else f"{b.conflict_degree}-way bank conflict"
    where = f"{a.stride} apart" if isinstance(a, SharedAccess) else "each at its own index"
    return (
        f"{count(a.active_lanes, 'lane')}, {a.elem_bytes}-byte elements {where}: {kind}, "
        f"{count(b.wavefronts, 'wavefront')} (fewest possible {b.ideal_wavefronts})"
    )


def bank_lines(b: BankConflicts) -> list[str]:
    a = b.access
    degree = b.conflict_degree
    return [
        f"served as {PHASE_WORDS[a.lanes_per_phase]}",
        f"conflict degree: {degree}"
        + (" (conflict-free)" if degree == 1 else f" ({degree}-way bank conflict)"),
        f"wavefronts: {b.wavefronts} (fewest possible: {b.ideal_wavefronts})",
    ]


def warp_line(w: WarpBranch) -> str:
    """One warp's branch in words; a partial last warp says so, since its empty lanes lower its
    efficiency without any divergence ("warp 3 (partial: 4 threads in its 32 lanes) ...")."""
    partial = w.lanes < WARP_SIZE
    head = f"warp {w.warp}" + (
        f" (partial: {count(w.lanes, 'thread')} in its {WARP_SIZE} lanes)" if partial else ""
    )
    if w.diverges:
        taken, other = w.active_lanes
        what = (
            f"diverges: {count(taken, 'lane')} {'takes' if taken == 1 else 'take'} the branch, then "
            f"{other} {'runs' if other == 1 else 'run'} the other path"
        )
    elif w.lanes == 1:
        what = "no divergence: its one thread goes one way"
    else:
        what = f"no divergence: all {w.lanes} {'threads' if partial else 'lanes'} go the same way"
    empty = f" ({count(WARP_SIZE - w.lanes, 'lane')} without a thread, idle on every path)" if partial else ""
    return f"{head}: {what}; SIMT efficiency {percent(w.simt_efficiency)}{empty}"


def divergence_headline(d: Divergence) -> str:
    return (
        f"if ({d.branch.condition}), block of {d.block_threads}: {d.diverged_warps} of {len(d.warps)} "
        f"warps diverge; SIMT efficiency {percent(d.simt_efficiency)}"
    )
