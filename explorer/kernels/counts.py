"""Per-source-line counts of a traced kernel, with Nsight Compute's definitions, from the lanes'
recorded accesses and lines: pure arithmetic, the same coalescing and bank rules the Memory page
draws (``explorer.memory``), never a second copy of them.

A *request* is one warp-level execution of one access in the source: the k-th time each lane of a
warp reached that access (lanes of a warp run in step on the hardware, so their k-th executions
are one instruction). Its global sectors are what ``memory.coalescing`` counts for those lanes'
addresses; its shared wavefronts what ``memory.banks`` counts. A *warp execution* of a line is
the k-th time any lane of the warp ran it; its active lanes are the lanes that ran it a k-th time,
and it is *divergent* when those lanes went on to different lines next.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from explorer.memory.banks import BankConflicts, SharedGather, bank_conflicts
from explorer.memory.coalescing import Coalescing, GlobalGather, coalesce

WARP = 32
END = -1  # "next line" of a lane's last line: it left the kernel


@dataclass(frozen=True)
class LaneAccess:
    """One lane's one access, as traced: where in the launch, which line, what it touched."""

    block: int
    warp: int
    lane: int
    line: int
    space: str  # "global" or "shared"
    kind: str  # "load" or "store"
    array: int  # which array (a traced kernel's own numbering)
    occurrence: int  # the how-manieth time this lane made this access (line, space, kind, array)
    address: int  # bytes from the array's base (global) or from the block's shared base
    size: int  # bytes


@dataclass
class LineCounts:
    """What one source line of a kernel did over a launch (Nsight Compute's names)."""

    line: int
    source: str = ""
    global_load_requests: int = 0
    global_load_sectors: int = 0
    global_load_sectors_ideal: int = 0
    global_store_requests: int = 0
    global_store_sectors: int = 0
    global_store_sectors_ideal: int = 0
    shared_load_requests: int = 0
    shared_load_wavefronts: int = 0
    shared_load_wavefronts_ideal: int = 0
    shared_store_requests: int = 0
    shared_store_wavefronts: int = 0
    shared_store_wavefronts_ideal: int = 0
    warp_executions: int = 0
    lane_executions: int = 0
    divergent_warps: int | None = None  # only on a line with a branch
    #: the first warp's first request on this line, for the Memory page's pictures
    first_access: dict[str, Any] | None = field(default=None)
    #: the lanes active on the first warp execution of this line
    first_lanes: list[int] | None = field(default=None)

    @property
    def active_lanes_mean(self) -> float | None:
        return self.lane_executions / self.warp_executions if self.warp_executions else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "source": self.source,
            "global_load_requests": self.global_load_requests,
            "global_load_sectors": self.global_load_sectors,
            "global_load_sectors_ideal": self.global_load_sectors_ideal,
            "global_store_requests": self.global_store_requests,
            "global_store_sectors": self.global_store_sectors,
            "global_store_sectors_ideal": self.global_store_sectors_ideal,
            "shared_load_requests": self.shared_load_requests,
            "shared_load_wavefronts": self.shared_load_wavefronts,
            "shared_load_wavefronts_ideal": self.shared_load_wavefronts_ideal,
            "shared_store_requests": self.shared_store_requests,
            "shared_store_wavefronts": self.shared_store_wavefronts,
            "shared_store_wavefronts_ideal": self.shared_store_wavefronts_ideal,
            "warp_executions": self.warp_executions,
            "active_lanes_mean": self.active_lanes_mean,
            "divergent_warps": self.divergent_warps,
            "first_access": self.first_access,
            "first_lanes": self.first_lanes,
        }


def request_model(
    space: str, lanes: Sequence[int], addresses: Sequence[int], size: int
) -> Coalescing | BankConflicts:
    """One warp-level request as the Memory page's models have it (and draw it)."""
    if space == "global":
        return coalesce(GlobalGather(tuple(addresses), tuple(lanes), size))
    return bank_conflicts(SharedGather(tuple(a // size for a in addresses), size, tuple(lanes)))


def request_cost(space: str, lanes: list[int], addresses: list[int], size: int) -> tuple[int, int]:
    """(sectors or wavefronts, the ideal) of one warp-level request: the Memory page's rules."""
    m = request_model(space, lanes, addresses, size)
    if isinstance(m, Coalescing):
        return m.sectors_per_request, m.ideal_sectors
    return m.wavefronts, m.ideal_wavefronts


def access_counts(accesses: list[LaneAccess], lines: dict[int, LineCounts]) -> None:
    """Add each warp-level request's requests, sectors and wavefronts to its line's counts."""
    groups: dict[tuple[int, int, int, str, str, int, int], dict[int, tuple[int, int]]] = defaultdict(dict)
    for a in accesses:
        key = (a.block, a.warp, a.line, a.space, a.kind, a.array, a.occurrence)
        groups[key][a.lane] = (a.address, a.size)
    for (block, warp, line, space, kind, _array, _k), by_lane in sorted(groups.items()):
        lanes = sorted(by_lane)
        addresses = [by_lane[lane][0] for lane in lanes]
        size = max(by_lane[lane][1] for lane in lanes)
        cost, ideal = request_cost(space, lanes, addresses, size)
        c = lines.setdefault(line, LineCounts(line))
        prefix = f"{space}_{kind}"
        add_request(c, prefix, cost, ideal)
        # the first warp's first request, or its first one that costs more than its ideal: the one
        # worth a picture (a transpose line's store is clean, its shared read is not)
        first = c.first_access
        if first is None or (
            first["excess"] == 0 and cost > ideal and (first["block"], first["warp"]) == (block, warp)
        ):
            c.first_access = {
                "excess": cost - ideal,
                "block": block,
                "warp": warp,
                "space": space,
                "kind": kind,
                "elem_bytes": size,
                "lanes": lanes,
                "addresses": addresses,
            }


def add_request(c: LineCounts, prefix: str, cost: int, ideal: int) -> None:
    """One request's figures into the line's fields of its space and kind (typed, one per pair)."""
    if prefix == "global_load":
        c.global_load_requests += 1
        c.global_load_sectors += cost
        c.global_load_sectors_ideal += ideal
    elif prefix == "global_store":
        c.global_store_requests += 1
        c.global_store_sectors += cost
        c.global_store_sectors_ideal += ideal
    elif prefix == "shared_load":
        c.shared_load_requests += 1
        c.shared_load_wavefronts += cost
        c.shared_load_wavefronts_ideal += ideal
    else:
        c.shared_store_requests += 1
        c.shared_store_wavefronts += cost
        c.shared_store_wavefronts_ideal += ideal


def execution_counts(
    paths: dict[tuple[int, int, int], list[int]], branch_lines: set[int], lines: dict[int, LineCounts]
) -> None:
    """Warp executions, lane executions and divergent warps per line, from each thread's path
    (the lines it ran, in order), keyed by (block, warp, lane)."""
    warps: dict[tuple[int, int], dict[int, list[int]]] = defaultdict(dict)
    for (block, warp, lane), path in paths.items():
        warps[(block, warp)][lane] = path
    for line in branch_lines:
        if line in lines:
            lines[line].divergent_warps = 0
    for (_block, _warp), lanes in sorted(warps.items()):
        # per line: for each lane, the next line after each of its executions of it
        nexts: dict[int, dict[int, list[int]]] = defaultdict(dict)
        for lane, path in lanes.items():
            for i, line in enumerate(path):
                nexts[line].setdefault(lane, []).append(path[i + 1] if i + 1 < len(path) else END)
        for line, by_lane in nexts.items():
            c = lines.setdefault(line, LineCounts(line))
            if line in branch_lines and c.divergent_warps is None:
                c.divergent_warps = 0
            for k in range(max(len(v) for v in by_lane.values())):
                active = sorted(lane for lane, v in by_lane.items() if len(v) > k)
                c.warp_executions += 1
                c.lane_executions += len(active)
                if c.first_lanes is None:
                    c.first_lanes = active
                if line in branch_lines and len({by_lane[lane][k] for lane in active}) > 1:
                    c.divergent_warps = (c.divergent_warps or 0) + 1
