"""How a whole launch lands on the GPU: blocks, warps, idle lanes, SMs and waves, in closed form.

A grid may hold 2^31-1 x 65535 x 65535 blocks, so nothing here is ever a list per block or
per thread: every question ("which SM runs block 40000?", "is thread 17 of block 5 idle?")
is answered by arithmetic on the block and thread numbers, in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from explorer.devices.model import Device
from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, notes, validate
from explorer.launch.limits import ArchLimits, limits_for_device
from explorer.launch.occupancy import Occupancy, occupancy

SCHEDULER_NOTE = (
    "Which SM runs which block is decided by the GPU's block scheduler, whose rules NVIDIA does not "
    "publish; they also change with what else is running. This view uses a simple documented model: "
    "blocks are handed out in order (x fastest, then y, then z), one per SM in turn (round-robin), "
    "until every SM holds as many blocks as occupancy allows; that is one wave. The next wave starts "
    "when the first has finished. Real GPUs start a new block as soon as any block finishes, so the "
    "waves blur, but their count and the idle SMs in the last one are what decide the run time."
)


@dataclass(frozen=True)
class ThreadInfo:
    block_idx: Dim3
    thread_idx: Dim3
    block_dim: Dim3
    grid_dim: Dim3
    block_linear: int
    thread_linear: int
    global_linear: int
    warp: int
    lane: int
    sm: int
    wave: int
    idle: bool  # global index past the problem size n: the kernel's bounds check skips it

    def formula(self) -> str:
        """The index arithmetic a kernel does, with this thread's numbers filled in."""
        dims = max(self.grid_dim.dims_used, self.block_dim.dims_used)
        if dims == 1:
            return (
                f"blockIdx.x * blockDim.x + threadIdx.x = {self.block_idx.x} * {self.block_dim.x} + "
                f"{self.thread_idx.x} = {self.global_linear}"
            )
        b_sym, b_num = _linear_terms("blockIdx", "gridDim", self.block_idx, self.grid_dim, dims)
        t_sym, t_num = _linear_terms("threadIdx", "blockDim", self.thread_idx, self.block_dim, dims)
        size_sym = " * ".join(f"blockDim.{a}" for a in "xyz"[:dims])
        size_num = self.block_dim.count if dims == 3 else self.block_dim.x * self.block_dim.y
        return (
            f"({b_sym}) * ({size_sym}) + ({t_sym}) = ({b_num}) * {size_num} + ({t_num}) "
            f"= {self.block_linear} * {size_num} + {self.thread_linear} = {self.global_linear}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "block_idx": list(self.block_idx.as_tuple()),
            "thread_idx": list(self.thread_idx.as_tuple()),
            "block_linear": self.block_linear,
            "thread_linear": self.thread_linear,
            "global_linear": self.global_linear,
            "warp": self.warp,
            "lane": self.lane,
            "sm": self.sm,
            "wave": self.wave,
            "idle": self.idle,
            "formula": self.formula(),
        }


def _linear_terms(idx: str, dim: str, i: Dim3, d: Dim3, dims: int) -> tuple[str, str]:
    sym = [f"{idx}.x", f"{idx}.y * {dim}.x"]
    num = [f"{i.x}", f"{i.y} * {d.x}"]
    if dims == 3:
        sym.append(f"{idx}.z * {dim}.x * {dim}.y")
        num.append(f"{i.z} * {d.x} * {d.y}")
    return " + ".join(sym), " + ".join(num)


@dataclass(frozen=True)
class BlockPlacement:
    block_linear: int
    block_idx: Dim3
    sm: int
    wave: int
    slot: int  # which of the SM's resident-block slots it occupies in that wave


@dataclass(frozen=True)
class LaunchPlan:
    config: LaunchConfig
    device_name: str
    sm_count: int
    occupancy: Occupancy
    total_blocks: int
    threads_per_block: int
    total_threads: int
    warps_per_block: int
    total_warps: int
    last_warp_active_lanes: int  # lanes holding a thread in each block's last warp (warp size when full)
    idle_threads: int  # threads whose global index is >= n (0 without n)
    uncovered_elements: int  # elements of n beyond the last thread: the grid is too small
    resident_blocks_per_sm: int
    concurrent_blocks: int  # sm_count * resident_blocks_per_sm
    waves: int
    last_wave_blocks: int
    last_wave_fill: float  # last_wave_blocks / concurrent_blocks
    warp_size: int = 32
    notes: tuple[str, ...] = field(default=())

    # ----------------------------------------------------------------- blocks

    def _check_block(self, block_linear: int) -> None:
        if not 0 <= block_linear < self.total_blocks:
            raise LaunchValidationError(
                [f"block {block_linear} is outside the grid, which has blocks 0 .. {self.total_blocks - 1}"]
            )

    def placement(self, block_linear: int) -> BlockPlacement:
        """Round-robin in block order: see SCHEDULER_NOTE (a model, not NVIDIA's real scheduler)."""
        self._check_block(block_linear)
        wave, r = divmod(block_linear, self.concurrent_blocks)
        slot, sm = divmod(r, self.sm_count)
        return BlockPlacement(block_linear, self.block_index(block_linear), sm, wave, slot)

    def blocks_in_wave(self, wave: int) -> range:
        start = wave * self.concurrent_blocks
        if wave < 0 or start >= self.total_blocks:
            return range(0)
        return range(start, min(start + self.concurrent_blocks, self.total_blocks))

    def blocks_on_sm_in_wave(self, sm: int, wave: int) -> range:
        """The blocks the model puts on one SM during one wave (every sm_count-th block of the wave)."""
        wave_blocks = self.blocks_in_wave(wave)
        if not 0 <= sm < self.sm_count or not wave_blocks:
            return range(0)
        return range(wave_blocks.start + sm, wave_blocks.stop, self.sm_count)

    def block_index(self, block_linear: int) -> Dim3:
        self._check_block(block_linear)
        g = self.config.grid
        rest, x = divmod(block_linear, g.x)
        z, y = divmod(rest, g.y)
        return Dim3(x, y, z)

    def block_linear(self, block_idx: Dim3) -> int:
        g = self.config.grid
        if not (0 <= block_idx.x < g.x and 0 <= block_idx.y < g.y and 0 <= block_idx.z < g.z):
            raise LaunchValidationError([f"blockIdx {block_idx} is outside the grid {g}"])
        return block_idx.x + g.x * (block_idx.y + g.y * block_idx.z)

    # ----------------------------------------------------------------- threads

    def thread_index(self, thread_linear: int) -> Dim3:
        if not 0 <= thread_linear < self.threads_per_block:
            raise LaunchValidationError(
                [
                    f"thread {thread_linear} is outside the block, which has threads 0 .. {self.threads_per_block - 1}"
                ]
            )
        b = self.config.block
        rest, x = divmod(thread_linear, b.x)
        z, y = divmod(rest, b.y)
        return Dim3(x, y, z)

    def thread_linear(self, thread_idx: Dim3) -> int:
        b = self.config.block
        if not (0 <= thread_idx.x < b.x and 0 <= thread_idx.y < b.y and 0 <= thread_idx.z < b.z):
            raise LaunchValidationError([f"threadIdx {thread_idx} is outside the block {b}"])
        return thread_idx.x + b.x * (thread_idx.y + b.y * thread_idx.z)

    def thread(self, block_linear: int, thread_linear: int) -> ThreadInfo:
        place = self.placement(block_linear)
        t_idx = self.thread_index(thread_linear)
        global_linear = block_linear * self.threads_per_block + thread_linear
        warp, lane = divmod(thread_linear, self.warp_size)
        n = self.config.n
        return ThreadInfo(
            block_idx=place.block_idx,
            thread_idx=t_idx,
            block_dim=self.config.block,
            grid_dim=self.config.grid,
            block_linear=block_linear,
            thread_linear=thread_linear,
            global_linear=global_linear,
            warp=warp,
            lane=lane,
            sm=place.sm,
            wave=place.wave,
            idle=n is not None and global_linear >= n,
        )

    def thread_at_global(self, global_linear: int) -> ThreadInfo:
        """The thread that handles element ``global_linear`` of a 1-D problem."""
        if not 0 <= global_linear < self.total_threads:
            raise LaunchValidationError(
                [
                    f"global index {global_linear} is outside the launch, which has threads 0 .. {self.total_threads - 1}"
                ]
            )
        block, thread = divmod(global_linear, self.threads_per_block)
        return self.thread(block, thread)

    # ----------------------------------------------------------------- warps and lanes

    def warp_active_lanes(self, block_linear: int, warp: int) -> int:
        """Lanes of this warp that hold a thread at all (the last warp of a block may be partial)."""
        self._check_block(block_linear)
        if not 0 <= warp < self.warps_per_block:
            return 0
        return self.last_warp_active_lanes if warp == self.warps_per_block - 1 else self.warp_size

    def warp_busy_lanes(self, block_linear: int, warp: int) -> int:
        """Lanes of this warp whose thread is inside the problem size n (all active lanes without n)."""
        active = self.warp_active_lanes(block_linear, warp)
        n = self.config.n
        if n is None:
            return active
        first = block_linear * self.threads_per_block + warp * self.warp_size
        return max(0, min(active, n - first))

    def block_busy_threads(self, block_linear: int) -> int:
        """Threads of this block inside the problem size n."""
        self._check_block(block_linear)
        n = self.config.n
        if n is None:
            return self.threads_per_block
        return max(0, min(self.threads_per_block, n - block_linear * self.threads_per_block))

    # ----------------------------------------------------------------- export

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device_name,
            "config": self.config.to_dict(),
            "sm_count": self.sm_count,
            "total_blocks": self.total_blocks,
            "threads_per_block": self.threads_per_block,
            "total_threads": self.total_threads,
            "warps_per_block": self.warps_per_block,
            "total_warps": self.total_warps,
            "warp_size": self.warp_size,
            "last_warp_active_lanes": self.last_warp_active_lanes,
            "idle_threads": self.idle_threads,
            "uncovered_elements": self.uncovered_elements,
            "resident_blocks_per_sm": self.resident_blocks_per_sm,
            "concurrent_blocks": self.concurrent_blocks,
            "waves": self.waves,
            "last_wave_blocks": self.last_wave_blocks,
            "last_wave_fill": self.last_wave_fill,
            "occupancy": self.occupancy.to_dict(),
            "notes": list(self.notes),
            "scheduler_model": "round-robin in block order (the real block scheduler is not public)",
        }


def plan_launch(config: LaunchConfig, device: Device, limits: ArchLimits | None = None) -> LaunchPlan:
    """Validate ``config`` against ``device`` and work out its dispatch; raises LaunchValidationError."""
    if limits is None:
        limits = limits_for_device(device)
    problems = validate(config, limits, device.name)
    if not device.sm_count or device.sm_count < 1:
        problems.append(f"{device.name} does not report its number of SMs, so blocks cannot be placed")
    if problems:
        raise LaunchValidationError(problems)
    tpb = config.block.count
    occ = occupancy(limits, tpb, config.regs_per_thread, config.shared_mem_bytes)
    if occ.active_blocks_per_sm < 1:
        raise LaunchValidationError([occ.explain()])
    sm_count = int(device.sm_count)
    total_blocks = config.grid.count
    total_threads = total_blocks * tpb
    warp = limits.warp_size
    warps_per_block = -(-tpb // warp)
    concurrent = sm_count * occ.active_blocks_per_sm
    waves = -(-total_blocks // concurrent)
    last_wave_blocks = total_blocks - (waves - 1) * concurrent
    n = config.n
    plan_notes = list(notes(config, limits))
    uncovered = max(0, n - total_threads) if n is not None else 0
    if uncovered:
        plan_notes.append(
            f"the launch has {total_threads} threads but n is {n}: elements {total_threads} .. {n - 1} "
            "are never touched (use more blocks, ceil(n / threads per block), or a grid-stride loop)"
        )
    return LaunchPlan(
        config=config,
        device_name=device.name,
        sm_count=sm_count,
        occupancy=occ,
        total_blocks=total_blocks,
        threads_per_block=tpb,
        total_threads=total_threads,
        warps_per_block=warps_per_block,
        total_warps=total_blocks * warps_per_block,
        last_warp_active_lanes=tpb - (warps_per_block - 1) * warp,
        idle_threads=max(0, total_threads - n) if n is not None else 0,
        uncovered_elements=uncovered,
        resident_blocks_per_sm=occ.active_blocks_per_sm,
        concurrent_blocks=concurrent,
        waves=waves,
        last_wave_blocks=last_wave_blocks,
        last_wave_fill=last_wave_blocks / concurrent,
        warp_size=warp,
        notes=tuple(plan_notes),
    )


def blocks_for(n: int, threads_per_block: int) -> int:
    """ceil(n / threads_per_block): the grid size that covers n elements."""
    return -(-n // threads_per_block)
