"""The event loop of ``explorer.launch.dispatch``, compiled by numba (imported only when a launch
whose blocks differ in length is simulated; equal blocks take the closed form instead).

One pass over the blocks in launch order with a binary heap of the running blocks' end times:
about 10^7 simple steps for a million blocks, which Python's own loop needs seconds for and
numba a few tens of milliseconds. Compiled on first use and kept in numba's on-disk cache.
"""

from __future__ import annotations

import numpy as np

from explorer.jitcache import configure

configure()  # numba reads its cache folder when it decorates: set it first

from numba import njit  # noqa: E402


@njit(cache=True)
def _push(
    heap_t: np.ndarray, heap_g: np.ndarray, n: int, t: float, g: int
) -> int:  # pragma: no cover - compiled
    """Add (t, g) to the heap of n entries; ties on t are ordered by slot number g."""
    i = n
    heap_t[i] = t
    heap_g[i] = g
    while i > 0:
        parent = (i - 1) // 2
        if heap_t[parent] < heap_t[i] or (heap_t[parent] == heap_t[i] and heap_g[parent] <= heap_g[i]):
            break
        heap_t[i], heap_t[parent] = heap_t[parent], heap_t[i]
        heap_g[i], heap_g[parent] = heap_g[parent], heap_g[i]
        i = parent
    return n + 1


@njit(cache=True)
def _pop(heap_t: np.ndarray, heap_g: np.ndarray, n: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """Remove the smallest entry of the heap of n entries; returns (its slot, n - 1)."""
    g = heap_g[0]
    n -= 1
    heap_t[0] = heap_t[n]
    heap_g[0] = heap_g[n]
    _sift_down(heap_t, heap_g, n)
    return g, n


@njit(cache=True)
def _sift_down(heap_t: np.ndarray, heap_g: np.ndarray, n: int) -> None:  # pragma: no cover - compiled
    """Restore the heap after its first entry grew."""
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        child = left
        right = left + 1
        if right < n and (
            heap_t[right] < heap_t[left] or (heap_t[right] == heap_t[left] and heap_g[right] < heap_g[left])
        ):
            child = right
        if heap_t[i] < heap_t[child] or (heap_t[i] == heap_t[child] and heap_g[i] <= heap_g[child]):
            break
        heap_t[i], heap_t[child] = heap_t[child], heap_t[i]
        heap_g[i], heap_g[child] = heap_g[child], heap_g[i]
        i = child


@njit(cache=True)
def _place(
    i: int, s: int, t: float, duration: float, slots_per_sm: int, state: tuple[np.ndarray, ...], n_heap: int
) -> int:  # pragma: no cover - compiled
    """Start block i at time t on SM s, in its lowest-numbered free slot; returns the heap's new size.
    ``state``: (slot_free, free, start, sm_of, slot_of, heap_t, heap_g), the loop's arrays."""
    slot_free, free, start, sm_of, slot_of, heap_t, heap_g = state
    for k in range(slots_per_sm):
        g = s * slots_per_sm + k
        if slot_free[g]:
            break
    slot_free[g] = False
    free[s] -= 1
    start[i] = t
    sm_of[i] = s
    slot_of[i] = k
    return _push(heap_t, heap_g, n_heap, t + duration, g)


@njit(cache=True)
def run_dispatch(
    durations: np.ndarray, sm_count: int, slots_per_sm: int, round_robin: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """Start each block, in launch order, the moment a slot is free; returns (start, sm, slot).

    At each moment slots free up, the waiting blocks go one at a time to: ``round_robin`` False,
    the SM with the most free slots (the lowest-numbered among equals); True, the first SM with a
    free slot after the one that got the previous block (GPGPU-Sim's order). Inside an SM a block
    takes its lowest-numbered free slot.
    """
    blocks = durations.shape[0]
    slots = sm_count * slots_per_sm
    start = np.empty(blocks, np.float64)
    sm_of = np.empty(blocks, np.int32)
    slot_of = np.empty(blocks, np.int32)
    free = np.full(sm_count, slots_per_sm, np.int64)
    level = np.zeros(sm_count, np.int64)
    slot_free = np.ones(slots, np.bool_)
    heap_t = np.empty(slots, np.float64)
    heap_g = np.empty(slots, np.int64)
    n_heap = 0
    cand = np.empty(sm_count, np.int64)  # the SMs with a free slot at this moment
    in_cand = np.zeros(sm_count, np.bool_)
    for s in range(sm_count):
        cand[s] = s
        in_cand[s] = True
    n_cand = sm_count
    state = (slot_free, free, start, sm_of, slot_of, heap_t, heap_g)
    t = 0.0
    last = sm_count - 1
    i = 0
    while i < blocks:
        if n_cand > 32:
            cand[:n_cand] = np.sort(cand[:n_cand])
        else:  # a few SMs freed a slot at once: sort in place, no array made
            for a in range(1, n_cand):
                x = cand[a]
                b = a - 1
                while b >= 0 and cand[b] > x:
                    cand[b + 1] = cand[b]
                    b -= 1
                cand[b + 1] = x
        if round_robin:
            remaining = 0
            pos = 0
            for c in range(n_cand):
                remaining += free[cand[c]]
            for c in range(n_cand):
                if cand[c] > last:
                    pos = c
                    break
            while i < blocks and remaining > 0:
                s = cand[pos]
                if free[s] > 0:
                    n_heap = _place(i, s, t, durations[i], slots_per_sm, state, n_heap)
                    i += 1
                    remaining -= 1
                    last = s
                pos += 1
                if pos == n_cand:
                    pos = 0
        else:
            top = 0
            for c in range(n_cand):
                level[cand[c]] = free[cand[c]]
                if free[cand[c]] > top:
                    top = free[cand[c]]
            v = top
            while v > 0 and i < blocks:
                for c in range(n_cand):
                    s = cand[c]
                    if level[s] >= v:
                        n_heap = _place(i, s, t, durations[i], slots_per_sm, state, n_heap)
                        i += 1
                        if i == blocks:
                            break
                v -= 1
        if i == blocks:
            break
        # The usual moment: one block ends alone (its heap entry is the only one at that time, so
        # both children of the root are later) and the next block takes its slot, whatever the
        # policy: one sift of the heap instead of a pop and a push.
        while i < blocks and not (
            (n_heap > 1 and heap_t[1] == heap_t[0]) or (n_heap > 2 and heap_t[2] == heap_t[0])
        ):
            t = heap_t[0]
            g = heap_g[0]
            s = g // slots_per_sm
            start[i] = t
            sm_of[i] = s
            slot_of[i] = g - s * slots_per_sm
            heap_t[0] = t + durations[i]
            _sift_down(heap_t, heap_g, n_heap)
            last = s
            i += 1
        if i == blocks:
            break
        for c in range(n_cand):
            in_cand[cand[c]] = False
        n_cand = 0
        # the next moment a block ends: free every slot whose block ends then
        t = heap_t[0]
        while n_heap > 0 and heap_t[0] == t:
            g, n_heap = _pop(heap_t, heap_g, n_heap)
            slot_free[g] = True
            s = g // slots_per_sm
            free[s] += 1
            if not in_cand[s]:
                in_cand[s] = True
                cand[n_cand] = s
                n_cand += 1
    return start, sm_of, slot_of
