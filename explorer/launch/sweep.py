"""The occupancy calculator's three graphs: occupancy as block size, registers or shared memory varies.

Each sweep holds the other two limits fixed and varies one, point by point from
``explorer.launch.occupancy``'s per-limit block counts, so every point is the exact figure the
calculator gives. Apart from the occupancy model so that a launch in a terminal never builds
these graphs' record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from explorer.devices.limits import ArchLimits
from explorer.launch.config import LaunchValidationError
from explorer.launch.occupancy import (
    blocks_by_registers,
    blocks_by_shared_memory,
    blocks_by_warps,
    occupancy,
    preferred_carveout,
)


@dataclass(frozen=True)
class Sweep:
    """One of the occupancy calculator's three graphs: occupancy as one parameter varies."""

    parameter: str  # "threads_per_block", "regs_per_thread", "smem_per_block_bytes"
    xs: list[int]
    occupancy: list[float]
    current_x: int
    current_occupancy: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _sweep(parameter: str, xs: list[int], fn: Callable[[int], float], current_x: int) -> Sweep:
    values = [fn(x) for x in xs]
    try:
        current = fn(current_x)
    except LaunchValidationError:
        current = 0.0
    return Sweep(parameter, xs, values, current_x, current)


def sweep_block_size(
    limits: ArchLimits, regs_per_thread: int, smem_per_block_bytes: int, current_threads: int
) -> Sweep:
    """Occupancy for every whole-warp block size up to the per-block maximum."""
    xs = list(range(limits.warp_size, limits.max_threads_per_block + 1, limits.warp_size))
    return _sweep(
        "threads_per_block",
        xs,
        lambda t: occupancy(limits, t, regs_per_thread, smem_per_block_bytes).occupancy,
        current_threads,
    )


def sweep_registers(
    limits: ArchLimits, threads_per_block: int, smem_per_block_bytes: int, current_regs: int
) -> Sweep:
    """Occupancy for 1 .. max registers per thread (only the register limit varies along it)."""
    warps = -(-threads_per_block // limits.warp_size)
    fixed = min(
        blocks_by_warps(limits, threads_per_block, warps),
        limits.max_blocks_per_sm,
        blocks_by_shared_memory(limits, smem_per_block_bytes, preferred_carveout(limits, None, None))[0],
    )
    max_warps = limits.max_threads_per_sm // limits.warp_size

    def occ(regs: int) -> float:
        return min(fixed, blocks_by_registers(limits, warps, regs)[0]) * warps / max_warps

    return _sweep("regs_per_thread", list(range(1, limits.max_regs_per_thread + 1)), occ, current_regs)


def sweep_shared_memory(
    limits: ArchLimits, threads_per_block: int, regs_per_thread: int, current_smem: int
) -> Sweep:
    """Occupancy from 0 to the opt-in maximum, one point per allocation unit (every step is exact)."""
    warps = -(-threads_per_block // limits.warp_size)
    fixed = min(
        blocks_by_warps(limits, threads_per_block, warps),
        limits.max_blocks_per_sm,
        blocks_by_registers(limits, warps, regs_per_thread)[0],
    )
    max_warps = limits.max_threads_per_sm // limits.warp_size
    preference = preferred_carveout(limits, None, None)

    def occ(smem: int) -> float:
        return min(fixed, blocks_by_shared_memory(limits, smem, preference)[0]) * warps / max_warps

    xs = list(range(0, limits.max_smem_per_block_optin_bytes + 1, limits.smem_alloc_unit_bytes))
    return _sweep("smem_per_block_bytes", xs, occ, current_smem)
