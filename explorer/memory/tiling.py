"""What the tiled matrix multiply of PMPP chapter 5 executes, counted exactly, next to the naive kernel.

The kernel is the book's guarded one (Kirk, Hwu & El Hajj, *Programming Massively Parallel
Processors*, 4th ed., section 5.5, generalised from square ``Width`` to C = A (M x K) . B (K x N)),
one output element per thread, a T x T block per T x T tile of C::

    __shared__ float As[T][T], Bs[T][T];
    row = blockIdx.y * T + ty;  col = blockIdx.x * T + tx;  sum = 0
    for ph in 0 .. ceil(K / T) - 1:
        As[ty][tx] = (row < M && ph*T + tx < K) ? A[row][ph*T + tx] : 0     # one global load or none
        Bs[ty][tx] = (ph*T + ty < K && col < N) ? B[ph*T + ty][col] : 0     # one global load or none
        __syncthreads()                                                       # barrier 1: tiles loaded
        for k in 0 .. T - 1:  sum += As[ty][k] * Bs[k][tx]                    # two shared loads, one FMA
        __syncthreads()                                                       # barrier 2: tiles used
    if row < M && col < N:  C[row][col] = sum                                 # one global store

Every thread of every block runs every phase (out-of-range threads too: they must reach the
barriers), so the shared-memory counts cover the padded grid, while an element outside A or B is
never loaded from global memory (a zero is stored instead). Summing the loads over the grid gives
the closed forms below; ``tests/memory/test_tiling_model.py`` checks them against a thread-by-thread
run of the kernel over thousands of random sizes. The naive kernel (PMPP section 3.4) has each
thread read its row of A and column of B straight from global memory: 2 MNK loads, no shared memory.

Counts are in elements (4-byte floats), as a kernel's loads and stores are; bytes of global
traffic are the elements times 4: what the kernel asks of global memory, before any cache serves
part of it. That is the traffic PMPP's argument counts, and what the roofline's intensity here means.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

from explorer.devices.limits import ArchLimits, known_ccs, limits_for_cc
from explorer.errors import UserError
from explorer.launch.occupancy import Occupancy, occupancy
from explorer.memory.banks import BankConflicts, SharedGather, bank_conflicts
from explorer.memory.coalescing import WARP_SIZE

FLOAT32_BYTES = 4
#: the largest M, N or K the model takes: beyond a GPU's memory for any of the three matrices
MAX_DIM = 1 << 24
#: the largest tile side the model counts (its closed forms hold for any); a device refuses T > 32
MAX_TILE = MAX_DIM
#: the largest T a GPU launches (32 x 32 = 1024 threads per block): the bank model's reads stop here
MAX_LAUNCH_TILE = 32
#: the tile sides the ``tiled_matmul`` benchmark measures (64, 256 and 1024 threads per block)
BENCH_TILES = (8, 16, 32)
#: the naive kernel's block side (PMPP's examples launch 16 x 16 blocks); its counts do not depend on it
NAIVE_BLOCK = 16
SOURCE = (
    "Kirk, Hwu & El Hajj, Programming Massively Parallel Processors (4th ed.), chapter 5: the tiled "
    "kernel with boundary checks (section 5.5), one output per thread, T x T tiles of A and B in "
    "shared memory, two __syncthreads() per phase"
)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class MatmulShape:
    """C = A (m x k) . B (k x n), in T x T tiles (``tile`` = T)."""

    m: int
    n: int
    k: int
    tile: int

    def __post_init__(self) -> None:
        for name, value, most in (
            ("M", self.m, MAX_DIM),
            ("N", self.n, MAX_DIM),
            ("K", self.k, MAX_DIM),
            ("tile T", self.tile, MAX_TILE),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise UserError(f"{name} is {value!r}; it must be a whole number")
            if not 1 <= value <= most:
                raise UserError(f"{name} is {value}; it must be 1 to {most:,}")

    @property
    def grid(self) -> tuple[int, int]:
        """(gridDim.x, gridDim.y): blocks across C's columns and down its rows."""
        return _ceil(self.n, self.tile), _ceil(self.m, self.tile)

    @property
    def blocks(self) -> int:
        gx, gy = self.grid
        return gx * gy

    @property
    def threads_per_block(self) -> int:
        return self.tile * self.tile

    @property
    def warps_per_block(self) -> int:
        return _ceil(self.threads_per_block, WARP_SIZE)

    @property
    def phases(self) -> int:
        """Trips of the outer loop: tiles along K."""
        return _ceil(self.k, self.tile)

    @property
    def divisible(self) -> bool:
        """Whether T divides M, N and K: no block or phase has a ragged edge."""
        return self.m % self.tile == 0 and self.n % self.tile == 0 and self.k % self.tile == 0

    @property
    def shared_bytes_per_block(self) -> int:
        """As and Bs: 2 T^2 floats of static shared memory."""
        return 2 * self.tile * self.tile * FLOAT32_BYTES

    def block_extent(self, bx: int, by: int) -> tuple[int, int]:
        """(rows, columns) of C that block (bx, by) writes: T x T but at the bottom and right edges."""
        gx, gy = self.grid
        if not (0 <= bx < gx and 0 <= by < gy):
            raise UserError(f"block ({bx}, {by}) is outside the {gx} x {gy} grid")
        return min(self.tile, self.m - by * self.tile), min(self.tile, self.n - bx * self.tile)


@dataclass(frozen=True)
class KernelCounts:
    """What one kernel executes, over the grid (or over one block: ``blocks`` = 1). Loads and
    stores count elements (4-byte floats); ``flops`` are the useful ones, 2 per product of an A
    and a B element (2 MNK for the grid), ``executed_flops`` every multiply-add issued, the zeros
    of a padded tile included."""

    kernel: str  # "tiled" or "naive"
    global_loads: int
    global_stores: int
    shared_loads: int
    shared_stores: int
    barriers_per_block: int
    blocks: int
    threads_per_block: int
    flops: int
    executed_flops: int
    shared_bytes_per_block: int

    @property
    def global_bytes(self) -> int:
        return (self.global_loads + self.global_stores) * FLOAT32_BYTES

    @property
    def intensity_flop_per_byte(self) -> float:
        """Useful FLOPs per byte of global traffic (loads and stores)."""
        return self.flops / self.global_bytes

    @property
    def barriers(self) -> int:
        """Barriers the whole grid passes (each block its own)."""
        return self.barriers_per_block * self.blocks

    def to_dict(self) -> dict[str, Any]:
        return {
            "global_loads": self.global_loads,
            "global_stores": self.global_stores,
            "shared_loads": self.shared_loads,
            "shared_stores": self.shared_stores,
            "barriers_per_block": self.barriers_per_block,
            "flops": self.flops,
            "shared_bytes_per_block": self.shared_bytes_per_block,
            "intensity_flop_per_byte": self.intensity_flop_per_byte,
            "global_bytes": self.global_bytes,
            "executed_flops": self.executed_flops,
            "blocks": self.blocks,
            "threads_per_block": self.threads_per_block,
        }


def tiled_counts(s: MatmulShape) -> KernelCounts:
    """The grid's counts of the guarded tiled kernel (see the module docstring).

    Each element of A is loaded once per block column (``gridDim.x`` times) and each element of B
    once per block row; every thread stores 2 shared elements and reads 2 T per phase."""
    gx, gy = s.grid
    threads = s.blocks * s.threads_per_block  # the padded grid: every thread runs every phase
    return KernelCounts(
        kernel="tiled",
        global_loads=s.m * s.k * gx + s.k * s.n * gy,
        global_stores=s.m * s.n,
        shared_loads=threads * s.phases * 2 * s.tile,
        shared_stores=threads * s.phases * 2,
        barriers_per_block=2 * s.phases,
        blocks=s.blocks,
        threads_per_block=s.threads_per_block,
        flops=2 * s.m * s.n * s.k,
        executed_flops=2 * threads * s.phases * s.tile,
        shared_bytes_per_block=s.shared_bytes_per_block,
    )


def block_counts(s: MatmulShape, bx: int, by: int) -> KernelCounts:
    """One block's share of ``tiled_counts``: the loads its in-range rows of A and columns of B
    make, the stores of its in-range outputs; the shared traffic is every block's alike."""
    rows, cols = s.block_extent(bx, by)
    t = s.threads_per_block
    return KernelCounts(
        kernel="tiled",
        global_loads=rows * s.k + s.k * cols,
        global_stores=rows * cols,
        shared_loads=t * s.phases * 2 * s.tile,
        shared_stores=t * s.phases * 2,
        barriers_per_block=2 * s.phases,
        blocks=1,
        threads_per_block=t,
        flops=2 * rows * cols * s.k,
        executed_flops=2 * t * s.phases * s.tile,
        shared_bytes_per_block=s.shared_bytes_per_block,
    )


def naive_counts(s: MatmulShape) -> KernelCounts:
    """The naive kernel: each in-range thread reads K of A and K of B from global memory."""
    gx, gy = _ceil(s.n, NAIVE_BLOCK), _ceil(s.m, NAIVE_BLOCK)
    return KernelCounts(
        kernel="naive",
        global_loads=2 * s.m * s.n * s.k,
        global_stores=s.m * s.n,
        shared_loads=0,
        shared_stores=0,
        barriers_per_block=0,
        blocks=gx * gy,
        threads_per_block=NAIVE_BLOCK * NAIVE_BLOCK,
        flops=2 * s.m * s.n * s.k,
        executed_flops=2 * s.m * s.n * s.k,
        shared_bytes_per_block=0,
    )


# --- the two shared reads, through the bank model ------------------------------------------------


@dataclass(frozen=True)
class TileRead:
    """One of the inner loop's shared reads, ``As[ty][k]`` or ``Bs[k][tx]``, as every warp of a
    T x T block issues it for k = 0 .. T-1: the bank model's verdict on each such request."""

    expression: str
    requests: int  # warp-wide loads per phase per block: warps x T
    wavefronts: int  # passes those requests take (one each when conflict-free)
    worst_degree: int  # the most distinct words one bank is asked for in one pass, over all requests
    most_lanes_per_word: int  # the widest broadcast: lanes served one word together
    example: BankConflicts  # warp 0's request at k = 0, as the Bank conflicts tab would draw it

    @property
    def conflict_free(self) -> bool:
        return self.worst_degree == 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "expression": self.expression,
            "requests_per_phase": self.requests,
            "wavefronts_per_phase": self.wavefronts,
            "conflict_degree": self.worst_degree,
            "lanes_per_word": self.most_lanes_per_word,
        }


def warp_threads(tile: int, warp: int) -> list[tuple[int, int]]:
    """(tx, ty) of the threads of ``warp`` in a T x T block, lane order (x varies fastest)."""
    first = warp * WARP_SIZE
    return [(t % tile, t // tile) for t in range(first, min(first + WARP_SIZE, tile * tile))]


@cache
def tile_reads(tile: int) -> tuple[TileRead, TileRead]:
    """``As[ty][k]`` and ``Bs[k][tx]`` for every warp and every k, through ``bank_conflicts``.

    In ``As[ty][k]`` the lanes of one row of the block read one word (a broadcast); in
    ``Bs[k][tx]`` neighbouring lanes read neighbouring words (T of them, in T banks)."""
    if not 1 <= tile <= MAX_LAUNCH_TILE:
        raise UserError(f"tile T is {tile}; the shared reads are modelled for T = 1 to {MAX_LAUNCH_TILE}")
    warps = _ceil(tile * tile, WARP_SIZE)
    # A request moved by a constant number of words has the same verdict (bank(w + c) =
    # (bank(w) + c) mod 32 permutes the banks, and which words coincide or share a bank stays the
    # same), so each request is looked up by its shape: k only moves a warp's request along.
    seen: dict[tuple[int, ...], tuple[BankConflicts, int]] = {}
    out = []
    for expression, element in (
        ("As[ty][k]", lambda tx, ty, k: ty * tile + k),
        ("Bs[k][tx]", lambda tx, ty, k: k * tile + tx),
    ):
        wavefronts = worst = widest = 0
        example: BankConflicts | None = None
        for w in range(warps):
            lanes = warp_threads(tile, w)
            for k in range(tile):
                elements = tuple(element(tx, ty, k) for tx, ty in lanes)
                shape = tuple(e - elements[0] for e in elements)
                if shape not in seen:
                    lanes_per_word = max(Counter(elements).values())
                    seen[shape] = (bank_conflicts(SharedGather(elements)), lanes_per_word)
                b, lanes_per_word = seen[shape]
                example = example or b
                wavefronts += b.wavefronts
                worst = max(worst, b.conflict_degree)
                widest = max(widest, lanes_per_word)
        assert example is not None
        out.append(TileRead(expression, warps * tile, wavefronts, worst, widest, example))
    return out[0], out[1]


# --- the launch a device must accept -------------------------------------------------------------


@dataclass(frozen=True)
class BlockLimits:
    """What a device allows the tiled kernel's launch: threads per block, static shared memory
    per block (a ``__shared__`` array cannot opt in to more than the default), the grid."""

    name: str  # how messages name the device
    max_threads_per_block: int
    max_static_smem_bytes: int
    max_grid: tuple[int, int, int]

    @classmethod
    def of(cls, limits: ArchLimits, name: str | None = None) -> BlockLimits:
        return cls(
            name or limits.label,
            limits.max_threads_per_block,
            limits.max_smem_per_block_bytes,
            limits.max_grid_dim,
        )

    @classmethod
    def any_gpu(cls) -> BlockLimits:
        """The limits every GPU of the limits table shares (what a count without a device is held to)."""
        tables = [limits_for_cc(cc) for cc in known_ccs()]
        first, last = tables[0].cc_string, tables[-1].cc_string
        return cls(
            f"every GPU of compute capability {first} to {last}",
            min(t.max_threads_per_block for t in tables),
            min(t.max_smem_per_block_bytes for t in tables),
            (
                min(t.max_grid_dim[0] for t in tables),
                min(t.max_grid_dim[1] for t in tables),
                min(t.max_grid_dim[2] for t in tables),
            ),
        )


def launch_problems(s: MatmulShape, lim: BlockLimits) -> list[str]:
    """Every limit the launch breaks, one line each naming the value and the limit; empty: it runs."""
    problems = []
    t = s.tile
    if s.threads_per_block > lim.max_threads_per_block:
        problems.append(
            f"a {t} x {t} tile needs a block of {s.threads_per_block} threads; {lim.name} allows at most "
            f"{lim.max_threads_per_block} per block (T at most {math.isqrt(lim.max_threads_per_block)})"
        )
    if s.shared_bytes_per_block > lim.max_static_smem_bytes:
        problems.append(
            f"the tiles As and Bs take 2 x {t} x {t} x {FLOAT32_BYTES} = {s.shared_bytes_per_block} bytes of "
            f"shared memory per block; {lim.name} allows at most {lim.max_static_smem_bytes} bytes of "
            "static shared memory per block"
        )
    gx, gy = s.grid
    for axis, blocks, most in (("x", gx, lim.max_grid[0]), ("y", gy, lim.max_grid[1])):
        if blocks > most:
            side = "N" if axis == "x" else "M"
            problems.append(
                f"grid {axis} is {blocks} blocks ({side} / T rounded up); {lim.name} allows at most {most}"
            )
    return problems


def check_launch(s: MatmulShape, lim: BlockLimits) -> None:
    """Raise UserError (one line: every broken limit, '; '-joined) when the launch cannot run."""
    problems = launch_problems(s, lim)
    if problems:
        raise UserError("; ".join(problems))


# --- the price of a tile size --------------------------------------------------------------------


@dataclass(frozen=True)
class TileCost:
    """What a tile side T costs a block on one device: threads, shared memory, and the occupancy
    ``explorer.launch.occupancy`` gives them (``None`` when the block cannot launch there)."""

    tile: int
    threads_per_block: int
    shared_bytes_per_block: int
    occupancy: Occupancy | None
    refused: str  # why the device refuses this block ("" when it launches)


def tile_cost(tile: int, limits: ArchLimits, regs_per_thread: int, name: str | None = None) -> TileCost:
    s = MatmulShape(tile, tile, tile, tile)
    problems = launch_problems(s, BlockLimits.of(limits, name))
    if problems:
        return TileCost(tile, s.threads_per_block, s.shared_bytes_per_block, None, problems[0])
    occ = occupancy(limits, s.threads_per_block, regs_per_thread, s.shared_bytes_per_block)
    return TileCost(tile, s.threads_per_block, s.shared_bytes_per_block, occ, "")


# --- everything the CLI and the page show for one shape ------------------------------------------


@dataclass(frozen=True)
class TilingModel:
    shape: MatmulShape
    tiled: KernelCounts
    naive: KernelCounts
    reads: tuple[TileRead, TileRead]

    @property
    def load_ratio(self) -> float:
        """How many times fewer global loads tiling makes (T for divisible sizes)."""
        return self.naive.global_loads / self.tiled.global_loads

    def to_dict(self) -> dict[str, Any]:
        s = self.shape
        gx, gy = s.grid
        return {
            "m": s.m,
            "n": s.n,
            "k": s.k,
            "tile": s.tile,
            "grid": [gx, gy],
            "block": [s.tile, s.tile],
            "phases": s.phases,
            **self.tiled.to_dict(),
            "barriers": self.tiled.barriers,
            "global_load_ratio": self.load_ratio,
            "naive": self.naive.to_dict(),
            "shared_reads": [r.to_dict() for r in self.reads],
            "elem_bytes": FLOAT32_BYTES,
            "source": SOURCE,
        }


def tiling_model(s: MatmulShape) -> TilingModel:
    """The counts of both kernels and the bank model's word on the shared reads (T up to 32: a
    larger block launches nowhere, ``check_launch`` says so first)."""
    return TilingModel(s, tiled_counts(s), naive_counts(s), tile_reads(s.tile))
