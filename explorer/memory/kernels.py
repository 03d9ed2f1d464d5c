"""numba CUDA kernels that measure what explorer.memory models: strided reads, a shared-memory
transpose with and without padding, a divergent vs a warp-aligned branch, and the utilization
trap (one busy block that NVML reports as "100% GPU utilization").

Imported only where a kernel is about to run (the benchmark worker, the simulator tests), since
the import pulls in numba.cuda. Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's
simulator, which is how the tests check their results on a machine without a GPU.
"""

from __future__ import annotations

import math

from numba import cuda, float32

THREADS = 256
TILE = 32


def blocks_for(n: int, threads: int = THREADS) -> int:
    return (n + threads - 1) // threads


@cuda.jit
def strided_read(src, dst, stride):
    """dst[i] = src[i * stride]: neighbouring threads read ``stride`` elements apart, so a warp's
    load touches up to 32 sectors where a unit stride touches 4; the writes stay coalesced."""
    i = cuda.grid(1)
    if i < dst.shape[0]:
        dst[i] = src[i * stride]


def _make_transpose(padding: int):
    width = TILE + padding

    @cuda.jit
    def transpose(src, dst):
        """dst = src.T through a shared tile: rows are read and written coalesced; the tile is
        written by rows and read by columns, which hits one bank 32 times unless rows are padded."""
        tile = cuda.shared.array(shape=(TILE, width), dtype=float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        x = cuda.blockIdx.x * TILE + tx
        y = cuda.blockIdx.y * TILE + ty
        if y < src.shape[0] and x < src.shape[1]:
            tile[ty, tx] = src[y, x]
        cuda.syncthreads()
        x2 = cuda.blockIdx.y * TILE + tx
        y2 = cuda.blockIdx.x * TILE + ty
        if y2 < dst.shape[0] and x2 < dst.shape[1]:
            dst[y2, x2] = tile[tx, ty]

    return transpose


transpose_naive = _make_transpose(0)  # tile[32][32]: the column read is a 32-way conflict
transpose_padded = _make_transpose(1)  # tile[32][33]: conflict-free


def launch_transpose(src_dev, dst_dev, padded: bool) -> None:
    rows, cols = src_dev.shape
    grid = (math.ceil(cols / TILE), math.ceil(rows / TILE))
    kernel = transpose_padded if padded else transpose_naive
    kernel[grid, (TILE, TILE)](src_dev, dst_dev)


@cuda.jit(device=True)
def _work(x, steps):
    for _ in range(steps):
        x = x * float32(0.999) + float32(0.001)
    return x


@cuda.jit
def branch_by_lane(data, steps):
    """Odd and even lanes take different paths: every warp runs both, each at half its lanes."""
    i = cuda.grid(1)
    if i < data.shape[0]:
        if i % 2 == 0:
            data[i] = _work(data[i], steps)
        else:
            data[i] = -_work(-data[i], steps)


@cuda.jit
def branch_by_warp(data, steps):
    """The same two paths chosen per warp ((i / 32) % 2): no warp diverges."""
    i = cuda.grid(1)
    if i < data.shape[0]:
        if (i // 32) % 2 == 0:
            data[i] = _work(data[i], steps)
        else:
            data[i] = -_work(-data[i], steps)


def reference_branch(values, steps: int, by_warp: bool):
    """What either branch kernel computes, on the host (float32 like the device), for the tests."""
    import numpy as np

    out = np.array(values, dtype=np.float32)
    for i in range(out.shape[0]):
        first = (i // 32) % 2 == 0 if by_warp else i % 2 == 0
        x = out[i] if first else -out[i]
        for _ in range(steps):
            x = np.float32(x * np.float32(0.999) + np.float32(0.001))
        out[i] = x if first else -x
    return out


@cuda.jit
def one_busy_block(out, spins):
    """One block of one warp spinning for ``spins`` iterations: one SM of dozens busy, yet NVML's
    "GPU utilization" (the share of time some kernel ran) reads 100% while it runs."""
    if cuda.grid(1) == 0:
        acc = float32(0.0)
        for k in range(spins):
            acc += float32(k % 7)
        out[0] = acc
