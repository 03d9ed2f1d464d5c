"""The real run's compiled CPU emulation: the vector-add kernel's grid, walked as CUDA numbers it.

Without a GPU the CUDA simulator runs each thread as a Python thread, about 0.1 ms each: the
N = 100,000 lesson took 10 to 23 s. This runs the *same* per-thread index code
(``thread_index.thread_numbers``, which the CUDA kernel also calls) over the same grid, block by block
in CUDA's x-fastest order and thread by thread inside each block, compiled by numba's ``@njit``:
about a nanosecond per thread. It is labelled as an emulation wherever its result is shown; it
proves the index arithmetic, not the GPU.

Importing this module imports numba (and compiles, or loads from numba's on-disk cache): only the
real run's child process imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explorer.jitcache import configure

configure()  # numba reads its cache folder when it decorates: set it first

from numba import njit  # noqa: E402

from explorer.launch_runs import thread_index  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

thread_numbers = njit(cache=True)(thread_index.thread_numbers)


@njit(cache=True)
def emulate(
    grid: np.ndarray,
    block: np.ndarray,
    extent: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    block_of: np.ndarray,
    thread_of: np.ndarray,
    writes: np.ndarray,
    n: int,
) -> None:  # pragma: no cover - compiled
    """Every thread of ``grid`` x ``block`` (int64 arrays of 3) does the kernel's guarded writes;
    ``extent`` is the 2D/3D problem's size, or zeros for a 1-D ``n``."""
    for biz in range(grid[2]):
        for biy in range(grid[1]):
            for bix in range(grid[0]):
                for tiz in range(block[2]):
                    for tiy in range(block[1]):
                        for tix in range(block[0]):
                            block_linear, thread_linear, i = thread_numbers(
                                bix,
                                biy,
                                biz,
                                grid[0],
                                grid[1],
                                tix,
                                tiy,
                                tiz,
                                block[0],
                                block[1],
                                block[2],
                                extent[0],
                                extent[1],
                                extent[2],
                                n,
                            )
                            if i >= 0:  # the kernel's guard
                                c[i] = a[i] + b[i]
                                block_of[i] = block_linear
                                thread_of[i] = thread_linear
                                writes[i] += 1  # threads run one at a time here: no atomic needed
