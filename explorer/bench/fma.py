"""The CPU's measured FP32 compute ceiling: an FMA-throughput loop on every core at once.

Why measure it: the theoretical peak is cores x clock x FLOP per cycle, and the FLOP per cycle
come from the ISA flags and an assumed number of FMA pipes. What the flags cannot show can put
it at twice what any code reaches: two vCPUs of a VM that are one core's two hardware threads
(sharing its FMA pipes), a power limit, the lower clock wide vector code runs at. A loop that does
nothing but independent fused multiply-adds shows what the cores really retire.

What runs: one thread per logical CPU, each in a numba function (``nogil``) whose loop body is
``ACCUMULATORS`` independent vector FMAs ``a = a * b + c`` of the widest FP32 vectors the CPU has
(16 lanes with AVX-512, 8 with AVX, 4 otherwise). The vectors are written as LLVM vectors
(``llvm.fmuladd`` on ``<lanes x float>``) through a numba intrinsic, so the compiler neither has
to discover them nor can it fold the chains: each accumulator needs its own previous value (no
algebra shortens ``a * b + c`` repeated, with ``b`` and ``c`` run-time values), and the sum of
them is returned (nothing is dropped). Enough accumulators that an FMA's latency (4-5 cycles)
never stalls two pipes; few enough that all stay in registers (32 vector registers with AVX-512,
16 with AVX).

How it is timed: after a warm-up (wide vector code can change the core's clock, after a few
milliseconds), every thread runs one call at the same moment, ``SAMPLES`` times; each sample is
the wall time from the first thread's start to the last one's end, and the fastest is kept
(other programs can only slow a sample down), as the clock and the bandwidth sweep do.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from explorer.roofs.model import Method

SAMPLE_S = 0.005
SAMPLES = 40
WARMUP_S = 0.1
#: the multiply and addend of every FMA: run-time values that keep each accumulator finite
#: (it tends to c / (1 - b) = 1)
B, C = 0.999999, 1e-6


def vector_lanes(flags: Iterable[str]) -> int:
    """FP32 lanes of the widest vector unit the ISA ``flags`` promise: 16 (AVX-512), 8 (AVX), 4
    (SSE, NEON, or nothing known: every 64-bit x86 and Arm core has 128-bit vectors)."""
    have = {f.lower() for f in flags}
    if "avx512f" in have:
        return 16
    if "avx" in have:
        return 8
    return 4


def accumulators_for(lanes: int) -> int:
    """Independent accumulators per thread: 16 where 32 vector registers hold them (AVX-512),
    else 12 (16 registers: 12 accumulators, the multiplier and the addend)."""
    return 16 if lanes >= 16 else 12


@lru_cache(maxsize=4)
def fma_kernel(accumulators: int, lanes: int) -> Callable[[int, float, float], float]:
    """The compiled loop: ``kernel(n, b, c)`` runs ``n`` iterations of ``accumulators`` vector
    FMAs of ``lanes`` FP32 lanes (``2 x accumulators x lanes x n`` FLOP) and returns the sum of
    every lane of every accumulator. Compiled on first use (and once per shape)."""
    from llvmlite import ir
    from numba import njit, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def fma_loop(typingctx: Any, n: Any, b: Any, c: Any) -> Any:  # pragma: no cover - numba
        sig = types.float32(types.int64, types.float32, types.float32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            count, mul, add = args
            vector = ir.VectorType(ir.FloatType(), lanes)
            i32 = ir.IntType(32)

            def splat(x: Any) -> Any:
                v = ir.Constant(vector, ir.Undefined)
                for lane in range(lanes):
                    v = builder.insert_element(v, x, ir.Constant(i32, lane))
                return v

            bv, cv = splat(mul), splat(add)
            # fmuladd: one fused instruction where the core has FMA, a multiply and an add where
            # it has not (never a slow library call); 2 FLOP per lane either way
            fmuladd = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(vector, [vector, vector, vector]), f"llvm.fmuladd.v{lanes}f32"
            )
            slots = []
            for k in range(accumulators):
                slot = cgutils.alloca_once(builder, vector)
                start = [
                    ir.Constant(ir.FloatType(), (k * lanes + i) / (accumulators * lanes))
                    for i in range(lanes)
                ]
                builder.store(ir.Constant(vector, start), slot)
                slots.append(slot)
            with cgutils.for_range(builder, count):
                for slot in slots:
                    builder.store(builder.call(fmuladd, [builder.load(slot), bv, cv]), slot)
            total = builder.load(slots[0])
            for slot in slots[1:]:
                total = builder.fadd(total, builder.load(slot))
            result = builder.extract_element(total, ir.Constant(i32, 0))
            for lane in range(1, lanes):
                result = builder.fadd(result, builder.extract_element(total, ir.Constant(i32, lane)))
            return result

        return sig, codegen

    @njit(nogil=True, cache=False)
    def kernel(n: int, b: float, c: float) -> float:  # pragma: no cover - compiled by numba
        return fma_loop(n, b, c)  # type: ignore[call-arg]  # numba passes the typing context

    import numpy as np

    kernel(np.int64(2), np.float32(B), np.float32(C))  # compile now, before anything is timed
    return kernel


def fma_reference(n: int, accumulators: int, lanes: int, b: float = B, c: float = C) -> float:
    """What ``fma_kernel(accumulators, lanes)(n, b, c)`` returns, in numpy: each step fused (the
    float32 product is exact in float64, then rounded once to float32, as an FMA does), the
    accumulators summed in the kernel's order in float32 (where the core has no FMA, the kernel's
    separate multiply and add differ from this by a few float32 ulps)."""
    import numpy as np

    a = (np.arange(accumulators * lanes, dtype=np.float64) / (accumulators * lanes)).astype(np.float32)
    bb, cc = np.float64(np.float32(b)), np.float64(np.float32(c))
    for _ in range(n):
        a = (a.astype(np.float64) * bb + cc).astype(np.float32)
    vectors = a.reshape(accumulators, lanes)
    total = vectors[0].copy()
    for k in range(1, accumulators):
        total = (total + vectors[k]).astype(np.float32)
    result = np.float32(total[0])
    for lane in range(1, lanes):
        result = np.float32(result + total[lane])
    return float(result)


@dataclass(frozen=True)
class FmaMeasurement:
    """The FP32 ceiling of every core at once: the fastest sample's GFLOP/s, and how it was had."""

    gflops: float
    threads: int
    lanes: int
    accumulators: int
    samples: int
    sample_s: float
    seconds: float  # the whole measurement, compile and warm-up included
    #: each thread's own GFLOP/s in the fastest sample
    per_thread_gflops: tuple[float, ...] = ()

    @property
    def basis(self) -> str:
        return (
            f"FMA-throughput loop: {self.accumulators} independent {self.lanes}-lane FP32 accumulators "
            f"per thread on {self.threads} threads at once (numba, llvm.fmuladd), the fastest of "
            f"{self.samples} samples of {self.sample_s * 1e3:g} ms"
        )

    @property
    def method(self) -> Method:
        return Method(
            kernel=f"FMA: {self.accumulators} accumulators x {self.lanes} FP32 lanes (numba)",
            threads=self.threads,
            repeats=self.samples,
            best_of=f"fastest of {self.samples} samples, all threads at once",
        )


def _iterations_for(seconds: float, kernel: Callable[[int, float, float], float]) -> int:
    """Loop length that runs about ``seconds`` on one core (doubling from a short trial)."""
    import numpy as np

    n = 1000
    while True:
        t0 = time.perf_counter()
        kernel(np.int64(n), np.float32(B), np.float32(C))
        dt = time.perf_counter() - t0
        if dt >= seconds / 4 or n > 1 << 34:
            return max(1, int(n * seconds / max(dt, 1e-9)))
        n *= 2


def measure_fma(
    flags: Iterable[str],
    threads: int | None = None,
    *,
    samples: int = SAMPLES,
    sample_s: float = SAMPLE_S,
    warmup_s: float = WARMUP_S,
) -> FmaMeasurement:
    """The FP32 FMA ceiling on ``threads`` threads at once (default: every logical CPU), with the
    vectors ``flags`` (the CPU's ISA flags) promise. Raises ``RuntimeError`` when a thread's loop
    returned a wrong sum."""
    import numpy as np

    started = time.perf_counter()
    lanes = vector_lanes(flags)
    acc = accumulators_for(lanes)
    kernel = fma_kernel(acc, lanes)
    n_threads = threads or os.cpu_count() or 1
    iterations = _iterations_for(sample_s, kernel)
    expected = float(kernel(np.int64(iterations), np.float32(B), np.float32(C)))
    times = [[(0.0, 0.0)] * n_threads for _ in range(samples)]
    results = [0.0] * n_threads
    errors: list[BaseException] = []
    barrier = threading.Barrier(n_threads)
    n, b, c = np.int64(iterations), np.float32(B), np.float32(C)

    def run(index: int) -> None:
        try:
            barrier.wait()
            end = time.perf_counter() + warmup_s
            while time.perf_counter() < end:
                kernel(n, b, c)
            for s in range(samples):
                barrier.wait()  # every thread starts each sample together
                t0 = time.perf_counter()
                results[index] = kernel(n, b, c)
                times[s][index] = (t0, time.perf_counter())
        except BaseException as exc:  # said by the caller, never lost in a thread
            errors.append(exc)
            barrier.abort()

    workers = [
        threading.Thread(target=run, args=(i,), daemon=True, name=f"fma-{i}") for i in range(n_threads)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if errors:
        raise RuntimeError(f"the FMA loop failed: {errors[0]}")
    if any(r != expected for r in results):
        raise RuntimeError("the FMA loop computed a different sum on one thread: its timing is not used")
    flop = 2.0 * acc * lanes * iterations
    best_s, best = float("inf"), times[0]
    for sample in times:
        starts, ends = zip(*sample, strict=True)
        wall = max(ends) - min(starts)
        if 0 < wall < best_s:
            best_s, best = wall, sample
    per_thread = tuple(flop / (t1 - t0) / 1e9 if t1 > t0 else 0.0 for t0, t1 in best)
    return FmaMeasurement(
        gflops=n_threads * flop / best_s / 1e9,
        threads=n_threads,
        lanes=lanes,
        accumulators=acc,
        samples=samples,
        sample_s=sample_s,
        seconds=time.perf_counter() - started,
        per_thread_gflops=per_thread,
    )
