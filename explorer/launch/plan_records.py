"""Where a launch's blocks, lanes and threads land: the records ``schedule.LaunchPlan`` answers with.

Apart from the plan itself so that a launch summarised in a terminal (``device-explorer launch``)
never builds these classes: only the window's drawing and a thread's questions ask for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.launch.config import Dim3


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
    idle: bool  # outside the problem (past n, or outside the extent on an axis): the bounds check skips it
    extent: Dim3 | None = None  # the problem's size per axis, when it was given that way

    @property
    def global_position(self) -> Dim3:
        """blockIdx * blockDim + threadIdx on each axis: the pixel or voxel a 2D/3D kernel handles."""
        b, d, t = self.block_idx, self.block_dim, self.thread_idx
        return Dim3(b.x * d.x + t.x, b.y * d.y + t.y, b.z * d.z + t.z)

    @property
    def dims(self) -> int:
        """1, 2 or 3: the axes a kernel indexes along (the most of the grid's, block's and problem's)."""
        extent_dims = self.extent.dims_used if self.extent is not None else 1
        return max(self.grid_dim.dims_used, self.block_dim.dims_used, extent_dims)

    def axis_formulas(self) -> tuple[str, ...]:
        """Per axis, ``x = blockIdx.x * blockDim.x + threadIdx.x = 48 * 16 + 4 = 772``: what a 2D/3D
        kernel computes first, and the numbers a student checks against the picture."""
        b, d, t, p = self.block_idx, self.block_dim, self.thread_idx, self.global_position
        out = []
        for axis in "xyz"[: self.dims]:
            bi, di, ti, pi = (getattr(v, axis) for v in (b, d, t, p))
            out.append(
                f"{axis} = blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis} = {bi} * {di} + {ti} = {pi}"
            )
        return tuple(out)

    @property
    def extent_index(self) -> int | None:
        """The row-major index an image or volume kernel computes, ``(z * height + y) * width + x``,
        over the problem's extent; None without an extent or for a thread outside it (it has none)."""
        if self.extent is None or self.idle:
            return None
        p, e = self.global_position, self.extent
        return (p.z * e.y + p.y) * e.x + p.x

    def extent_index_formula(self) -> str | None:
        """``index = y * width + x = 37 * 1920 + 772 = 71812``; None where ``extent_index`` is None."""
        value = self.extent_index
        if value is None or self.extent is None:
            return None
        p, e = self.global_position, self.extent
        if e.z == 1:
            return f"index = y * width + x = {p.y} * {e.x} + {p.x} = {value}"
        return f"index = (z * height + y) * width + x = ({p.z} * {e.y} + {p.y}) * {e.x} + {p.x} = {value}"

    @property
    def element_index(self) -> int | None:
        """The element this thread works on: the extent's row-major index, else its linear number
        (a 1-D kernel's ``blockIdx.x * blockDim.x + threadIdx.x``); None for an idle thread."""
        if self.extent is not None:
            return self.extent_index
        return None if self.idle else self.global_linear

    def formula(self) -> str:
        """The thread's linear number, worked out with its numbers filled in: for a 1-D launch the
        index a kernel uses; for 2D/3D the thread's place in the launch, not its pixel's index."""
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
            "formula": self.formula(),  # of global_linear, the thread's linear number in the launch
            "position": list(self.global_position.as_tuple()),
            "axis_formulas": list(self.axis_formulas()),
            "extent": list(self.extent.as_tuple()) if self.extent is not None else None,
            "extent_index": self.extent_index,
            "extent_index_formula": self.extent_index_formula(),
            "element_index": self.element_index,
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
class WaveFill:
    """Which SM slots hold a block once the first ``dispatched`` blocks of a wave have landed.

    Round-robin fills slot 0 of every SM, then slot 1, and so on, so two numbers describe the
    whole picture however large the wave: a view redraws it without one object per block.
    """

    wave: int
    first_block: int  # linear index of the wave's first block
    dispatched: int  # blocks of this wave on an SM so far
    sm_count: int
    full_slots: int  # slots 0 .. full_slots - 1 hold a block on every SM
    extra_sms: int  # SMs 0 .. extra_sms - 1 also hold one in slot ``full_slots``

    def slots_taken(self, sm: int) -> int:
        """How many of this SM's slots (0 .. n-1) hold a block."""
        return self.full_slots + (1 if sm < self.extra_sms else 0)

    @property
    def busy_sms(self) -> int:
        """SMs 0 .. busy_sms - 1 hold at least one block; the rest idle."""
        return min(self.dispatched, self.sm_count)

    def block_at(self, sm: int, slot: int) -> int | None:
        """The block in slot ``slot`` of SM ``sm``, or None where that slot is empty."""
        if not 0 <= sm < self.sm_count or not 0 <= slot < self.slots_taken(sm):
            return None
        return self.first_block + slot * self.sm_count + sm

    def position(self, block_linear: int) -> tuple[int, int] | None:
        """(sm, slot) of a block already landed in this wave, else None."""
        i = block_linear - self.first_block
        if not 0 <= i < self.dispatched:
            return None
        slot, sm = divmod(i, self.sm_count)
        return sm, slot

    def spans(self, start: int, stop: int) -> list[tuple[int, int, int]]:
        """(sm, first_slot, stop_slot) per SM holding blocks of dispatch order ``start .. stop - 1``.

        Block ``i`` of a wave sits in slot ``i // sm_count`` of SM ``i % sm_count``, so on each SM
        a range of blocks is a range of slots: a view draws it as a rectangle, not block by block.
        """
        start, stop = max(0, start), min(stop, self.dispatched)
        if stop <= start:
            return []
        n = self.sm_count
        if stop - start < n:
            return [(i % n, i // n, i // n + 1) for i in range(start, stop)]
        out = []
        for sm in range(n):
            first, end = -(-(start - sm) // n), -(-(stop - sm) // n)
            if end > first:
                out.append((sm, first, end))
        return out

    def gained_since(self, earlier: int) -> list[tuple[int, int, int]]:
        """``spans`` of the blocks that landed after the first ``earlier`` ones."""
        return self.spans(earlier, self.dispatched)


@dataclass(frozen=True)
class IdleRun:
    """Consecutive blocks of a wave (dispatch order ``start .. stop - 1``) with the same idle lanes."""

    start: int
    stop: int
    busy_lanes: tuple[int, ...]  # per warp: how many lanes hold a thread inside the problem
    # per warp, bit ``lane`` set when that lane's thread is inside: in a 2D block a warp may span two
    # rows of which only the left part of each is inside, so the busy lanes are not always a prefix
    busy_masks: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.busy_masks:  # a 1-D problem: the busy lanes of a warp are its first ones
            object.__setattr__(self, "busy_masks", tuple((1 << n) - 1 for n in self.busy_lanes))


@dataclass(frozen=True)
class WaveIdle:
    """The blocks of one wave that have idle lanes, as a few runs (the grid's edges, the tail past N)."""

    first_block: int
    runs: tuple[IdleRun, ...]

    def blocks(self) -> list[tuple[int, tuple[int, ...]]]:
        """(block_linear, busy lanes per warp) for each block with idle lanes: for tests and small grids."""
        return [(self.first_block + i, r.busy_lanes) for r in self.runs for i in range(r.start, r.stop)]

    def busy_lanes_of(self, block_linear: int) -> tuple[int, ...] | None:
        i = block_linear - self.first_block
        for r in self.runs:
            if r.start <= i < r.stop:
                return r.busy_lanes
        return None


def merge_runs(runs: list[IdleRun]) -> tuple[IdleRun, ...]:
    """Runs that touch and have the same idle lanes, joined: a wave's edge as few runs as it can be."""
    out: list[IdleRun] = []
    for r in runs:
        if r.stop <= r.start:
            continue
        if out and out[-1].stop == r.start and out[-1].busy_masks == r.busy_masks:
            out[-1] = IdleRun(out[-1].start, r.stop, r.busy_lanes, r.busy_masks)
        else:
            out.append(r)
    return tuple(out)
