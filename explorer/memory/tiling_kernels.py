"""The naive and the tiled matrix multiply as numba CUDA kernels: what ``explorer.memory.tiling``
counts, written the way PMPP writes them (chapter 3's one thread per output, chapter 5's guarded
tiled kernel), for the ``tiled_matmul`` benchmark workload.

Imported only where a kernel is about to run (the benchmark worker, the simulator tests): the import
pulls in numba.cuda. Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's CUDA simulator,
one Python thread per CUDA thread, which is how they are checked on a machine without a GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numba import float32

from explorer.launch.schedule import blocks_for
from explorer.memory.tiling import BENCH_TILES, NAIVE_BLOCK
from explorer.numbacuda import cuda

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from numba.cuda.cudadrv.devicearray import DeviceNDArray


@cuda.jit
def matmul_naive(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
    """c = a @ b, one thread per element of c, every operand read from global memory."""
    col, row = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for i in range(a.shape[1]):
            acc += a[row, i] * b[i, col]
        c[row, col] = acc


def _make_tiled(tile: int) -> Any:  # a numba CUDA dispatcher
    @cuda.jit
    def matmul_tiled(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        """c = a @ b through T x T tiles of a and b in shared memory: each element of a tile is
        loaded from global memory once and read T times from shared memory. Elements outside a
        or b are stored as zeros, so ragged edges need no other care; every thread reaches both
        barriers of every phase, whether or not it has an element of c to write."""
        a_tile = cuda.shared.array(shape=(tile, tile), dtype=float32)
        b_tile = cuda.shared.array(shape=(tile, tile), dtype=float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        m, depth = a.shape
        n = b.shape[1]
        acc = float32(0.0)
        for phase in range((depth + tile - 1) // tile):
            k0 = phase * tile
            if row < m and k0 + tx < depth:
                a_tile[ty, tx] = a[row, k0 + tx]
            else:
                a_tile[ty, tx] = float32(0.0)
            if k0 + ty < depth and col < n:
                b_tile[ty, tx] = b[k0 + ty, col]
            else:
                b_tile[ty, tx] = float32(0.0)
            cuda.syncthreads()  # the tiles are whole
            for k in range(tile):
                acc += a_tile[ty, k] * b_tile[k, tx]
            cuda.syncthreads()  # every thread is done with them before the next phase overwrites them
        if row < m and col < n:
            c[row, col] = acc

    return matmul_tiled


TILED = {t: _make_tiled(t) for t in BENCH_TILES}


def launch_naive(a: DeviceNDArray, b: DeviceNDArray, c: DeviceNDArray) -> tuple[int, int]:
    """Launch in NAIVE_BLOCK x NAIVE_BLOCK blocks; returns the grid (x, y)."""
    grid = (blocks_for(c.shape[1], NAIVE_BLOCK), blocks_for(c.shape[0], NAIVE_BLOCK))
    matmul_naive[grid, (NAIVE_BLOCK, NAIVE_BLOCK)](a, b, c)
    return grid


def launch_tiled(a: DeviceNDArray, b: DeviceNDArray, c: DeviceNDArray, tile: int) -> tuple[int, int]:
    """Launch the T x T tiled kernel (T one of BENCH_TILES); returns the grid (x, y)."""
    grid = (blocks_for(c.shape[1], tile), blocks_for(c.shape[0], tile))
    TILED[tile][grid, (tile, tile)](a, b, c)
    return grid
