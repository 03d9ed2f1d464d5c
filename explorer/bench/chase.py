"""A GPU's latency ladder: the app's one pointer chase (``explorer.launch_runs.measured_kernels.chase``
over a chain from ``explorer.launch_runs.chase``) timed over footprints from 4 KiB to 4 x the L2, plus
a chase through shared memory. The time per step is the latency of wherever the chain lives: L1
for a few KiB, L2 up to its size, DRAM past it; which rung is which level is decided from the
figures (``explorer.roofs.latency.split_levels``). Stored with the GPU's ceilings.

Method, as stored with the ladder: one thread of one block, each load's address the previous
load's value, one 128-byte line per slot in a random cycle; one untimed lap first (at most
``WARM_STEPS``), then ``STEPS`` timed steps; cycles per step from the kernel's own ``%clock64``
(the SM's cycle counter, so no clock has to be assumed), nanoseconds from its ``%globaltimer``;
their ratio is the SM clock the ladder ran at.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from explorer.roofs.latency import LatencyLadder, LatencyRung

SMALLEST_FOOTPRINT = 4 * 1024
#: the largest footprint, in L2 sizes: far enough past the L2 that nearly every load misses it
L2_MULTIPLE = 4
#: timed steps per rung, and the most untimed steps that warm a rung first
STEPS = 20_000
WARM_STEPS = 2_000_000

METHOD = (
    "pointer chase: one thread, dependent loads over a random cycle of 128-byte lines, one warm lap "
    "untimed (up to {warm:,} steps) then {steps:,} timed; cycles per step from the kernel's own "
    "clock64 (SM cycles), ns from its globaltimer; shared memory: the same chase through a "
    "{shared} KiB chain in shared memory; levels split from the rungs by least squared error of "
    "log-cycles (L1, L2, DRAM), each the median of its rungs"
)


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


def measure_ladder(
    device_name: str,
    l2_bytes: int,
    *,
    steps: int = STEPS,
    warm_steps: int = WARM_STEPS,
    progress: Callable[[float, str], None] = lambda _f, _t: None,
) -> LatencyLadder:
    """Run the ladder on the current numba device (or numba's simulator): one rung per footprint,
    then the shared-memory chase. Every chase is checked to end where the host's walk does."""
    from explorer.launch_runs import measured_kernels as mk
    from explorer.launch_runs.chase import chain, slots_for

    started = time.time()
    sizes = footprints(l2_bytes)
    rungs = []
    total_cycles = total_ns = 0
    for k, size in enumerate(sizes):
        progress(k / (len(sizes) + 1), f"latency ladder: {size // 1024:,} KiB")
        slots = slots_for(size)
        cycles, ns, _ = mk.run_chase(chain(slots, seed=k), slots, steps, warm=min(slots, warm_steps))
        total_cycles, total_ns = total_cycles + cycles, total_ns + ns
        rungs.append(LatencyRung(slots * 128, cycles / steps, ns / steps))
    shared = mk.SHARED_SLOTS
    cycles, ns, _ = mk.run_chase(chain(shared, seed=1, stride=1), shared, steps, warm=0, shared=True)
    progress(1.0, "latency ladder: done")
    return LatencyLadder(
        device_name=device_name,
        measured_at=started,
        rungs=tuple(rungs),
        shared_cycles=cycles / steps,
        sm_clock_mhz=max(1.0, 1e3 * total_cycles / max(1, total_ns)),
        method=METHOD.format(warm=warm_steps, steps=steps, shared=shared * 4 // 1024),
        steps=steps,
        backend="simulator" if mk.SIMULATOR else "gpu",
    )
