"""The CPU's bandwidth at every memory level, measured by sweeping the working set.

What is measured: three kernels, compiled once with numba, on every logical CPU at once (one
thread each, each on its own part of the working set, which it allocated and touched first):

* ``read``: ``s += x[i]`` (8 bytes per element read);
* ``copy``: ``y[i] = x[i]`` (16 bytes: one read, one write);
* ``triad``: ``a[i] = b[i] + s * c[i]`` (24 bytes: two reads, one write), STREAM's kernel.

Bytes are counted as STREAM counts them: what the kernel asks for. A cache that allocates a line
before writing it (write-allocate, every x86 and Arm core) also *reads* each written line first;
that extra read is not counted, so copy and triad show a little less than the memory really
moves, and ``read`` (no writes) sets most levels' roof. The workloads count their bytes the same
way, so a point and its roof are in the same currency.

The working set (all threads' bytes together) grows by ``GROWTH`` per step from ``FIRST_BYTES``
to eight times the last-level cache (well past it: DRAM). Each size repeats its kernel inside
one call until about ``SAMPLE_BYTES`` have moved (a few milliseconds, far more than starting the
threads costs), and keeps the fastest of ``SAMPLES`` calls, one per pass over all sizes: other
programs can only slow a sample down, and a burst of their work spoils one pass, not all. The plateaus of the three curves are then found and named by the cache sizes
(``explorer.roofs.plateaus``); each level's roof is its fastest kernel's plateau. DRAM's counts
only the sizes of at least four times the last-level cache, flat over several.

``streams``: the same read-only and triad kernels run long (each timed call moves at least
``STREAM_BYTES``) over one working set well past the last-level cache, the fastest of
``STREAM_SAMPLES`` calls: the app's own STREAM-style figures, which no DRAM roof may exceed.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

KERNELS: tuple[str, ...] = ("read", "copy", "triad")
#: bytes each kernel asks for per element, and how many arrays it uses
BYTES_PER_ELEMENT = {"read": 8, "copy": 16, "triad": 24}
ARRAYS = {"read": 1, "copy": 2, "triad": 3}
FIRST_BYTES = 4 * 1024
GROWTH = 1.2
#: bytes one timed call moves (all threads), at least: about 1 ms at L1 speed, 5 ms from DRAM
SAMPLE_BYTES = 256 * 2**20
SAMPLES = 5
#: the sweep goes to this many times the last-level cache (STREAM's rule), at least to MIN_LAST_BYTES
LLC_FACTOR = 8
MIN_LAST_BYTES = 64 * 2**20
#: the largest working set is kept under this share of the free memory
MEMORY_SHARE = 0.25
#: the streams: each timed call moves at least this much (tens of milliseconds from DRAM)
STREAM_BYTES = 1 << 30
STREAM_SAMPLES = 5
STREAM_KERNELS: tuple[str, ...] = ("read", "triad")

Progress = Callable[[float, str], None]


@lru_cache(maxsize=1)
def kernels() -> dict[str, Callable[..., float]]:
    """The three kernels, compiled on first use: ``kernel(buffer, elements, reps, s, step)`` runs the
    kernel ``reps`` times over ``elements`` float64 of each of its arrays, cut from ``buffer``
    ``step`` elements apart (``array_step``), and returns a value that depends on what it read (so nothing is dropped). The
    triad's scalar ``s`` is 0 at run time, so a buffer of ones stays ones whatever ran before (the
    compiler cannot know it and drop the multiply). Plain (not parallel) functions that release
    the GIL: each sweep thread calls its own."""
    from numba import njit

    @njit(nogil=True, fastmath=True, cache=False)
    def read(buf: Any, n: int, reps: int, _s: float, _step: int) -> float:  # pragma: no cover - numba
        x = buf[:n]
        total = 0.0
        for r in range(reps):
            s = 0.0
            for i in range(x.shape[0]):
                s += x[i]
            total += s * (r + 1)
        return total

    @njit(nogil=True, fastmath=True, cache=False)
    def copy(buf: Any, n: int, reps: int, _s: float, step: int) -> float:  # pragma: no cover - numba
        x = buf[:n]
        y = buf[step : step + n]
        for _ in range(reps):
            for i in range(y.shape[0]):
                y[i] = x[i]
        return y[0] + y[n - 1]

    @njit(nogil=True, fastmath=True, cache=False)
    def triad(buf: Any, n: int, reps: int, s: float, step: int) -> float:  # pragma: no cover - numba
        a = buf[:n]
        b = buf[step : step + n]
        c = buf[2 * step : 2 * step + n]
        for _ in range(reps):
            for i in range(a.shape[0]):
                a[i] = b[i] + s * c[i]
        return a[0] + a[n - 1]

    import numpy as np

    probe = np.ones(12)
    for f in (read, copy, triad):
        f(probe, 4, 1, 0.0, 4)  # compile now, before any sample is timed
    return {"read": read, "copy": copy, "triad": triad}


#: float64 elements in a 4 KiB page
PAGE_ELEMENTS = 512


def array_step(n: int, arrays: int) -> int:
    """How far apart (elements) a kernel's arrays of ``n`` elements start: at least ``n``, and a
    fraction ``1 / arrays`` of a page off a page boundary, so no two arrays' elements share their
    address within a page. Arrays a whole number of pages apart make a core wait at each load for
    a store it wrongly thinks it depends on (4K aliasing): the copy's L1 figure dipped from 430
    to 300 GB/s at the sizes where that happened."""
    target = PAGE_ELEMENTS // max(1, arrays)
    return n + (target - n) % PAGE_ELEMENTS


def expected_result(kernel: str, n: int, reps: int) -> float:
    """What a kernel returns over a buffer of ones (the sweep's buffers are all ones, and stay so)."""
    if kernel == "read":
        return float(n) * reps * (reps + 1) / 2
    return 2.0


def sizes(last_bytes: int, first_bytes: int = FIRST_BYTES, growth: float = GROWTH) -> list[int]:
    """The working sets of the sweep: ``first_bytes`` growing by ``growth`` up to ``last_bytes``."""
    out = []
    size = float(first_bytes)
    while size <= last_bytes * 1.0001:
        out.append(int(size) // 64 * 64)  # whole cache lines
        size *= growth
    return sorted(set(out))


def last_size(llc_bytes: int | None, available_bytes: int | None) -> int:
    """The sweep's largest working set: eight times the last-level cache (at least 64 MiB), kept
    within a quarter of the free memory. (STREAM asks each of its three arrays to be four times
    the cache; the DRAM plateau is reached by then.)"""
    last = max(MIN_LAST_BYTES, LLC_FACTOR * llc_bytes) if llc_bytes else 4 * MIN_LAST_BYTES
    if available_bytes:
        last = min(last, int(available_bytes * MEMORY_SHARE))
    return max(last, 4 * FIRST_BYTES)


@dataclass
class SweepResult:
    """The best GB/s of each kernel at each working set, how long it took, on how many threads."""

    threads: int
    ws_bytes: list[int] = field(default_factory=list)
    gbps: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KERNELS})
    seconds: float = 0.0
    samples: int = SAMPLES  # timed calls per size and kernel (one per pass), the fastest kept

    def envelope(self) -> list[float]:
        """The best kernel's GB/s at each working set: the curve no kernel passes."""
        curves = [v for v in self.gbps.values() if len(v) == len(self.ws_bytes)]
        return [max(c[i] for c in curves) for i in range(len(self.ws_bytes))]


class _Crew:
    """One thread per CPU, each with its own buffer (allocated and first touched by itself, so its
    pages sit near its core), running one kernel call together on each ``run``."""

    def __init__(self, threads: int, buffer_bytes: int) -> None:
        import numpy as np

        self.threads = threads
        self._np = np
        self._buffers: list[Any] = [None] * threads
        self._job: tuple[Callable[..., float], int, int, int] | None = None
        self._times: list[tuple[float, float]] = [(0.0, 0.0)] * threads
        self._results: list[float] = [0.0] * threads
        self._start = threading.Barrier(threads + 1)
        self._done = threading.Barrier(threads + 1)
        self._stop = False
        self._errors: list[BaseException] = []
        per_thread = buffer_bytes // threads // 8 + 4 * PAGE_ELEMENTS
        self._workers = [
            threading.Thread(target=self._serve, args=(i, per_thread), daemon=True, name=f"sweep-{i}")
            for i in range(threads)
        ]
        for w in self._workers:
            w.start()
        self._sync()  # every buffer allocated and touched

    def _serve(self, index: int, elements: int) -> None:
        try:
            self._buffers[index] = self._np.ones(elements)
        except BaseException as exc:  # out of memory: said by run(), not lost in a thread
            self._errors.append(exc)
        self._done.wait()
        while True:
            self._start.wait()
            if self._stop:
                return
            job, buf = self._job, self._buffers[index]
            try:
                if job is not None and buf is not None:
                    kernel, n, reps, step = job
                    t0 = time.perf_counter()
                    self._results[index] = kernel(buf, n, reps, 0.0, step)
                    self._times[index] = (t0, time.perf_counter())
            except BaseException as exc:
                self._errors.append(exc)
            self._done.wait()

    def _sync(self) -> None:
        self._done.wait()
        if self._errors:
            error = self._errors[0]
            self.close()
            raise error

    def run(self, kernel: Callable[..., float], n: int, reps: int, step: int) -> tuple[float, list[float]]:
        """Every thread runs ``kernel(its buffer, n, reps, 0, step)`` at once; the wall time from the
        first thread's start to the last one's end, and each thread's result."""
        self._job = (kernel, n, reps, step)
        self._start.wait()
        self._sync()
        starts, ends = zip(*self._times, strict=True)
        return max(ends) - min(starts), list(self._results)

    def close(self) -> None:
        self._stop = True
        try:
            self._start.wait(timeout=5)
        except threading.BrokenBarrierError:
            pass


def sweep(
    ws_bytes: Sequence[int],
    threads: int,
    *,
    samples: int = SAMPLES,
    sample_bytes: int = SAMPLE_BYTES,
    progress: Progress | None = None,
) -> SweepResult:
    """Measure each kernel at each working set on ``threads`` threads (see the module docstring).
    Raises ``RuntimeError`` when a kernel computes a wrong result."""
    compiled = kernels()
    started = time.perf_counter()
    result = SweepResult(threads=threads, ws_bytes=list(ws_bytes), samples=samples)
    best = {name: [math.inf] * len(ws_bytes) for name in KERNELS}
    plan = []
    for size in ws_bytes:
        reps = max(1, math.ceil(sample_bytes / size))
        for name in KERNELS:
            plan.append((size, name, max(1, size // threads // BYTES_PER_ELEMENT[name]), reps))
    total = samples * sum(size * reps for size, _, _, reps in plan)
    done = 0
    crew = _Crew(threads, max(ws_bytes))
    try:
        # pass after pass over every size: a burst of other programs' work spoils one pass's
        # samples at a few sizes, and the other passes' samples there are kept instead
        for sample in range(samples):
            for index, (size, name, n, reps) in enumerate(plan):
                seconds, values = crew.run(compiled[name], n, reps, array_step(n, ARRAYS[name]))
                if any(v != expected_result(name, n, reps) for v in values):
                    raise RuntimeError(f"the {name} kernel computed a wrong result at {size} bytes")
                at = index // len(KERNELS)
                best[name][at] = min(best[name][at], seconds)
                done += size * reps
                if progress is not None and index % len(KERNELS) == len(KERNELS) - 1:
                    progress(done / total, f"pass {sample + 1} of {samples}: {size / 2**10:,.0f} KiB")
    finally:
        crew.close()
    for size, name, n, reps in plan:
        at = ws_bytes.index(size)
        counted = BYTES_PER_ELEMENT[name] * n * reps * threads
        fastest = best[name][at]
        result.gbps[name].append(counted / fastest / 1e9 if 0 < fastest < math.inf else 0.0)
    result.seconds = time.perf_counter() - started
    return result


def streams(
    size_bytes: int,
    threads: int,
    *,
    samples: int | None = None,
    stream_bytes: int | None = None,
    kernels_run: Sequence[str] = STREAM_KERNELS,
) -> dict[str, float]:
    """The read-only and triad streams over one working set of ``size_bytes`` (all threads
    together; well past the last-level cache for a DRAM figure) on ``threads`` threads: each
    kernel's GB/s in its fastest of ``samples`` calls, each call moving at least
    ``stream_bytes`` (``STREAM_SAMPLES`` and ``STREAM_BYTES`` where not given). Raises
    ``RuntimeError`` when a kernel computes a wrong result."""
    samples = STREAM_SAMPLES if samples is None else samples
    stream_bytes = STREAM_BYTES if stream_bytes is None else stream_bytes
    compiled = kernels()
    crew = _Crew(threads, size_bytes)
    out: dict[str, float] = {}
    try:
        for name in kernels_run:
            n = max(1, size_bytes // threads // BYTES_PER_ELEMENT[name])
            reps = max(1, math.ceil(stream_bytes / size_bytes))
            step = array_step(n, ARRAYS[name])
            crew.run(compiled[name], n, 1, step)  # one pass untimed: pages and caches as in the timed ones
            best = math.inf
            for _ in range(samples):
                seconds, values = crew.run(compiled[name], n, reps, step)
                if any(v != expected_result(name, n, reps) for v in values):
                    raise RuntimeError(f"the {name} stream computed a wrong result")
                best = min(best, seconds)
            out[name] = BYTES_PER_ELEMENT[name] * n * reps * threads / best / 1e9 if best > 0 else 0.0
    finally:
        crew.close()
    return out
