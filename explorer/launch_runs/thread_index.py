"""One thread's index arithmetic in the real run: which block and thread it is, and the element
it writes. Plain Python on purpose: the real run compiles it as a CUDA device function
(``explorer.launch_runs.realrun``) and the CPU emulation compiles the same function with ``@njit``
(``explorer.launch_runs.realrun_emulation``), so the emulation checks the very code the GPU runs.
Both import it from here; neither imports the other.
"""

from __future__ import annotations


def thread_numbers(
    bix: int,
    biy: int,
    biz: int,
    gdx: int,
    gdy: int,
    tix: int,
    tiy: int,
    tiz: int,
    bdx: int,
    bdy: int,
    bdz: int,
    ex: int,
    ey: int,
    ez: int,
    n: int,
) -> tuple[int, int, int]:
    """(block_linear, thread_linear, i): the index arithmetic of one thread, x fastest as the
    visualizer draws it, and the element it writes (-1: idle, its bounds check skips it). The one
    copy both the CUDA kernel (as a device function) and the CPU emulation (compiled by @njit)
    run, so the emulation checks the same code the GPU runs.

    ``ex`` = 0: a 1-D problem of ``n`` elements indexed by the linear number. Otherwise a 2D/3D
    problem of ``ex`` x ``ey`` x ``ez``: the thread's position per axis, row-major index."""
    block_linear = bix + gdx * (biy + gdy * biz)
    thread_linear = tix + bdx * (tiy + bdy * tiz)
    if ex == 0:
        i = block_linear * (bdx * bdy * bdz) + thread_linear
        if i >= n:
            i = -1
        return block_linear, thread_linear, i
    x = bix * bdx + tix
    y = biy * bdy + tiy
    z = biz * bdz + tiz
    if x < ex and y < ey and z < ez:
        return block_linear, thread_linear, (z * ey + y) * ex + x
    return block_linear, thread_linear, -1
