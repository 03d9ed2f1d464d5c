"""Matrix-vector product, one warp per row: the 32 lanes read 32 neighbouring elements of one row
(one request, 4 sectors), then add their partial sums through shared memory.

Trace it: device-explorer kernel matvec_coalesced.py, beside matvec_row_per_thread.py.
"""

import numpy as np
from numba import cuda, float32

WARP = 32


@cuda.jit
def matvec(m, x, y):
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    partial = cuda.shared.array(WARP, float32)
    total = 0.0
    for col in range(lane, m.shape[1], WARP):
        total += m[row, col] * x[col]
    partial[lane] = total
    cuda.syncthreads()
    if lane == 0:
        s = 0.0
        for k in range(WARP):
            s += partial[k]
        y[row] = s


if __name__ == "__main__":
    rows, cols = 64, 64
    m = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    x = np.ones(cols, dtype=np.float32)
    y = np.zeros(rows, dtype=np.float32)
    matvec[rows, WARP](m, x, y)
    print("correct:", bool(np.allclose(y, m @ x, atol=1e-4)))
