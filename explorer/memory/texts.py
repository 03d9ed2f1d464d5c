"""The words the CLI and the window both show for a memory pattern or a branch: made once, here."""

from __future__ import annotations

from explorer.memory.banks import BankConflicts, SharedAccess
from explorer.memory.coalescing import Coalescing
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
    return (
        f"{a.active_lanes} lanes read {a.elem_bytes}-byte elements {a.stride} apart"
        + (f" from element {a.offset}" if a.offset else "")
        + f": {c.sectors_per_request} sectors of 32 B ({c.lines_per_request} lines of 128 B), "
        f"{percent(c.efficiency)} of the fetched bytes used"
    )


def coalescing_lines(c: Coalescing) -> list[str]:
    a = c.access
    return [
        f"sectors per request (32 B): {c.sectors_per_request} (fewest possible: {c.ideal_sectors})",
        f"lines per request (128 B):  {c.lines_per_request}",
        f"bytes requested / fetched:  {c.bytes_requested} / {c.bytes_fetched}",
        f"efficiency:                 {percent(c.efficiency)}",
        f"(warp {a.warp} of its block; addresses in bytes from a 256-byte-aligned base)",
    ]


PHASE_WORDS = {32: "one request for the warp", 16: "two half-warp requests", 8: "four quarter-warp requests"}


def bank_headline(b: BankConflicts) -> str:
    a = b.access
    kind = "conflict-free" if b.conflict_degree == 1 else f"{b.conflict_degree}-way bank conflict"
    where = f"{a.stride} apart" if isinstance(a, SharedAccess) else "each at its own index"
    return (
        f"{a.active_lanes} lanes, {a.elem_bytes}-byte elements {where}: {kind}, "
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
    if w.diverges:
        what = f"diverges: {w.active_lanes[0]} lanes take the branch, then {w.active_lanes[1]} run the other path"
    else:
        what = f"no divergence: all {w.lanes} lanes go the same way"
    return f"warp {w.warp}: {what}; SIMT efficiency {percent(w.simt_efficiency)}"


def divergence_headline(d: Divergence) -> str:
    return (
        f"if ({d.branch.condition}), block of {d.block_threads}: {d.diverged_warps} of {len(d.warps)} "
        f"warps diverge; SIMT efficiency {percent(d.simt_efficiency)}"
    )
