"""How a whole launch lands on the GPU: blocks, warps, idle lanes, SMs and waves, in closed form.

A grid may hold 2^31-1 x 65535 x 65535 blocks, so nothing here is ever a list per block or
per thread: every question ("which SM runs block 40000?", "is thread 17 of block 5 idle?")
is answered by arithmetic on the block and thread numbers, in microseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from explorer.devices.limits import ArchLimits, limits_for_device
from explorer.devices.model import Gpu
from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, notes, validate
from explorer.launch.occupancy import Occupancy, occupancy

if TYPE_CHECKING:  # built when asked for (the window, a thread): a terminal's summary needs none
    from explorer.launch.plan_records import BlockPlacement, IdleRun, ThreadInfo, WaveFill, WaveIdle

SCHEDULER_NOTE = (
    "Which SM runs which block is decided by the GPU's block scheduler, whose rules NVIDIA does not "
    "publish; they also change with what else is running. This view uses a simple documented model: "
    "blocks are handed out in order (x fastest, then y, then z), one per SM in turn (round-robin), "
    "until every SM holds as many blocks as occupancy allows; that is one wave (the Timeline's "
    "placement free with blocks of equal length places them the same). The next wave starts "
    "when the first has finished. Real GPUs start a new block as soon as any block finishes, so the "
    "waves blur, but their count and the idle SMs in the last one are what decide the run time."
)


def _fill_counts(dispatched: int, sm_count: int) -> tuple[int, int]:
    return divmod(dispatched, sm_count)


def _busy_before(t: int, block: Dim3, rem: tuple[int, int, int]) -> int:
    """Of a block's first ``t`` threads (x fastest), those inside the problem on every axis.

    ``rem`` is how much of the block lies inside the problem along x, y and z. The threads before
    ``t`` are whole z-planes, then whole rows, then part of a row, so each part is a product.
    """
    rx, ry, rz = rem
    z0, r = divmod(t, block.x * block.y)
    y0, x0 = divmod(r, block.x)
    busy = min(z0, rz) * ry * rx
    if z0 < rz:
        busy += min(y0, ry) * rx
        if y0 < ry:
            busy += min(x0, rx)
    return busy


@lru_cache(maxsize=512)
def _busy_lanes_per_warp(block: Dim3, rem: tuple[int, int, int], warp_size: int) -> tuple[int, ...]:
    """Busy lanes of each warp of a block that lies ``rem`` inside the problem (few kinds per launch)."""
    tpb = block.count
    return tuple(
        _busy_before(min(lo + warp_size, tpb), block, rem) - _busy_before(lo, block, rem)
        for lo in range(0, tpb, warp_size)
    )


@lru_cache(maxsize=512)
def _busy_masks_per_warp(block: Dim3, rem: tuple[int, int, int], warp_size: int) -> tuple[int, ...]:
    """Which lanes of each warp are inside the problem, as bit masks: one kind of edge block, cached,
    so this visits a block's threads once per kind of edge (at most 27 kinds), never per block."""
    tpb, plane = block.count, block.x * block.y
    masks = []
    for lo in range(0, tpb, warp_size):
        mask = 0
        for lane, t in enumerate(range(lo, min(lo + warp_size, tpb))):
            z, r = divmod(t, plane)
            y, x = divmod(r, block.x)
            if x < rem[0] and y < rem[1] and z < rem[2]:
                mask |= 1 << lane
        masks.append(mask)
    return tuple(masks)


def _edge_run(start: int, stop: int, block: Dim3, rem: tuple[int, int, int], warp_size: int) -> IdleRun:
    from explorer.launch.plan_records import IdleRun

    return IdleRun(
        start, stop, _busy_lanes_per_warp(block, rem, warp_size), _busy_masks_per_warp(block, rem, warp_size)
    )


def _inside(extent: int, block_dim: int, block_coord: int) -> int:
    """How many of a block's threads along one axis fall inside the problem's extent on that axis."""
    return max(0, min(block_dim, extent - block_coord * block_dim))


@dataclass(frozen=True)
class LaunchPlan:
    """A whole launch on one device, in closed form: its blocks, warps and idle threads, how
    many blocks run at once, and the waves they take. The window, the CLI and the lessons all
    read these numbers, so each page describes the same launch the same way."""

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
    idle_threads: (
        int  # threads outside the problem: global index >= n, or outside the extent (0 without either)
    )
    uncovered_elements: int  # elements of the problem no thread reaches: the grid is too small
    resident_blocks_per_sm: int
    concurrent_blocks: int  # sm_count * resident_blocks_per_sm
    waves: int
    last_wave_blocks: int
    last_wave_fill: float  # last_wave_blocks / concurrent_blocks
    warp_size: int = 32
    notes: tuple[str, ...] = field(default=())

    # ----------------------------------------------------------------- how much of the GPU it fills

    @property
    def peak_resident_warps(self) -> int:
        """Warps on the GPU at the fullest moment (the first wave): theoretical occupancy says how
        full an SM *could* be; this says how full the launch makes the whole GPU."""
        return min(self.total_blocks, self.concurrent_blocks) * self.warps_per_block

    @property
    def warp_slots(self) -> int:
        """Warp slots of the whole GPU: SMs x the per-SM maximum."""
        return self.sm_count * self.occupancy.max_warps_per_sm

    @property
    def gpu_fill(self) -> float:
        """peak_resident_warps / warp_slots, 0..1 (one 33-thread block on 16 SMs: 2 / 512)."""
        return self.peak_resident_warps / self.warp_slots

    @property
    def busy_sms(self) -> int:
        """SMs that get a block at all (fewer blocks than SMs leave the rest idle for the whole run)."""
        return min(self.total_blocks, self.sm_count)

    # ----------------------------------------------------------------- blocks

    def _check_block(self, block_linear: int) -> None:
        if not 0 <= block_linear < self.total_blocks:
            raise LaunchValidationError(
                [f"block {block_linear} is outside the grid, which has blocks 0 .. {self.total_blocks - 1}"]
            )

    def placement(self, block_linear: int) -> BlockPlacement:
        """Round-robin in block order: see SCHEDULER_NOTE (a model, not NVIDIA's real scheduler)."""
        from explorer.launch.plan_records import BlockPlacement

        self._check_block(block_linear)
        wave, r = divmod(block_linear, self.concurrent_blocks)
        slot, sm = divmod(r, self.sm_count)
        return BlockPlacement(block_linear, self.block_index(block_linear), sm, wave, slot)

    def blocks_in_wave(self, wave: int) -> range:
        start = wave * self.concurrent_blocks
        if wave < 0 or start >= self.total_blocks:
            return range(0)
        return range(start, min(start + self.concurrent_blocks, self.total_blocks))

    def wave_fill(self, wave: int, dispatched: int | None = None) -> WaveFill:
        """The slots taken in ``wave`` once its first ``dispatched`` blocks landed (all when None)."""
        from explorer.launch.plan_records import WaveFill

        blocks = self.blocks_in_wave(wave)
        count = len(blocks) if dispatched is None else max(0, min(dispatched, len(blocks)))
        full, extra = _fill_counts(count, self.sm_count)
        return WaveFill(wave, blocks.start if blocks else 0, count, self.sm_count, full, extra)

    def idle_blocks_in_wave(self, wave: int) -> WaveIdle:
        """The blocks of ``wave`` with idle lanes, as runs; found from N, never by visiting every block."""
        from explorer.launch.plan_records import IdleRun, WaveIdle, merge_runs

        blocks = self.blocks_in_wave(wave)
        n = self.config.n
        if blocks and self.config.extent is not None:
            return WaveIdle(blocks.start, merge_runs(self._idle_runs_2d(blocks)))
        if not blocks or n is None:
            return WaveIdle(blocks.start if blocks else 0, ())
        # with a 1-D N the idle threads are a suffix of the grid: one partial block, then idle ones
        tpb = self.threads_per_block
        partial, empty = n // tpb, -(-n // tpb)
        runs = []
        if blocks.start <= partial < blocks.stop and partial < empty:
            busy = self.block_busy_lanes(partial)
            assert busy is not None
            runs.append(IdleRun(partial - blocks.start, partial + 1 - blocks.start, busy))
        first_empty = max(empty, blocks.start)
        if first_empty < blocks.stop:
            runs.append(IdleRun(first_empty - blocks.start, len(blocks), (0,) * self.warps_per_block))
        return WaveIdle(blocks.start, merge_runs(runs))

    def block_busy_lanes(self, block_linear: int) -> tuple[int, ...] | None:
        """Busy lanes per warp of a block, or None when every thread it holds is inside the problem."""
        self._check_block(block_linear)
        if self.config.extent is not None:
            inside = self._block_inside(block_linear)
            if inside == self.config.block.as_tuple():
                return None
            return _busy_lanes_per_warp(self.config.block, inside, self.warp_size)
        n = self.config.n
        if n is None or (block_linear + 1) * self.threads_per_block <= n:
            return None
        return tuple(self.warp_busy_lanes(block_linear, w) for w in range(self.warps_per_block))

    def _block_inside(self, block_linear: int) -> tuple[int, int, int]:
        """Threads of the block inside the extent along x, y and z."""
        extent = self.config.extent
        assert extent is not None
        idx, b = self.block_index(block_linear), self.config.block
        return (_inside(extent.x, b.x, idx.x), _inside(extent.y, b.y, idx.y), _inside(extent.z, b.z, idx.z))

    def _idle_runs_2d(self, blocks: range) -> list[IdleRun]:
        """Idle runs of a wave for a per-axis extent, walking the grid rows the wave touches.

        Blocks with x below ``extent.x // blockDim.x`` are whole along x, so in a row that is whole
        along y and z only the blocks at the right edge have idle lanes; in an edge row all do.
        """
        extent, b, g = self.config.extent, self.config.block, self.config.grid
        assert extent is not None
        full_x, full_y, full_z = extent.x // b.x, extent.y // b.y, extent.z // b.z
        runs: list[IdleRun] = []
        start, stop = blocks.start, blocks.stop
        for row in range(start // g.x, (stop - 1) // g.x + 1):
            z, y = divmod(row, g.y)
            x0, x1 = max(start - row * g.x, 0), min(stop - row * g.x, g.x)
            ry, rz = _inside(extent.y, b.y, y), _inside(extent.z, b.z, z)
            base = row * g.x - start  # dispatch order of block x = 0 of this row
            if (y >= full_y or z >= full_z) and x0 < min(x1, full_x):  # an edge row: whole along x, not y/z
                runs.append(_edge_run(base + x0, base + min(x1, full_x), b, (b.x, ry, rz), self.warp_size))
            for x in range(max(x0, full_x), x1):
                rx = _inside(extent.x, b.x, x)
                if rx == 0:  # from here on every block of the row lies past the extent: one run
                    runs.append(_edge_run(base + x, base + x1, b, (0, ry, rz), self.warp_size))
                    break
                runs.append(_edge_run(base + x, base + x + 1, b, (rx, ry, rz), self.warp_size))
        return runs

    def blocks_on_sm_in_wave(self, sm: int, wave: int) -> range:
        """The blocks the model puts on one SM during one wave (every sm_count-th block of the wave)."""
        wave_blocks = self.blocks_in_wave(wave)
        if not 0 <= sm < self.sm_count or not wave_blocks:
            return range(0)
        return range(wave_blocks.start + sm, wave_blocks.stop, self.sm_count)

    def block_index(self, block_linear: int) -> Dim3:
        self._check_block(block_linear)
        return self.config.grid.unflatten(block_linear)

    def block_linear(self, block_idx: Dim3) -> int:
        g = self.config.grid
        if not g.contains(block_idx):
            raise LaunchValidationError([f"blockIdx {block_idx} is outside the grid {g}"])
        return g.flatten(block_idx)

    # ----------------------------------------------------------------- threads

    def thread_index(self, thread_linear: int) -> Dim3:
        if not 0 <= thread_linear < self.threads_per_block:
            raise LaunchValidationError(
                [
                    f"thread {thread_linear} is outside the block, which has threads 0 .. {self.threads_per_block - 1}"
                ]
            )
        return self.config.block.unflatten(thread_linear)

    def thread_linear(self, thread_idx: Dim3) -> int:
        b = self.config.block
        if not b.contains(thread_idx):
            raise LaunchValidationError([f"threadIdx {thread_idx} is outside the block {b}"])
        return b.flatten(thread_idx)

    def thread(self, block_linear: int, thread_linear: int) -> ThreadInfo:
        from explorer.launch.plan_records import ThreadInfo

        place = self.placement(block_linear)
        t_idx = self.thread_index(thread_linear)
        global_linear = block_linear * self.threads_per_block + thread_linear
        warp, lane = divmod(thread_linear, self.warp_size)
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
            idle=self._thread_idle(place.block_idx, t_idx, global_linear),
            extent=self.config.extent,
        )

    def _thread_idle(self, block_idx: Dim3, thread_idx: Dim3, global_linear: int) -> bool:
        extent = self.config.extent
        if extent is not None:
            b = self.config.block
            pos = zip(
                block_idx.as_tuple(), b.as_tuple(), thread_idx.as_tuple(), extent.as_tuple(), strict=True
            )
            return any(bi * bd + ti >= e for bi, bd, ti, e in pos)
        n = self.config.n
        return n is not None and global_linear >= n

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
        if self.config.extent is not None:
            return _busy_lanes_per_warp(self.config.block, self._block_inside(block_linear), self.warp_size)[
                warp
            ]
        n = self.config.n
        if n is None:
            return active
        first = block_linear * self.threads_per_block + warp * self.warp_size
        return max(0, min(active, n - first))

    def block_busy_threads(self, block_linear: int) -> int:
        """Threads of this block inside the problem (n, or the extent on every axis)."""
        self._check_block(block_linear)
        if self.config.extent is not None:
            rx, ry, rz = self._block_inside(block_linear)
            return rx * ry * rz
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
            "peak_resident_warps": self.peak_resident_warps,
            "warp_slots": self.warp_slots,
            "gpu_fill": self.gpu_fill,
            "busy_sms": self.busy_sms,
            "notes": list(self.notes),
            "scheduler_model": "round-robin in block order (the real block scheduler is not public)",
        }


def plan_launch(config: LaunchConfig, device: Gpu, limits: ArchLimits | None = None) -> LaunchPlan:
    """Validate ``config`` against ``device`` and work out its dispatch; raises LaunchValidationError."""
    if limits is None:
        limits = limits_for_device(device)
    problems = validate(config, limits, device.name)
    if not device.sm_count or device.sm_count < 1:
        problems.append(f"{device.name} does not report its number of SMs, so blocks cannot be placed")
    if problems or device.sm_count is None:
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
    if config.extent is not None:
        # per axis, the threads inside the problem are min(extent, grid * block): a product, never a loop
        spans = [g * b for g, b in zip(config.grid.as_tuple(), config.block.as_tuple(), strict=True)]
        extent = config.extent.as_tuple()
        busy = 1
        for span, e in zip(spans, extent, strict=True):
            busy *= min(span, e)
        idle = total_threads - busy
        uncovered = config.extent.count - busy
        short = [f"{a} ({s} threads for {e})" for a, s, e in zip("xyz", spans, extent, strict=True) if s < e]
        if uncovered:
            plan_notes.append(
                f"the launch covers {busy} of the problem's {config.extent.count} elements: too few threads "
                f"along {', '.join(short)}; use ceil(size / blockDim) blocks on each axis"
            )
    else:
        idle = max(0, total_threads - n) if n is not None else 0
        uncovered = max(0, n - total_threads) if n is not None else 0
        if uncovered and n is not None:
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
        idle_threads=idle,
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
    """ceil(n / threads_per_block): the grid size that covers n elements. The one copy: every kernel
    launcher (the benchmarks', the memory kernels') sizes its grid with it, passing its own block size."""
    return -(-n // threads_per_block)
