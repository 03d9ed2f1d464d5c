"""Transpose through a 32 x 32 shared tile. Written down a column, the tile puts all 32 lanes in
one bank (a 32-way conflict); padded to 33 columns, every lane has its own bank.

Trace it: device-explorer kernel transpose_shared.py (the naive and the padded kernel, one launch each).
"""

import numpy as np
from numba import cuda, float32

TILE = 32


@cuda.jit
def transpose_naive(a, out):
    tile = cuda.shared.array((TILE, TILE), float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    tx = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    ty = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    out[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


@cuda.jit
def transpose_padded(a, out):
    tile = cuda.shared.array((TILE, TILE + 1), float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    tx = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    ty = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    out[ty, tx] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


if __name__ == "__main__":
    a = np.arange(TILE * TILE, dtype=np.float32).reshape(TILE, TILE)
    for kernel in (transpose_naive, transpose_padded):
        out = np.zeros_like(a)
        kernel[(1, 1), (TILE, TILE)](a, out)
        print(kernel.__name__, "correct:", bool(np.array_equal(out, a.T)))
