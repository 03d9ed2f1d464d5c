"""numba CUDA kernels for the vector-add and matrix-vector workloads.

Imported only where a kernel is about to run (the benchmark worker, the simulator tests): the
import pulls in numba.cuda. Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run on numba's
CUDA simulator, which is how the tests check them on a machine without a GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from numba import float32

from explorer.launch.schedule import blocks_for
from explorer.numbacuda import cuda

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

THREADS_PER_BLOCK = 1024  # the most a block may hold on every CUDA GPU since compute capability 2.0


@cuda.jit
def vector_add(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[i] = a[i] + b[i], one thread per element (threads past the end do nothing)."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = a[i] + b[i]


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


def launch_vector_add(a_dev: DeviceNDArray, b_dev: DeviceNDArray, out_dev: DeviceNDArray) -> None:
    n = out_dev.shape[0]
    vector_add[blocks_for(n, THREADS_PER_BLOCK), THREADS_PER_BLOCK](a_dev, b_dev, out_dev)


def launch_matvec(m_dev: DeviceNDArray, v_dev: DeviceNDArray, out_dev: DeviceNDArray) -> None:
    n = m_dev.shape[0]
    matvec_row_per_thread[blocks_for(n, THREADS_PER_BLOCK), THREADS_PER_BLOCK](m_dev, v_dev, out_dev)
