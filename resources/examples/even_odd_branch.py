"""An even/odd branch: in every warp, 16 lanes take the if and 16 the else, so each warp runs both
paths one after the other with half its lanes idle.

Trace it: device-explorer kernel even_odd_branch.py
"""

import numpy as np
from numba import cuda


@cuda.jit
def even_odd(out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i % 2 == 0:
        out[i] = i * 2
    else:
        out[i] = -i


if __name__ == "__main__":
    out = np.zeros(128, dtype=np.int32)
    even_odd[2, 64](out)
    print("first values:", out[:6].tolist())
