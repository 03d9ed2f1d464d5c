"""The kernels of ``explorer.launch_runs.measured``: numba CUDA, imported only in the child that runs them.

* ``spin_blocks``: thread 0 of each block reads the SM it runs on (``%smid``) and the GPU's
  nanosecond clock (``%globaltimer``), spins until ``spin_ns`` have passed, waits for the rest of
  its block and reads the clock again: one (SM, start, end) record per block;
* ``stream_read``: every thread sums a float32 array with a grid-stride loop, one coalesced
  128-byte load per warp per step and only one in flight (each address waits for the previous
  value), and thread 0 of each block records its SM;
* ``chase``: one thread follows a chain (``explorer.launch_runs.chase``), each load's address the
  previous load's value: the latency of one load, as a pointer chase measures it, in SM cycles
  (``%clock64``, the SM's own counter) and nanoseconds (``%globaltimer``) per step; the app's
  one pointer-chase kernel, used by the Latency page and by the latency ladder;
* ``chase_shared``: the same chase through shared memory.

numba has no function for ``%smid``, ``%clock64`` or ``%globaltimer``; on a GPU they are read with
one line of inline PTX each (the way numba itself reads ``%lanemask_lt``), so no CUDA C compiler is
needed. Under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, where this module is tested)
there is no SM and no GPU clock: every block reports SM 0, and both clocks are the host's
``perf_counter_ns``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import float32, int32

from explorer.devices.gpu_clock import ClockWatch
from explorer.launch_runs.chase import LINE_STRIDE, chain, slots_for, walk
from explorer.numbacuda import cuda

SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"

if SIMULATOR:

    @cuda.jit(device=True)
    def smid() -> int:
        """The simulator runs one block at a time on no SM: call it SM 0."""
        return 0

    @cuda.jit(device=True)
    def globaltimer() -> int:
        """The host's nanosecond clock (the simulator has no GPU clock)."""
        return time.perf_counter_ns()

    @cuda.jit(device=True)
    def clock64() -> int:
        """The host's nanosecond clock standing in for the SM's cycle counter."""
        return time.perf_counter_ns()

else:  # pragma: no cover - needs a GPU
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    def _read_register(name: str, bits: int, constraint: str) -> Any:  # an intrinsic: smid() in a kernel
        @intrinsic
        def read(typingctx: Any) -> tuple[Any, Callable[..., Any]]:  # numba's typing context, signature
            sig = (types.uint32 if bits == 32 else types.uint64)()

            def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> ir.Instruction:
                asm = ir.InlineAsm(
                    ir.FunctionType(ir.IntType(bits), []),
                    f"mov.u{bits} $0, %{name};",
                    constraint,
                    side_effect=True,
                )
                return builder.call(asm, [])

            return sig, codegen

        return read

    smid = _read_register("smid", 32, "=r")
    globaltimer = _read_register("globaltimer", 64, "=l")
    clock64 = _read_register("clock64", 64, "=l")

#: int32 slots of the shared-memory chase (4 KiB: well inside any SM's shared memory)
SHARED_SLOTS = 1024


@cuda.jit
def spin_blocks(
    spin_ns: int, sm_out: np.ndarray, start_out: np.ndarray, end_out: np.ndarray
) -> None:  # pragma: no cover - runs on the device
    b = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
    leader = cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0
    if leader:
        t0 = globaltimer()
        start_out[b] = t0
        sm_out[b] = smid()
        t = t0
        while t - t0 < spin_ns:
            t = globaltimer()
    cuda.syncthreads()  # the block ends when its last warp does
    if leader:
        end_out[b] = globaltimer()


@cuda.jit
def stream_read(
    a: np.ndarray, out: np.ndarray, sm_out: np.ndarray
) -> None:  # pragma: no cover - runs on the device
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = float32(0.0)
    k = i
    n = a.shape[0]
    while k < n:
        v = a[k]
        acc += v
        # the next address waits for this load's value (v * 0 is not folded: v might be NaN), so a
        # warp has exactly one load in flight, as Little's law in ``measured`` counts it; without
        # this the compiler unrolls the loop and keeps four in flight
        k += stride + int32(v * float32(0.0))
    out[i] = acc
    if cuda.threadIdx.x == 0:
        sm_out[cuda.blockIdx.x] = smid()


@cuda.jit
def chase(nxt: np.ndarray, warm: int, steps: int, out: np.ndarray) -> None:
    """Follow ``nxt`` from element 0: ``warm`` untimed steps (the chain into the caches and TLB),
    then ``steps`` timed ones; ``out``: SM cycles, nanoseconds, where it stopped."""
    j = 0
    for _ in range(warm):
        j = nxt[j]
    t0 = globaltimer()
    c0 = clock64()
    for _ in range(steps):
        j = nxt[j]
    c1 = clock64()
    t1 = globaltimer()
    out[0] = c1 - c0
    out[1] = t1 - t0
    out[2] = j


@cuda.jit
def chase_shared(nxt: np.ndarray, steps: int, out: np.ndarray) -> None:
    """Copy ``nxt`` (at most ``SHARED_SLOTS`` elements) into shared memory, then ``chase`` it there
    from element 0: one warm lap untimed, ``steps`` timed; ``out`` as ``chase``'s."""
    s = cuda.shared.array(SHARED_SLOTS, int32)
    n = nxt.shape[0]
    for i in range(n):
        s[i] = nxt[i]
    j = 0
    for _ in range(n):
        j = s[j]
    t0 = globaltimer()
    c0 = clock64()
    for _ in range(steps):
        j = s[j]
    c1 = clock64()
    t1 = globaltimer()
    out[0] = c1 - c0
    out[1] = t1 - t0
    out[2] = j


def record_blocks(
    grid: Sequence[int], block: Sequence[int], smem_bytes: int, spin_ns: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Launch ``spin_blocks`` once (after a warm-up launch) and return (sm, start, end, regs)."""
    blocks = grid[0] * grid[1] * grid[2]
    sm_d = cuda.device_array(blocks, dtype=np.int32)
    start_d = cuda.device_array(blocks, dtype=np.uint64)
    end_d = cuda.device_array(blocks, dtype=np.uint64)
    spin = np.uint64(spin_ns)
    spin_blocks[grid, block, 0, smem_bytes](spin, sm_d, start_d, end_d)  # compile and warm up
    cuda.synchronize()
    spin_blocks[grid, block, 0, smem_bytes](spin, sm_d, start_d, end_d)
    cuda.synchronize()
    return sm_d.copy_to_host(), start_d.copy_to_host(), end_d.copy_to_host(), kernel_registers(spin_blocks)


def kernel_registers(kernel: Any) -> int:  # a numba CUDA dispatcher
    """Registers per thread of the kernel's one compiled version (0 under the simulator)."""
    if SIMULATOR:
        return 0
    regs = kernel.get_regs_per_thread()  # pragma: no cover - needs a GPU
    return int(next(iter(regs.values())) if isinstance(regs, dict) else regs)  # pragma: no cover


def time_stream(
    elements: int, blocks: int, threads: int, repeats: int, watch: ClockWatch | None = None
) -> tuple[list[float], np.ndarray]:
    """Median and spread of ``repeats`` timed ``stream_read`` launches, seconds; and the SM of each block.

    The array holds ones, so every thread's sum is exact in float32 and the total is checked. With
    a ``watch`` (a GPU's SM clock) the clock is held steady before its first timed launch and read
    after each (``explorer.devices.gpu_clock``)."""
    a = cuda.to_device(np.ones(elements, dtype=np.float32))
    out = cuda.device_array(blocks * threads, dtype=np.float32)
    sm_d = cuda.device_array(blocks, dtype=np.int32)
    stream_read[blocks, threads](a, out, sm_d)  # compile and warm up
    cuda.synchronize()
    if watch is not None and not watch.holds:  # an idle GPU's clock is low: hold it once, first
        watch.hold(lambda: stream_read[blocks, threads](a, out, sm_d), cuda.synchronize)
    times: list[float] = []
    for _ in range(repeats):
        if watch is not None and times:
            watch.sample()  # the previous launch's clock, read outside its events
        if SIMULATOR:  # its events record no time: the host's clock, labelled as the simulator's
            w0 = time.perf_counter()
            stream_read[blocks, threads](a, out, sm_d)
            times.append(time.perf_counter() - w0)
            continue
        t0, t1 = cuda.event(), cuda.event()  # pragma: no cover - needs a GPU
        t0.record()
        stream_read[blocks, threads](a, out, sm_d)
        t1.record()
        t1.synchronize()
        times.append(t0.elapsed_time(t1) / 1e3)
    if watch is not None:
        watch.sample()
    total = float(out.copy_to_host().astype(np.float64).sum())
    if total != float(elements):
        raise RuntimeError(f"stream_read summed {total} instead of {elements}: the kernel is wrong")
    return times, sm_d.copy_to_host()


def run_chase(
    nxt: np.ndarray, slots: int, steps: int, warm: int, shared: bool = False
) -> tuple[int, int, int]:
    """(SM cycles, ns, where it stopped) of ``steps`` timed steps after ``warm`` untimed ones over a
    chain of ``slots`` slots (a shared chase warms one lap itself), the kernel compiled by a short
    launch first; RuntimeError when the chase did not end where the
    host's walk (``explorer.launch_runs.chase.walk``) does."""
    d_nxt = cuda.to_device(nxt)
    out = cuda.device_array(3, dtype=np.int64)
    if shared:
        if len(nxt) > SHARED_SLOTS:
            raise ValueError(f"the shared chain has {len(nxt)} elements; shared memory holds {SHARED_SLOTS}")
        chase_shared[1, 1](d_nxt, 2, out)  # compile
        cuda.synchronize()
        chase_shared[1, 1](d_nxt, steps, out)
        warm = len(nxt)
    else:
        chase[1, 1](d_nxt, 0, 2, out)  # compile
        cuda.synchronize()
        chase[1, 1](d_nxt, warm, steps, out)
    cuda.synchronize()
    cycles, ns, end = (int(x) for x in out.copy_to_host())
    expected = walk(nxt, (warm + steps) % slots)  # one lap comes back to the start
    if end != expected:
        raise RuntimeError(f"the pointer chase ended at {end}, not {expected}: the kernel is wrong")
    return cycles, ns, end


def time_chase(buffer_bytes: int, steps: int) -> tuple[float, int]:
    """Nanoseconds per dependent load over a ``buffer_bytes`` chain of 128-byte lines, one lap
    at most (and at least 2 lines); checks where it ended."""
    lines = max(2, slots_for(buffer_bytes))
    nxt = chain(lines, stride=LINE_STRIDE)
    steps = min(steps, lines)
    _cycles, ns, _end = run_chase(nxt, lines, steps, warm=0)
    return ns / steps, steps
