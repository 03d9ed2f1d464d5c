"""How many blocks a grid-stride kernel is launched with: pure arithmetic, no numba, so the
workloads and the tests reach it without loading a CUDA target.

A memory-bound kernel saturates DRAM only with enough loads in flight: every SM full of threads,
each with several independent loads waiting (Little's law: bandwidth x latency bytes in flight,
some megabytes on an HBM GPU). So the grid is as many blocks as the GPU holds at once, and each
thread walks the data with the grid's width as its stride, ``per_thread`` elements at a time.
"""

from __future__ import annotations

from explorer.launch.schedule import blocks_for

#: independent loads of each input a thread of a streaming kernel has in flight per step
UNROLL = 4
#: the resident threads an SM holds where the device does not say (2048 from Volta to Hopper,
#: except 1024 on Turing and 1536 on consumer Ampere and Ada)
THREADS_PER_SM_DEFAULT = 2048


def resident_blocks(
    n: int,
    threads_per_block: int,
    sms: int | None,
    threads_per_sm: int | None = None,
    per_thread: int = UNROLL,
) -> int:
    """The blocks a grid-stride kernel over ``n`` elements is launched with: as many as ``sms``
    SMs hold at once (each full, so every load slot can be busy), but none beyond what gives
    every thread ``per_thread`` elements. Without the SM count, that many blocks alone (the
    simulator's case). At least one."""
    wanted = blocks_for(max(1, -(-n // max(1, per_thread))), threads_per_block)
    if not sms:
        return max(1, wanted)
    per_sm = max(1, (threads_per_sm or THREADS_PER_SM_DEFAULT) // threads_per_block)
    return max(1, min(wanted, sms * per_sm))
