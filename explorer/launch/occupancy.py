"""Occupancy the way NVIDIA computes it: a port of ``cudaOccMaxActiveBlocksPerMultiprocessor``.

A teaching tool that disagrees with the CUDA runtime teaches the wrong thing, so this follows
``cuda_occupancy.h`` (CUDA 13 toolkit) step by step, and ``tests/launch/test_occupancy_vs_nvidia.py``
compiles that header and compares thousands of cases. The architecture facts the header keeps
in ``switch`` statements (allocation units, sub-partitions, carveouts, blocks per SM) come
from our table instead, so the comparison checks the table too.

Assumptions, the same as the CUDA runtime's defaults for an ordinary kernel: no partitioned
global caching, the kernel opts in to the shared memory it asks for (as it must to launch
with more than the default 48 KB), no static shared memory apart from what is passed, and
barriers or "virtual resources" never limit before the per-SM block limit does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from explorer.devices.limits import ArchLimits
from explorer.launch.config import LaunchValidationError
from explorer.words import count, percent

UNLIMITED = 2**31 - 1  # INT_MAX, the header's "this resource does not limit" (no registers / no smem)

RESOURCE_NAMES = {
    "warps": "warp slots",
    "blocks": "the per-SM block limit",
    "registers": "registers",
    "shared_memory": "shared memory",
}


@dataclass(frozen=True)
class Occupancy:
    """How many blocks of one launch fit on an SM at once, per limit and in all, and the share
    of its warp slots they fill: the occupancy calculator's answer, with the allocation
    granularities it rounded by, so each figure can be shown with how it was reached."""

    threads_per_block: int
    warps_per_block: int
    regs_per_thread: int
    smem_per_block_bytes: int
    blocks_limit_warps: int
    blocks_limit_blocks: int
    blocks_limit_regs: int  # UNLIMITED when the kernel uses no registers
    blocks_limit_smem: int  # UNLIMITED when a block takes no shared memory at all
    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    occupancy: float  # active_warps_per_sm / max_warps_per_sm, 0..1
    limiters: tuple[str, ...]  # every resource whose block limit equals the minimum
    limiter: str  # limiters joined with '+'
    regs_per_block_allocated: int
    smem_per_block_allocated_bytes: int  # rounded to the allocation unit, the driver's reserve included
    smem_carveout_bytes: int  # the shared memory the SM is configured with for this launch
    max_blocks_per_sm: int
    regs_per_sm: int
    reg_alloc_unit: int
    reserved_smem_per_block_bytes: int

    @property
    def occupancy_pct(self) -> float:
        return 100.0 * self.occupancy

    def block_limits(self) -> dict[str, int]:
        return {
            "warps": self.blocks_limit_warps,
            "blocks": self.blocks_limit_blocks,
            "registers": self.blocks_limit_regs,
            "shared_memory": self.blocks_limit_smem,
        }

    @property
    def limiter_text(self) -> str:
        """The limiter in words, as the CLI and the window print it ("shared memory",
        "warps+registers"); ``limiter`` keeps the JSON's snake_case names."""
        return self.limiter.replace("_", " ")

    def explain(self) -> str:
        """What limits this block configuration and what a student could change, in plain words."""
        if self.active_blocks_per_sm == 0:
            reasons = []
            if self.blocks_limit_warps == 0:
                reasons.append(f"{self.threads_per_block} threads is more than a block may have")
            if self.blocks_limit_regs == 0:
                reasons.append(
                    f"{self.regs_per_block_allocated} registers per block is more than the SM can give one block"
                )
            if self.blocks_limit_smem == 0:
                reasons.append(
                    f"{self.smem_per_block_allocated_bytes} bytes of shared memory per block do not fit on the SM"
                )
            return "This block cannot run at all: " + "; ".join(reasons or ["a resource is exhausted"]) + "."
        head = (
            f"Each SM holds {count(self.active_blocks_per_sm, 'block')} "
            f"of {count(self.warps_per_block, 'warp')}: "
            f"{self.active_warps_per_sm} of {self.max_warps_per_sm} warp slots, "
            f"{percent(self.occupancy)} theoretical occupancy."
        )
        parts = [head]
        names = [RESOURCE_NAMES[r] for r in self.limiters]
        parts.append(f"Limited by {_join(names)}.")
        for r in self.limiters:
            if self.occupancy >= 1.0 and r != "warps":
                parts.append(
                    f"{RESOURCE_NAMES[r].capitalize()} {'is' if r == 'shared_memory' else 'are'} exactly used "
                    "up too: any more per block would lower occupancy."
                    if r != "blocks"
                    else "The per-SM block limit is reached too."
                )
            else:
                parts.append(self._advice(r))
        if len(self.limiters) > 1 and self.occupancy < 1.0:
            parts.append("These limits tie, so easing only one of them gains nothing.")
        return " ".join(p for p in parts if p)

    def _advice(self, resource: str) -> str:
        if resource == "warps":
            if self.occupancy >= 1.0:
                return "Every warp slot is in use: this is full occupancy."
            return (
                f"The {self.warps_per_block}-warp blocks do not divide the SM's {self.max_warps_per_sm} warp slots "
                "evenly; a block size that does (a power of two such as 128 or 256) fills them."
            )
        if resource == "blocks":
            return (
                f"An SM runs at most {self.max_blocks_per_sm} blocks at once, so small blocks leave warp slots "
                f"empty; blocks of at least {-(-self.max_warps_per_sm // self.max_blocks_per_sm) * 32} threads fill them."
            )
        if resource == "registers":
            return (
                f"{self.regs_per_thread} registers per thread cost {self.regs_per_block_allocated} per block "
                f"(allocated per warp in units of {self.reg_alloc_unit}) out of {self.regs_per_sm} per SM; "
                "fewer registers (__launch_bounds__, -maxrregcount) would fit more blocks."
            )
        if resource == "shared_memory":
            reserve = (
                f", {self.reserved_smem_per_block_bytes} of them reserved by the driver"
                if self.reserved_smem_per_block_bytes
                else ""
            )
            return (
                f"Each block takes {self.smem_per_block_allocated_bytes} bytes of shared memory{reserve}, "
                f"out of {self.smem_carveout_bytes} on the SM; less shared memory per block would fit more blocks."
            )
        return ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; a resource that sets no limit (UNLIMITED) is null."""
        data = asdict(self)
        for key in ("blocks_limit_regs", "blocks_limit_smem"):
            if data[key] == UNLIMITED:
                data[key] = None
        data["limiters"] = list(self.limiters)
        data["occupancy_pct"] = round(self.occupancy_pct, 4)
        return data


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def align_carveout(limits: ArchLimits, size_bytes: int) -> int | None:
    """The smallest supported SM shared-memory size that holds ``size_bytes`` (Turing has no 0 KB
    setting, so 0 becomes 32 KB there); None when none does. cudaOccAlignUpShmemSizeVoltaPlus."""
    for c in limits.smem_carveouts_bytes:
        if c >= size_bytes:
            return c
    return None


def preferred_carveout(limits: ArchLimits, carveout_bytes: int | None, carveout_percent: int | None) -> int:
    """The shared-memory size the launch prefers (cudaOccSMemPerMultiprocessor)."""
    if limits.cc[0] < 7:
        return limits.smem_per_sm_bytes  # Maxwell and Pascal: dedicated shared memory, no choice
    if carveout_percent is not None:
        if not -1 <= carveout_percent <= 100:
            raise LaunchValidationError(
                [f"shared memory carveout is {carveout_percent}%; it must be 0..100 (or -1 for the default)"]
            )
        wanted = (
            limits.smem_per_sm_bytes
            if carveout_percent == -1
            else carveout_percent * limits.smem_per_sm_bytes // 100
        )
    elif carveout_bytes is not None:
        wanted = carveout_bytes
    else:
        wanted = limits.smem_per_sm_bytes
    aligned = align_carveout(limits, wanted)
    if aligned is None:
        sizes = ", ".join(str(c) for c in limits.smem_carveouts_bytes)
        raise LaunchValidationError(
            [f"shared memory carveout is {wanted} bytes; {limits.label} supports {sizes} bytes per SM"]
        )
    return aligned


def occupancy(
    limits: ArchLimits,
    threads_per_block: int,
    regs_per_thread: int = 32,
    smem_per_block_bytes: int = 0,
    carveout_bytes: int | None = None,
    *,
    carveout_percent: int | None = None,
) -> Occupancy:
    """Active blocks and warps per SM for one block configuration.

    ``carveout_bytes`` is the preferred SM shared-memory size (rounded up to a size the SM
    supports, as the driver does); ``carveout_percent`` is the same preference as CUDA's
    ``cudaFuncAttributePreferredSharedMemoryCarveout`` (-1 default, 0..100). With neither, the
    driver's default applies: the largest carveout. Out-of-range but positive values give zero
    active blocks, as in the header; only non-positive sizes raise.
    """
    if threads_per_block < 1 or regs_per_thread < 0 or smem_per_block_bytes < 0:
        raise LaunchValidationError(
            [
                f"occupancy needs threads per block >= 1, registers >= 0 and shared memory >= 0; got "
                f"{threads_per_block}, {regs_per_thread}, {smem_per_block_bytes}"
            ]
        )
    warp = limits.warp_size
    warps_per_block = -(-threads_per_block // warp)
    max_warps = limits.max_threads_per_sm // warp

    regs_limit, regs_alloc = blocks_by_registers(limits, warps_per_block, regs_per_thread)
    warps_limit = blocks_by_warps(limits, threads_per_block, warps_per_block)
    blocks_limit = limits.max_blocks_per_sm
    preference = preferred_carveout(limits, carveout_bytes, carveout_percent)
    smem_limit, allocated, carveout = blocks_by_shared_memory(limits, smem_per_block_bytes, preference)
    reserved = limits.reserved_smem_per_block_bytes

    active = min(regs_limit, smem_limit, warps_limit, blocks_limit)
    by_resource = {
        "warps": warps_limit,
        "blocks": blocks_limit,
        "registers": regs_limit,
        "shared_memory": smem_limit,
    }
    limiters = tuple(name for name, value in by_resource.items() if value == active)
    active_warps = active * warps_per_block
    return Occupancy(
        threads_per_block=threads_per_block,
        warps_per_block=warps_per_block,
        regs_per_thread=regs_per_thread,
        smem_per_block_bytes=smem_per_block_bytes,
        blocks_limit_warps=warps_limit,
        blocks_limit_blocks=blocks_limit,
        blocks_limit_regs=regs_limit,
        blocks_limit_smem=smem_limit,
        active_blocks_per_sm=active,
        active_warps_per_sm=active_warps,
        max_warps_per_sm=max_warps,
        occupancy=active_warps / max_warps if max_warps else 0.0,
        limiters=limiters,
        limiter="+".join(limiters),
        regs_per_block_allocated=regs_alloc,
        smem_per_block_allocated_bytes=allocated,
        smem_carveout_bytes=carveout,
        max_blocks_per_sm=limits.max_blocks_per_sm,
        regs_per_sm=limits.regs_per_sm,
        reg_alloc_unit=limits.reg_alloc_unit,
        reserved_smem_per_block_bytes=reserved,
    )


def blocks_by_warps(limits: ArchLimits, threads_per_block: int, warps_per_block: int) -> int:
    """cudaOccMaxBlocksPerSMWarpsLimit (partitioned global caching off)."""
    if threads_per_block > limits.max_threads_per_block:
        return 0
    return (limits.max_threads_per_sm // limits.warp_size) // warps_per_block


def blocks_by_registers(limits: ArchLimits, warps_per_block: int, regs: int) -> tuple[int, int]:
    """cudaOccMaxBlocksPerSMRegsLimit, with GP100's check against the 4-partition Pascal chips."""
    limit, allocated = _regs_limit(limits, limits.reg_sub_partitions, warps_per_block, regs)
    if limits.cc == (6, 0) and limit and _regs_limit(limits, 4, warps_per_block, regs)[0] == 0:
        limit = 0
    return limit, allocated


def blocks_by_shared_memory(limits: ArchLimits, smem_bytes: int, preference: int) -> tuple[int, int, int]:
    """cudaOccMaxBlocksPerSMSmemLimit -> (blocks, bytes allocated per block, SM carveout used).

    The kernel is taken to have opted in to exactly ``smem_bytes`` of dynamic shared memory,
    so the opt-in per-block maximum applies once the block needs more than the default.
    """
    major = limits.cc[0]
    reserved = limits.reserved_smem_per_block_bytes
    total = smem_bytes + reserved
    allocated = _round_up(total, limits.smem_alloc_unit_bytes)
    if major < 7 or total <= limits.max_smem_per_block_bytes:
        per_block_limit = limits.max_smem_per_block_bytes
    else:
        per_block_limit = limits.max_smem_per_block_optin_bytes
    if major >= 8:
        per_block_limit += reserved  # the driver's reserve does not count against the block
    if allocated > per_block_limit:
        return 0, allocated, preference
    carveout = preference
    if preference < allocated:
        # The preference is only a hint: the driver grows the carveout until one block fits.
        if major >= 7:
            aligned = align_carveout(limits, allocated)
            if aligned is None:
                raise LaunchValidationError(
                    [f"a block's {allocated} bytes of shared memory exceed every carveout of {limits.label}"]
                )
            carveout = aligned
        else:
            carveout = limits.smem_per_sm_bytes
    return (carveout // allocated if allocated > 0 else UNLIMITED), allocated, carveout


def _regs_limit(limits: ArchLimits, sub_partitions: int, warps: int, regs: int) -> tuple[int, int]:
    """(blocks per SM allowed by registers, registers allocated per block)."""
    per_warp = _round_up(regs * limits.warp_size, limits.reg_alloc_unit)
    allocated = per_warp * warps
    # The hardware checks the block as if every sub-partition received its warps at once.
    assumed = per_warp * _round_up(warps, sub_partitions)
    if (
        limits.max_regs_per_block < assumed
        or limits.max_regs_per_block < allocated
        or regs > limits.max_regs_per_thread
    ):
        return 0, allocated
    if per_warp == 0:
        return UNLIMITED, allocated
    warps_per_sub_partition = (limits.regs_per_sm // sub_partitions) // per_warp
    return (warps_per_sub_partition * sub_partitions) // warps, allocated
