"""A pointer-chase latency ladder: one thread following a chain of dependent loads, so each load's
address is the previous load's value and no two are ever in flight together. The time per step
is then the latency of wherever the chain lives: L1 for a few KiB, L2 up to its size, DRAM past
it. The footprints climb from 4 KiB to 4 x the L2 so the last rungs sit well outside it.

Host side only (the chain and the reference walk); the kernel is ``roof_kernels.chase``. The chain
is one random cycle through every slot (a random visiting order, each slot pointing at the next
in it), so a prefetcher cannot guess the next
address and a walk of ``len(chain)`` steps touches every slot exactly once. Checked for
correctness on numba's simulator; not yet timed on a GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

#: bytes per slot of the chain (one int64 index)
SLOT_BYTES = 8
SMALLEST_FOOTPRINT = 4 * 1024
#: the largest footprint, in L2 sizes: far enough past the L2 that nearly every load misses it
L2_MULTIPLE = 4


def footprints(l2_bytes: int) -> list[int]:
    """Working sets from 4 KiB doubling up to at least ``L2_MULTIPLE`` x the L2 (the last rung is
    exactly that multiple). ValueError naming the value when the L2 size is not positive."""
    if l2_bytes < 1:
        raise ValueError(f"the L2 size is {l2_bytes} bytes; it must be at least 1")
    top = L2_MULTIPLE * l2_bytes
    sizes = []
    size = SMALLEST_FOOTPRINT
    while size < top:
        sizes.append(size)
        size *= 2
    sizes.append(max(top, SMALLEST_FOOTPRINT))
    return sizes


def chain(slots: int, seed: int = 0) -> np.ndarray:
    """``next[i]``: one random cycle through all ``slots``, int64: a random visiting order, each
    slot pointing at the next one in it and the last back at the first (so it is one cycle
    whatever the order). A single slot points at itself. ValueError naming the value when
    ``slots`` is below 1."""
    import numpy as np

    if slots < 1:
        raise ValueError(f"the chain has {slots} slots; it needs at least 1")
    order = np.random.default_rng(seed).permutation(slots).astype(np.int64)
    nxt = np.empty(slots, dtype=np.int64)
    nxt[order] = np.roll(order, -1)
    return nxt


def walk(nxt: np.ndarray, steps: int, start: int = 0) -> int:
    """Where the chase stands after ``steps`` loads from ``start``: the kernel's reference."""
    j = start
    for _ in range(steps):
        j = int(nxt[j])
    return j
