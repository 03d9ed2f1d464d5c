"""numba CUDA kernels that measure what explorer.memory models: strided reads, a shared-memory
transpose with and without padding, a divergent vs a warp-aligned branch, and the utilization
trap (one busy block that NVML reports as "100% GPU utilization"). The benchmark workloads that
run them are in ``explorer.bench.wl_memory``.

Imported only where a kernel is about to run (the benchmark worker, the simulator tests), since
the import pulls in numba.cuda. Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's
simulator, which is how the tests check their results on a machine without a GPU.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from numba import float32, int64

from explorer.numbacuda import cuda

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numpy.typing import ArrayLike

THREADS = 256
TILE = 32
WARP = 32  # the busy kernel's blocks are one warp each


@cuda.jit
def strided_read(src: np.ndarray, dst: np.ndarray, stride: int) -> None:
    """dst[i] = src[i * stride]: neighbouring threads read ``stride`` elements apart, so a warp's
    load touches up to 32 sectors where a unit stride touches 4; the writes stay coalesced.

    A grid-stride loop, four loads issued before their four stores so they are in flight together
    (one load at a time left an H100 at 59% of its DRAM bandwidth at stride 1). Each of the four
    is a warp's 32 consecutive ``i``, the grid's width apart, so every warp access has exactly
    the stride's sector pattern the coalescing model counts, and every ``i`` below
    ``dst.shape[0]`` is copied once: the same elements as one thread per element."""
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    n = dst.shape[0]
    i = start
    while i + 3 * step < n:
        v0 = src[i * stride]
        v1 = src[(i + step) * stride]
        v2 = src[(i + 2 * step) * stride]
        v3 = src[(i + 3 * step) * stride]
        dst[i] = v0
        dst[i + step] = v1
        dst[i + 2 * step] = v2
        dst[i + 3 * step] = v3
        i += 4 * step
    while i < n:
        dst[i] = src[i * stride]
        i += step


def _make_transpose(padding: int) -> Any:  # a numba CUDA dispatcher
    width = TILE + padding

    @cuda.jit
    def transpose(src: np.ndarray, dst: np.ndarray) -> None:
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


def launch_transpose(src_dev: DeviceNDArray, dst_dev: DeviceNDArray, padded: bool) -> None:
    rows, cols = src_dev.shape
    grid = (math.ceil(cols / TILE), math.ceil(rows / TILE))
    kernel = transpose_padded if padded else transpose_naive
    kernel[grid, (TILE, TILE)](src_dev, dst_dev)


@cuda.jit(device=True)
def _work(x: float, steps: int) -> float:
    for _ in range(steps):
        x = x * float32(0.999) + float32(0.001)
    return x


@cuda.jit
def branch_by_lane(data: np.ndarray, steps: int) -> None:
    """Odd and even lanes take different paths: every warp runs both, each at half its lanes."""
    i = cuda.grid(1)
    if i < data.shape[0]:
        if i % 2 == 0:
            data[i] = _work(data[i], steps)
        else:
            data[i] = -_work(-data[i], steps)


@cuda.jit
def branch_by_warp(data: np.ndarray, steps: int) -> None:
    """The same two paths chosen per warp ((i / 32) % 2): no warp diverges."""
    i = cuda.grid(1)
    if i < data.shape[0]:
        if (i // 32) % 2 == 0:
            data[i] = _work(data[i], steps)
        else:
            data[i] = -_work(-data[i], steps)


def reference_branch(values: ArrayLike, steps: int, by_warp: bool) -> np.ndarray:
    """What either branch kernel computes, on the host in float32 like the device, vectorised so a
    benchmark can check millions of elements. A GPU may fuse the multiply and the add (one
    rounding instead of two), so compare with a relative tolerance, not bit for bit."""
    import numpy as np

    v = np.asarray(values, dtype=np.float32)
    index = np.arange(v.shape[0])
    first = (index // 32) % 2 == 0 if by_warp else index % 2 == 0
    x = np.where(first, v, -v).astype(np.float32)
    for _ in range(steps):
        x = x * np.float32(0.999) + np.float32(0.001)
    return np.where(first, x, -x).astype(np.float32)


#: the linear congruential step the busy kernel repeats (Numerical Recipes' constants, mod 2^32):
#: a chain of multiplications no compiler can fold into a closed form, so the loop really runs
LCG_A = 1664525
LCG_C = 1013904223
LCG_MASK = 0xFFFFFFFF


@cuda.jit
def busy_warps(out: np.ndarray, steps: int) -> None:
    """Every thread runs ``steps`` dependent LCG steps from its own index. Launched as blocks of
    one warp, ``blocks`` of them keep at most ``blocks`` SMs busy; NVML's "GPU utilization" (the
    share of time some kernel ran) reads 100% while even one such block runs."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        x = int64(i)  # int64: x * LCG_A stays below 2^53, no overflow
        for _ in range(steps):
            x = (x * LCG_A + LCG_C) & LCG_MASK
        out[i] = x


def lcg_jump(steps: int) -> tuple[int, int]:
    """(a, c) with ``x_after_steps = (a * x + c) mod 2^32``: the LCG composed ``steps`` times by
    squaring, so the host checks a kernel of billions of steps in microseconds."""
    a, c = 1, 0  # the identity
    step_a, step_c = LCG_A, LCG_C  # the map for 2^k steps
    while steps:
        if steps & 1:
            a, c = (step_a * a) & LCG_MASK, (step_a * c + step_c) & LCG_MASK
        step_a, step_c = (step_a * step_a) & LCG_MASK, (step_a * step_c + step_c) & LCG_MASK
        steps >>= 1
    return a, c


def reference_busy(threads: int, steps: int) -> np.ndarray:
    """What ``busy_warps`` leaves in ``out[:threads]``, computed on the host (int64, exact)."""
    import numpy as np

    a, c = lcg_jump(steps)
    x = np.arange(threads, dtype=np.uint64)
    return ((x * np.uint64(a) + np.uint64(c)) & np.uint64(LCG_MASK)).astype(np.int64)


@cuda.jit
def fill_index(a: np.ndarray) -> None:
    """a[j] = j (as a's type): a large input made on the device, checkable on the host without a
    copy of it there. A grid-stride loop, so any grid covers the whole array."""
    j = cuda.grid(1)
    step = cuda.gridsize(1)
    while j < a.shape[0]:
        a[j] = j
        j += step
