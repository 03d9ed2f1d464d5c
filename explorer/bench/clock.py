"""The CPU's clock as it really runs, measured: cycles per second of a dependent instruction chain.

Why measure: the OS reports a base or an advertised clock (or nothing, in a VM), while a busy
core runs at its turbo clock; a peak worked out from the reported clock is beaten by real
matmuls. What is measured: a chain of 64-bit integer additions and exclusive-ors in which every
operation needs the result of the one before. Integer add and xor have a latency of one cycle on
every x86 core since the Pentium Pro and every 64-bit Arm core, so the chain retires one
operation per cycle whatever the core's width, and operations per second is cycles per second.

Why the compiler cannot shorten it: the operands are run-time values (never constants, so no
add can be merged into the next or done by the renamer as some cores do for small immediates),
add and xor alternate (no algebra folds ``((x + a) ^ b) + a``), and each step needs the previous
result (nothing to vectorise). A test checks that the time grows with the chain's length and
that the result equals a plain Python evaluation of the same chain.

All cores at once: the clock a multi-threaded matmul sees is the all-core turbo, lower than the
one-core turbo, so one chain runs on every logical CPU at the same moment (the chain is bound by
latency, so two hardware threads of a core do not slow each other). Each thread takes many short
samples and keeps its fastest: other programs can only make a sample slower, never faster.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: operations in one pass of the chain's loop body (alternate add and xor, 16 in all)
CHAIN_OPS = 16
SAMPLE_S = 0.002  # short samples: one fits between the time slices another program gets
SAMPLES = 60
WARMUP_S = 0.05  # long enough for the core to leave its idle clock


@lru_cache(maxsize=1)
def chain_kernel() -> Callable[[int, int, int], int]:
    """The compiled chain: ``chain(iterations, a, b)`` runs ``CHAIN_OPS * iterations`` dependent
    one-cycle operations and returns the result (so none can be dropped). Compiled on first use."""
    from explorer.jitcache import configure

    configure()  # before numba decorates: it reads its cache folder then
    from numba import njit

    @njit(nogil=True, cache=True)
    def chain(n: int, a: int, b: int) -> int:  # pragma: no cover - compiled by numba
        x = a
        for _ in range(n):
            x = (x + a) ^ b
            x = (x + b) ^ a
            x = (x + a) ^ b
            x = (x + b) ^ a
            x = (x + a) ^ b
            x = (x + b) ^ a
            x = (x + a) ^ b
            x = (x + b) ^ a
        return x

    return chain


def chain_reference(n: int, a: int, b: int) -> int:
    """The same chain in plain Python with 64-bit wrap-around, for the test that nothing was folded."""
    mask = (1 << 64) - 1

    def signed(v: int) -> int:
        v &= mask
        return v - (1 << 64) if v >> 63 else v

    x = a
    for _ in range(n):
        for p, q in ((a, b), (b, a), (a, b), (b, a), (a, b), (b, a), (a, b), (b, a)):
            x = signed(signed(x + p) ^ q)
    return x


@dataclass(frozen=True)
class ClockMeasurement:
    """The all-core clock: the median over threads of each thread's fastest sample."""

    ghz: float
    threads: int
    per_thread_ghz: tuple[float, ...]
    samples_per_thread: int
    seconds: float  # how long the measurement took, warm-up included

    @property
    def method(self) -> str:
        return (
            f"dependent add/xor chain (1 cycle per operation) on {self.threads} threads at once, "
            f"fastest of {self.samples_per_thread} samples of {SAMPLE_S * 1e3:g} ms per thread"
        )


def _iterations_for(seconds: float, chain: Callable[[int, int, int], int], a: int, b: int) -> int:
    """Chain length that runs about ``seconds`` on this core (doubling from a short trial)."""
    n = 1000
    while True:
        t0 = time.perf_counter()
        chain(n, a, b)
        dt = time.perf_counter() - t0
        if dt >= seconds / 4 or n > 1 << 34:
            return max(1, int(n * seconds / max(dt, 1e-9)))
        n *= 2


def measure_clock(
    threads: int | None = None, *, samples: int = SAMPLES, sample_s: float = SAMPLE_S
) -> ClockMeasurement:
    """Measure the clock with ``threads`` chains at once (default: every logical CPU)."""
    import os

    chain = chain_kernel()
    n_threads = threads or os.cpu_count() or 1
    a, b = 0x5DEECE66D + int(time.time()) % 7, 0x2545F4914F6CDD1D & 0x7FFFFFFFFFFF  # run-time values
    chain(10, a, b)  # compile before any thread starts timing
    iterations = _iterations_for(sample_s, chain, a, b)
    best = [0.0] * n_threads
    barrier = threading.Barrier(n_threads)
    sink: list[Any] = [0] * n_threads

    def run(index: int) -> None:
        barrier.wait()
        end = time.perf_counter() + WARMUP_S
        while time.perf_counter() < end:
            sink[index] = chain(iterations, a, b)
        for _ in range(samples):
            t0 = time.perf_counter()
            sink[index] = chain(iterations, a, b)
            dt = time.perf_counter() - t0
            if dt > 0:
                best[index] = max(best[index], CHAIN_OPS * iterations / dt / 1e9)

    started = time.perf_counter()
    workers = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n_threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return ClockMeasurement(
        ghz=statistics.median(best),
        threads=n_threads,
        per_thread_ghz=tuple(best),
        samples_per_thread=samples,
        seconds=time.perf_counter() - started,
    )
