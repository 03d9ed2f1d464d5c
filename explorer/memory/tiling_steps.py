"""One block of the tiled matmul, step by step: the ticks the Memory page's stepper walks through.

A block's life (``explorer.memory.tiling`` has the kernel) is cut into ticks a class can follow:
per phase, each warp in turn stores its threads' elements of the A and B tiles into shared memory
and waits at the first ``__syncthreads()``; the barrier opens when the last warp arrives; each warp
in turn runs its T multiply-adds per thread and waits at the second barrier, which opens when the
last one arrives (the tiles may then be overwritten). After the last phase each warp stores its
outputs. Real warps interleave; the barriers are what makes that order-free, so showing them one
after another is the order a barrier allows, not a claim about the scheduler.

Two sets of counters run alongside: this block's, and the grid's if every block took the same
tick at once (edge blocks load less than full ones). At the last tick the block's equal
``tiling.block_counts`` and the grid's equal ``tiling.tiled_counts``: the tests hold them to it.
Everything here is exact integer arithmetic over at most 32 threads per tick.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Literal

from explorer.errors import UserError
from explorer.memory.tiling import MatmulShape, warp_threads

TickKind = Literal["load", "barrier", "compute", "store"]
CellState = Literal["empty", "loaded", "zero", "stale"]
WarpState = Literal[
    "to load", "loading", "at barrier 1", "to compute", "computing", "at barrier 2", "storing", "done"
]

#: the stepper walks one block: a K this long is at most 1024 / T phases of T-wide tiles
MAX_STEPPER_DIM = 1024


@dataclass(frozen=True)
class Tick:
    kind: TickKind
    phase: int  # 0-based; the store ticks carry the phase count
    warp: int  # the warp acting; -1 at a barrier
    barrier: int = 0  # at a barrier tick: 1 (tiles loaded) or 2 (tiles used)


@dataclass(frozen=True)
class Counters:
    """Accesses so far, in elements (4-byte floats); ``flops`` are the useful ones."""

    global_loads: int = 0
    global_stores: int = 0
    shared_loads: int = 0
    shared_stores: int = 0
    barriers: int = 0
    flops: int = 0

    def __add__(self, other: Counters) -> Counters:
        return Counters(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(Counters)))


def _rows_with(offset: int, extent: int, tile: int) -> int:
    """How many blocks along one axis have their ``offset``-th row (or column) inside ``extent``."""
    return max(0, -(-(extent - offset) // tile))


@dataclass(frozen=True)
class BlockState:
    """What the stepper shows after ``position`` ticks."""

    position: int
    tick: Tick | None  # the tick just taken (None before the first)
    phase: int  # the phase whose tiles shared memory holds; -1 before any load
    warps: tuple[WarpState, ...]
    a_tile: tuple[tuple[CellState, ...], ...]  # As[ty][tx]
    b_tile: tuple[tuple[CellState, ...], ...]  # Bs[ty][tx]
    terms: tuple[tuple[int, ...], ...]  # per thread (ty, tx): products of A and B added to its sum so far
    stored: tuple[tuple[bool, ...], ...]  # per thread: its C element written
    block: Counters
    grid: Counters


class BlockTicks:
    """The ticks of block (bx, by) of ``shape`` and the counters after each."""

    def __init__(self, shape: MatmulShape, bx: int = 0, by: int = 0) -> None:
        for name, value in (("M", shape.m), ("N", shape.n), ("K", shape.k)):
            if value > MAX_STEPPER_DIM:
                raise UserError(f"{name} is {value}; the stepper walks sizes up to {MAX_STEPPER_DIM}")
        shape.block_extent(bx, by)  # a block outside the grid is one line
        self.shape, self.bx, self.by = shape, bx, by
        t = shape.tile
        self.warps = shape.warps_per_block
        self._threads = [warp_threads(t, w) for w in range(self.warps)]
        ticks: list[Tick] = []
        for p in range(shape.phases):
            ticks += [Tick("load", p, w) for w in range(self.warps)]
            ticks.append(Tick("barrier", p, -1, 1))
            ticks += [Tick("compute", p, w) for w in range(self.warps)]
            ticks.append(Tick("barrier", p, -1, 2))
        ticks += [Tick("store", shape.phases, w) for w in range(self.warps)]
        self.ticks = tuple(ticks)
        block, grid = [Counters()], [Counters()]
        for tick in self.ticks:
            b, g = self._delta(tick)
            block.append(block[-1] + b)
            grid.append(grid[-1] + g)
        self._block, self._grid = block, grid

    def __len__(self) -> int:
        return len(self.ticks)

    def in_range(self, tx: int, ty: int) -> bool:
        """Whether thread (tx, ty) of this block has an element of C to write."""
        s = self.shape
        return self.by * s.tile + ty < s.m and self.bx * s.tile + tx < s.n

    def _delta(self, tick: Tick) -> tuple[Counters, Counters]:
        """(this block's, the grid's) accesses in one tick."""
        s, t = self.shape, self.shape.tile
        gx, gy = s.grid
        blocks = s.blocks
        if tick.kind == "barrier":
            return Counters(barriers=1), Counters(barriers=blocks)
        lanes = self._threads[tick.warp]
        if tick.kind == "load":
            p = tick.phase
            block_loads = grid_loads = 0
            for tx, ty in lanes:
                a_col_ok, b_row_ok = p * t + tx < s.k, p * t + ty < s.k
                block_loads += (self.by * t + ty < s.m and a_col_ok) + (b_row_ok and self.bx * t + tx < s.n)
                grid_loads += a_col_ok * gx * _rows_with(ty, s.m, t) + b_row_ok * gy * _rows_with(tx, s.n, t)
            stores = 2 * len(lanes)
            return (
                Counters(global_loads=block_loads, shared_stores=stores),
                Counters(global_loads=grid_loads, shared_stores=stores * blocks),
            )
        outputs_block = sum(self.in_range(tx, ty) for tx, ty in lanes)
        outputs_grid = sum(_rows_with(ty, s.m, t) * _rows_with(tx, s.n, t) for tx, ty in lanes)
        if tick.kind == "compute":
            useful = min(t, s.k - tick.phase * t)  # the products of this phase inside K
            reads = 2 * t * len(lanes)
            return (
                Counters(shared_loads=reads, flops=2 * useful * outputs_block),
                Counters(shared_loads=reads * blocks, flops=2 * useful * outputs_grid),
            )
        return Counters(global_stores=outputs_block), Counters(global_stores=outputs_grid)

    def block_counters(self, position: int) -> Counters:
        return self._block[self._check(position)]

    def grid_counters(self, position: int) -> Counters:
        return self._grid[self._check(position)]

    def _check(self, position: int) -> int:
        if not 0 <= position <= len(self.ticks):
            raise UserError(f"step {position} is outside 0..{len(self.ticks)}")
        return position

    def state(self, position: int) -> BlockState:
        """The block after ``position`` ticks: warps, shared tiles, partial sums, counters."""
        self._check(position)
        s, t = self.shape, self.shape.tile
        tick = self.ticks[position - 1] if position else None
        warps: list[WarpState] = ["to load"] * self.warps
        phase = -1
        loaded_by = -1  # warps up to this one have loaded the current phase's tiles
        if tick is not None:
            phase = min(tick.phase, s.phases - 1)
            w = tick.warp
            if tick.kind == "load":
                loaded_by = w
                warps = [
                    "loading" if i == w else "at barrier 1" if i < w else "to load" for i in range(self.warps)
                ]
            elif tick.kind == "compute":
                loaded_by = self.warps
                warps = [
                    "computing" if i == w else "at barrier 2" if i < w else "to compute"
                    for i in range(self.warps)
                ]
            elif tick.kind == "barrier":
                loaded_by = self.warps
                warps = ["to compute" if tick.barrier == 1 else "to load"] * self.warps
            else:
                loaded_by = self.warps
                warps = [
                    "storing" if i == w else "done" if i < w else "to compute" for i in range(self.warps)
                ]
        a_tile, b_tile = self._tiles(phase, loaded_by)
        done_phases = self._compute_done(position)
        terms = tuple(
            tuple(
                sum(min(t, s.k - p * t) for p in range(done_phases(tx + ty * t)))
                if self.in_range(tx, ty)
                else 0
                for tx in range(t)
            )
            for ty in range(t)
        )
        stores_done = sum(1 for k in self.ticks[:position] if k.kind == "store")
        stored = tuple(
            tuple(
                self.in_range(tx, ty) and (tx + ty * t) // 32 < stores_done and position > 0
                for tx in range(t)
            )
            for ty in range(t)
        )
        return BlockState(
            position,
            tick,
            phase,
            tuple(warps),
            a_tile,
            b_tile,
            terms,
            stored,
            self.block_counters(position),
            self.grid_counters(position),
        )

    def _compute_done(self, position: int) -> Callable[[int], int]:
        """thread -> phases whose multiply-adds it has done after ``position`` ticks."""
        per_warp = [0] * self.warps
        for tick in self.ticks[:position]:
            if tick.kind == "compute":
                per_warp[tick.warp] = tick.phase + 1
        return lambda thread: per_warp[thread // 32]

    def _tiles(self, phase: int, loaded_by: int) -> tuple[tuple[tuple[CellState, ...], ...], ...]:
        s, t = self.shape, self.shape.tile
        out = []
        for is_a in (True, False):
            rows = []
            for ty in range(t):
                row: list[CellState] = []
                for tx in range(t):
                    warp = (tx + ty * t) // 32
                    if phase < 0 or (warp > loaded_by and phase == 0):
                        row.append("empty")
                    elif warp > loaded_by:
                        row.append("stale")
                    elif is_a:
                        row.append("loaded" if self.by * t + ty < s.m and phase * t + tx < s.k else "zero")
                    else:
                        row.append("loaded" if phase * t + ty < s.k and self.bx * t + tx < s.n else "zero")
                rows.append(tuple(row))
            out.append(tuple(rows))
        return out[0], out[1]
