"""The pointer chase's chain: the one builder every pointer chase in the app uses (the Latency
page's "measure on this GPU" and the Benchmarks page's latency ladder), host side only.

One thread follows the chain, each load's address the previous load's value, so no two loads are
ever in flight together and the time per step is the latency of wherever the chain lives. The
chain is one random cycle through ``slots`` slots (a random visiting order, each slot pointing at
the next in it, the last back at the first), so a prefetcher cannot guess the next address and a
walk of ``slots`` steps touches every slot once. Slots sit ``stride`` int32 elements apart: 32
(one 128-byte line each) in global memory, so every load is a new line; 1 in shared memory.

The kernels that walk it are ``explorer.launch_runs.measured_kernels.chase`` (global memory) and
``chase_shared``; ``walk`` is their reference.
"""

from __future__ import annotations

import numpy as np

#: int32 elements per 128-byte line: the stride of a chain in global memory
LINE_STRIDE = 32
LINE_BYTES = 128
#: the most elements a chain may hold (int32 indices)
MAX_ELEMENTS = 2**31 - 1


def chain(slots: int, seed: int = 0, stride: int = LINE_STRIDE) -> np.ndarray:
    """``next``: an int32 array of ``slots x stride`` elements where ``next[order[k] x stride]`` is
    ``order[k + 1] x stride`` for a random ``order`` of the slots (the last pointing back at the
    first); the elements between slots are 0 and never read. A single slot points at itself.
    ValueError naming the value when ``slots`` or ``stride`` is below 1 or the chain is too long
    for int32 indices."""
    if slots < 1:
        raise ValueError(f"the chain has {slots} slots; it needs at least 1")
    if stride < 1:
        raise ValueError(f"the chain's stride is {stride} elements; it must be at least 1")
    if slots * stride > MAX_ELEMENTS:
        raise ValueError(
            f"the chain has {slots * stride:,} elements; int32 indices reach at most {MAX_ELEMENTS:,}"
        )
    order = np.random.default_rng(seed).permutation(slots).astype(np.int64)
    nxt = np.zeros(slots * stride, dtype=np.int32)
    nxt[order * stride] = (np.roll(order, -1) * stride).astype(np.int32)
    return nxt


def slots_for(footprint_bytes: int, stride: int = LINE_STRIDE) -> int:
    """Slots of a chain over ``footprint_bytes`` (at least 1)."""
    return max(1, footprint_bytes // (4 * stride))


def walk(nxt: np.ndarray, steps: int, start: int = 0) -> int:
    """Where the chase stands after ``steps`` loads from ``start``: the kernels' reference."""
    j = start
    for _ in range(steps):
        j = int(nxt[j])
    return j
