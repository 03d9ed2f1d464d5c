"""The numba CUDA kernels that measure a GPU's L2 and DRAM bandwidth (``explorer.bench.gpu_sweep``).

Imported only where a kernel is about to run (the benchmark worker, the simulator tests), since
the import pulls in numba.cuda; under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's
simulator, which is how the tests check their results without a GPU. Every thread walks the
buffer with the grid's stride, so each warp reads 256 contiguous bytes at a time, with ``UNROLL``
loads in flight per step, and goes over it ``reps`` times in one launch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.numbacuda import cuda

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

#: independent loads each thread has in flight per step of its walk: one load at a time leaves the
#: memory system idle between a load's issue and its data (hundreds of cycles), and HBM only
#: saturates with several per thread. Each of the ``UNROLL`` loads is still one warp-contiguous
#: run (the grid's stride apart), so coalescing is unchanged.
UNROLL = 4


@cuda.jit
def read(x: np.ndarray, reps: int, out: np.ndarray) -> None:
    """``acc += x[i]`` over the whole buffer ``reps`` times; each thread writes its sum (so no load
    is dropped): 8 bytes read per element and pass. ``UNROLL`` independent loads per step, into
    as many accumulators, then the tail one at a time."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = x.shape[0]
    acc0 = 0.0
    acc1 = 0.0
    acc2 = 0.0
    acc3 = 0.0
    for _ in range(reps):
        i = start
        while i + 3 * stride < n:
            acc0 += x[i]
            acc1 += x[i + stride]
            acc2 += x[i + 2 * stride]
            acc3 += x[i + 3 * stride]
            i += 4 * stride
        while i < n:
            acc0 += x[i]
            i += stride
    if start < out.shape[0]:
        out[start] = (acc0 + acc1) + (acc2 + acc3)


@cuda.jit
def copy(x: np.ndarray, y: np.ndarray, reps: int) -> None:
    """``y[i] = x[i]`` ``reps`` times: 16 bytes per element and pass (read + write). ``UNROLL``
    loads are issued before their stores, so they are in flight together."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = x.shape[0]
    for _ in range(reps):
        i = start
        while i + 3 * stride < n:
            v0 = x[i]
            v1 = x[i + stride]
            v2 = x[i + 2 * stride]
            v3 = x[i + 3 * stride]
            y[i] = v0
            y[i + stride] = v1
            y[i + 2 * stride] = v2
            y[i + 3 * stride] = v3
            i += 4 * stride
        while i < n:
            y[i] = x[i]
            i += stride


#: independent FP32 accumulators per thread of the FMA loop: with 8 warps or more per scheduler,
#: enough FMAs in flight to cover their ~4-cycle latency on every SM
FMA_ACCUMULATORS = 8


@cuda.jit
def fma(out: np.ndarray, n: int, b: float, c: float) -> None:
    """The GPU's FP32 FMA ceiling: each thread runs ``n`` iterations of ``FMA_ACCUMULATORS``
    independent ``a = fma(a, b, c)`` (2 FLOP each) and writes their sum (so nothing is dropped).
    ``b`` and ``c`` are run-time values; launched with several blocks per SM, every SM's FP32
    pipes are kept busy. Checked on numba's simulator; not yet run on a GPU."""
    start = cuda.grid(1)
    a0 = 0.001 * (start % 7)
    a1 = a0 + 0.1
    a2 = a0 + 0.2
    a3 = a0 + 0.3
    a4 = a0 + 0.4
    a5 = a0 + 0.5
    a6 = a0 + 0.6
    a7 = a0 + 0.7
    for _ in range(n):
        a0 = cuda.fma(a0, b, c)
        a1 = cuda.fma(a1, b, c)
        a2 = cuda.fma(a2, b, c)
        a3 = cuda.fma(a3, b, c)
        a4 = cuda.fma(a4, b, c)
        a5 = cuda.fma(a5, b, c)
        a6 = cuda.fma(a6, b, c)
        a7 = cuda.fma(a7, b, c)
    if start < out.shape[0]:
        out[start] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
