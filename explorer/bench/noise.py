"""Was this point disturbed? What the machine did while a point was timed, and the verdict on it.

A benchmark on a laptop shares the CPU with everything else the user runs. A multi-threaded BLAS
call waits at each barrier for its slowest thread, so one thread pushed off its core by another
program can make a 0.1 ms matmul take a whole scheduler slice (8 ms): a figure 10-100x off that
looks like any other. No single signal catches every case, so four are recorded around the timed
region (never the set-up or warm-up) and judged together:

* **waiting**: how long the worker's threads were ready to run but had no CPU (Linux run-queue
  delay, ``/proc/self/task/*/schedstat``, nanoseconds). Preemption, measured directly. Where the
  OS does not report it, the worker's own CPU time against the wall time stands in for it.
* **others**: CPU time the rest of the machine used (psutil's system-wide busy time minus the
  worker's own), as a share of every core for the whole region. It catches what preemption
  misses: a program on a hyper-thread sibling, or one competing for memory bandwidth.
* **steal**: time the hypervisor gave to other virtual machines (Linux guests report it).
* **spread**: the samples themselves; a middle half spread wider than a quarter of the median, or
  a median far above the fastest sample, means the conditions changed while timing.

:func:`noise_verdict` is a pure function of those figures, so the thresholds below are tested with
synthetic samples; :func:`observe_start` / :func:`observe_end` read the machine.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.words import percent

#: our threads waited for a CPU more than this share of the time they should have run
WAITING_LIMIT = 0.10
#: the worker's main thread ran less than this share of the wall time (used only where the OS
#: does not report run-queue delay): it was off the CPU the rest of the time
OWN_CPU_FLOOR = 0.80
#: other programs used more than this share of the whole machine beyond the cores our threads
#: leave free (a one-thread numpy loop on 2 cores leaves one core for everyone else)
OTHERS_LIMIT = 0.10
#: the hypervisor gave more than this share of the machine to other virtual machines (the same
#: bar as other programs' use: both are someone else holding the CPU; 5% flagged quiet points on
#: a cloud VM whose figures were within their normal spread)
STEAL_LIMIT = 0.10
#: the interquartile range of the samples exceeds this share of the median
SPREAD_LIMIT = 0.25
#: the median is more than this many times the fastest sample
MEDIAN_OVER_MIN_LIMIT = 1.5
#: system CPU times come in clock ticks; two ticks per core is the uncertainty of a difference
TICK_S = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


@dataclass(frozen=True)
class MachineSnapshot:
    """The counters :func:`observe_end` subtracts; every field in seconds since some origin."""

    wall_s: float
    own_cpu_s: float  # this process, all threads (nanosecond clock)
    busy_s: float  # the whole machine, all cores: user + nice + system + irq + softirq
    steal_s: float | None
    waiting_s: float | None  # run-queue delay summed over this process's threads
    waiting_by_thread: dict[int, float] | None


@dataclass(frozen=True)
class Load:
    """What happened on the machine during one timed region."""

    wall_s: float
    own_cpu_s: float
    others_cpu_s: float  # clamped at 0: tick rounding can make it slightly negative
    cpus: int
    steal_s: float | None = None
    waiting_s: float | None = None  # None: the OS does not report run-queue delay

    def others_share(self) -> float:
        """Other programs' CPU use as a share of every core for the whole region."""
        return self.others_cpu_s / (self.wall_s * self.cpus) if self.wall_s > 0 else 0.0

    def steal_share(self) -> float | None:
        if self.steal_s is None or self.wall_s <= 0:
            return None
        return self.steal_s / (self.wall_s * self.cpus)

    def waiting_share(self, threads: int) -> float | None:
        if self.waiting_s is None or self.wall_s <= 0:
            return None
        return self.waiting_s / (self.wall_s * max(1, threads))


@dataclass(frozen=True)
class Verdict:
    noisy: bool
    reason: str  # "" when not noisy; otherwise every cause found, in words, most telling first


def noise_verdict(
    load: Load | None,
    *,
    threads: int,
    median_s: float,
    min_s: float,
    spread_s: float,
    repeats: int,
    on_cpu: bool = True,
    threads_quiet: int | None = None,
    others_busy_at_start: float = 0.0,
) -> Verdict:
    """The verdict on one point from what disturbed it. Pure: the thresholds are module constants.

    ``threads`` is how many threads the point computes with (1 for a GPU point: the thread that
    launches and waits). ``on_cpu`` is False for GPU points, whose worker thread legitimately sleeps
    while the GPU works, so its own CPU time says nothing about preemption. ``threads_quiet`` is how
    many threads the point would have used on a quiet machine: a point that gave threads up because
    other programs held cores (:func:`threads_to_use`) is no longer the machine's figure, however
    steadily it ran, so it is marked (measured: 1.5-2.2x the quiet median with two busy programs).
    """
    reasons: list[str] = []
    if threads_quiet is not None and threads < threads_quiet:
        reasons.append(
            f"other programs kept {others_busy_at_start:.1f} cores busy, so it ran on "
            f"{threads} of {threads_quiet} threads"
        )
    if load is not None and load.wall_s > 0:
        threads = max(1, min(threads, load.cpus))
        waiting = load.waiting_share(threads)
        if waiting is not None:
            if waiting > WAITING_LIMIT:
                reasons.append(
                    f"its threads waited for a CPU {percent(waiting, decimals=0)} of the time (other programs had the cores)"
                )
        elif on_cpu:
            ran = load.own_cpu_s / load.wall_s
            if ran < OWN_CPU_FLOOR:
                reasons.append(
                    f"it ran only {percent(ran, decimals=0)} of the time it was timed (other programs had the cores)"
                )
        others = load.others_share()
        free = (load.cpus - threads) / load.cpus  # cores this point leaves to everyone else
        resolution = 2 * TICK_S / load.wall_s  # two ticks per core, as a share of all cores
        if others > free + OTHERS_LIMIT + resolution:
            reasons.insert(
                0, f"other programs used {percent(others, decimals=0)} of the CPU during this point"
            )
        steal = load.steal_share()
        if steal is not None and steal > STEAL_LIMIT + resolution:
            reasons.append(
                f"the hypervisor gave {percent(steal, decimals=0)} of the CPU to other virtual machines"
            )
    if repeats >= 4 and median_s > 0 and spread_s / median_s > SPREAD_LIMIT:
        reasons.append(
            f"its samples spread widely (IQR {percent(spread_s / median_s, decimals=0)} of the median)"
        )
    if repeats >= 2 and min_s > 0 and median_s / min_s > MEDIAN_OVER_MIN_LIMIT:
        reasons.append(f"the median is {median_s / min_s:.1f}x the fastest sample")
    return Verdict(bool(reasons), "; ".join(reasons))


# --- how many threads a CPU point can use without waiting at its own barriers -----------------


def threads_to_use(max_threads: int, cpus: int, others_busy_cores: float) -> int:
    """As many threads as the cores other programs leave free, at least one, at most ``max_threads``.

    Why: a multi-threaded BLAS call ends at a barrier where every thread waits for the slowest.
    With another program busy on a core, one of our threads loses that core for a scheduler slice
    and the others wait. Measured on a 2-core machine whose cores other programs kept busy (load
    average 10), at the window's low priority: a 256x256 matmul took 40.9 ms per call on 2 threads
    (0.11 ms when the machine is quiet) and 0.24 ms on 1 thread. One thread per free core degrades
    in proportion to the competition instead of by a factor of hundreds. The count is recorded
    with the point, and the noise verdict still judges what happened.
    """
    free = cpus - max(0.0, others_busy_cores)
    return max(1, min(max_threads, math.floor(free + 0.5)))


def others_busy_cores(sample_s: float = 0.15) -> float:
    """How many cores other programs keep busy right now (this process idle while it samples).

    The app that started this worker is left out: it draws the point just measured, a burst that
    is over before the next point is timed, and must not talk the point out of its threads.
    """
    parent = _parent_cpu_s()
    start = observe_start()
    time.sleep(sample_s)
    load = observe_end(start)
    if load.wall_s <= 0:
        return 0.0
    parent_after = _parent_cpu_s()
    parent_used = parent_after - parent if parent is not None and parent_after is not None else 0.0
    return max(0.0, load.others_cpu_s - max(0.0, parent_used)) / load.wall_s


def _parent_cpu_s() -> float | None:
    import psutil

    try:
        times = psutil.Process(os.getppid()).cpu_times()
        return float(times.user + times.system)
    except (psutil.Error, OSError):
        return None


# --- reading the machine ---------------------------------------------------------------------


def _thread_waits() -> dict[int, float] | None:
    """Run-queue delay of each thread of this process, seconds; None where /proc does not say."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return None
    out: dict[int, float] = {}
    for entry in tasks.iterdir():
        try:
            fields = (entry / "schedstat").read_text().split()
            out[int(entry.name)] = int(fields[1]) / 1e9
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
    return out or None


def observe_start() -> MachineSnapshot:
    import psutil

    waits = _thread_waits()
    cpu = psutil.cpu_times()
    return MachineSnapshot(
        wall_s=time.perf_counter(),
        own_cpu_s=time.process_time(),
        busy_s=_busy(cpu),
        steal_s=getattr(cpu, "steal", None),
        waiting_s=sum(waits.values()) if waits is not None else None,
        waiting_by_thread=waits,
    )


def observe_end(start: MachineSnapshot) -> Load:
    """The load between ``start`` and now; threads that started in between count from zero."""
    import psutil

    wall = time.perf_counter()
    own = time.process_time()
    cpu = psutil.cpu_times()
    waits = _thread_waits()
    waiting: float | None = None
    if waits is not None and start.waiting_by_thread is not None:
        before = start.waiting_by_thread
        waiting = sum(max(0.0, w - before.get(tid, 0.0)) for tid, w in waits.items())
    steal = getattr(cpu, "steal", None)
    own_cpu = own - start.own_cpu_s
    return Load(
        wall_s=wall - start.wall_s,
        own_cpu_s=own_cpu,
        others_cpu_s=max(0.0, _busy(cpu) - start.busy_s - own_cpu),
        cpus=_cpu_count(),
        steal_s=(steal - start.steal_s) if steal is not None and start.steal_s is not None else None,
        waiting_s=waiting,
    )


def _busy(cpu: Any) -> float:  # psutil's scputimes (no type hints; its fields differ by OS)
    """Busy time of all cores: everything but idle, iowait and steal (guest time is inside user)."""
    total = cpu.user + cpu.system
    for name in ("nice", "irq", "softirq"):
        total += getattr(cpu, name, 0.0)
    return total


def _cpu_count() -> int:
    import psutil

    return psutil.cpu_count(logical=True) or 1
