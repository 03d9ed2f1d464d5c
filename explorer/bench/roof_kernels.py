"""The numba CUDA kernels that measure a GPU's L2 and DRAM bandwidth (``explorer.bench.gpu_sweep``).

Imported only where a kernel is about to run (the benchmark worker, the simulator tests), since
the import pulls in numba.cuda; under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's
simulator, which is how the tests check their results without a GPU. Every thread walks the
buffer with the grid's stride, so each warp reads 256 contiguous bytes at a time, and goes over it
``reps`` times in one launch.
"""

from __future__ import annotations

from explorer.numbacuda import cuda


@cuda.jit
def read(x, reps, out):
    """``acc += x[i]`` over the whole buffer ``reps`` times; each thread writes its sum (so no load
    is dropped): 8 bytes read per element and pass."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    for _ in range(reps):
        i = start
        while i < x.shape[0]:
            acc += x[i]
            i += stride
    if start < out.shape[0]:
        out[start] = acc


@cuda.jit
def copy(x, y, reps):
    """``y[i] = x[i]`` ``reps`` times: 16 bytes per element and pass (read + write)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for _ in range(reps):
        i = start
        while i < x.shape[0]:
            y[i] = x[i]
            i += stride
