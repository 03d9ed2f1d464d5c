"""Vector add: one thread per element, neighbours read neighbours (coalesced).

Run it as a script, or trace it: device-explorer kernel vector_add.py
"""

import numpy as np
from numba import cuda


@cuda.jit
def vector_add(a, b, out, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        out[i] = a[i] + b[i]


if __name__ == "__main__":
    n = 1000
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    threads = 128
    blocks = (n + threads - 1) // threads
    vector_add[blocks, threads](a, b, out, n)
    print("correct:", bool(np.allclose(out, a + b)))
