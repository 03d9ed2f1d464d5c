"""Matrix-vector product, one thread per row: at each step the 32 lanes of a warp read 32 different
rows, one element each, 4 x cols bytes apart. Each load touches 32 sectors (uncoalesced).

Trace it: device-explorer kernel matvec_row_per_thread.py, then compare matvec_coalesced.py.
"""

import numpy as np
from numba import cuda


@cuda.jit
def matvec(m, x, y):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < m.shape[0]:
        total = 0.0
        for col in range(m.shape[1]):
            total += m[row, col] * x[col]
        y[row] = total


if __name__ == "__main__":
    rows, cols = 64, 32
    m = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    x = np.ones(cols, dtype=np.float32)
    y = np.zeros(rows, dtype=np.float32)
    matvec[(rows + 31) // 32, 32](m, x, y)
    print("correct:", bool(np.allclose(y, m @ x, atol=1e-4)))
