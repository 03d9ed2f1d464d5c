"""numba CUDA kernels for the vector-add and matrix-vector workloads.

Imported only where a kernel is about to run (the benchmark worker, the simulator tests): the
import pulls in numba.cuda. Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's
CUDA simulator, which is how the tests check them on a machine without a GPU.

The vector add is a grid-stride loop with ``UNROLL`` independent loads of each input in flight per
thread, launched with as many blocks as the GPU holds at once (``resident_blocks``): one element
per thread with one load in flight left an H100 at a third of its DRAM bandwidth, since HBM only
saturates with several loads per thread waiting at once. Each of the unrolled loads is still one
warp-contiguous run (the grid's width apart), so every access stays coalesced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from numba import float32

from explorer.bench.grid import resident_blocks
from explorer.launch.schedule import blocks_for
from explorer.numbacuda import cuda

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

THREADS_PER_BLOCK = 1024  # the most a block may hold on every CUDA GPU since compute capability 2.0


@cuda.jit
def vector_add(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[i] = a[i] + b[i] over a grid-stride loop: four elements of a and four of b (``grid.UNROLL``)
    are loaded before the first sum is stored, so eight loads per thread are in flight together;
    the tail (under four grid widths) one element at a time."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = out.shape[0]
    i = start
    while i + 3 * stride < n:
        a0 = a[i]
        a1 = a[i + stride]
        a2 = a[i + 2 * stride]
        a3 = a[i + 3 * stride]
        b0 = b[i]
        b1 = b[i + stride]
        b2 = b[i + 2 * stride]
        b3 = b[i + 3 * stride]
        out[i] = a0 + b0
        out[i + stride] = a1 + b1
        out[i + 2 * stride] = a2 + b2
        out[i + 3 * stride] = a3 + b3
        i += 4 * stride
    while i < n:
        out[i] = a[i] + b[i]
        i += stride


@cuda.jit
def fill(buf: np.ndarray, value: int) -> None:
    """buf[i] = value over a grid-stride loop: the write that evicts the L2 before a cold sample
    (``explorer.bench.wl_numba.L2Flush``)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    i = start
    while i < buf.shape[0]:
        buf[i] = value
        i += stride


@cuda.jit
def matvec_row_per_thread(m: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """out[row] = m[row, :] . v, one thread per row, accumulated in float32 (float64 is up to 64x
    slower on consumer GPUs)."""
    row = cuda.grid(1)
    if row < m.shape[0]:
        acc = float32(0.0)
        for j in range(m.shape[1]):
            acc += m[row, j] * v[j]
        out[row] = acc


def launch_vector_add(
    a_dev: DeviceNDArray, b_dev: DeviceNDArray, out_dev: DeviceNDArray, blocks: int | None = None
) -> None:
    """The vector add over ``blocks`` blocks (``resident_blocks``; without it, one block per
    ``UNROLL`` x ``THREADS_PER_BLOCK`` elements)."""
    n = out_dev.shape[0]
    grid = blocks if blocks is not None else resident_blocks(n, THREADS_PER_BLOCK, None)
    vector_add[grid, THREADS_PER_BLOCK](a_dev, b_dev, out_dev)


def launch_matvec(m_dev: DeviceNDArray, v_dev: DeviceNDArray, out_dev: DeviceNDArray) -> None:
    n = m_dev.shape[0]
    matvec_row_per_thread[blocks_for(n, THREADS_PER_BLOCK), THREADS_PER_BLOCK](m_dev, v_dev, out_dev)
