"""Run a vector add for real with one launch configuration, and record who wrote each element.

The visualizer *predicts* which block and thread handles element ``i``; this module checks the
prediction against numba's CUDA: a kernel launched with exactly the grid and block the user chose
writes, for each element it touches, the linear block and thread index that touched it, and counts
the writes (so an element written twice, or never, is seen).

On a machine with an NVIDIA GPU the kernel runs on the GPU. Without one it runs under numba's CUDA
simulator, which must be switched on *before* numba is imported; so the work always runs in a
child process (an agent, ``explorer.agent``, asked for ``realrun.run``) with the environment it
needs, and a crash there never takes the window down. The simulator runs every CUDA thread as a
Python thread, so it is slow: sizes it would take too long for are refused up front with one line naming the limit.

Qt-free; numba and numpy are imported only inside the functions that need them.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.devices.gpu_clock import ReadMhz, hold_clock, read_safely, throttle_note
from explorer.errors import UserError
from explorer.launch.config import LaunchConfig
from explorer.launch_runs.thread_index import thread_numbers
from explorer.schema import loads
from explorer.words import count, on_host

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from explorer.agent.child import AgentProcess
    from explorer.remote.target import Remote

# The simulator runs each CUDA thread as a Python thread, one block after another. Measured on the
# project's 2-core build machine (numba 0.68.1): 0.08 to 0.10 ms per launched thread, whatever the
# shape (6 x 1024 threads: 0.57 s; 98 x 1024, the N = 100000 lesson: 9.7 s; 8^3 x 8^3: 20.7 s).
# 131072 threads keep a run under about 15 s; beyond that a class would wait for minutes.
SIMULATOR_MAX_THREADS = 131072
SIMULATOR_MS_PER_THREAD = 0.1
# Without a GPU, a launch bigger than this runs as the compiled CPU emulation instead of the
# simulator (the simulator is kept for small launches: it runs each thread as CUDA would, one by one).
SIMULATOR_PREFERRED_MAX_THREADS = 8192
# The emulation is compiled (about 1 ns per thread): its limits are a few seconds of looping and the
# memory for the per-element records (36 bytes each), which a student laptop must have to spare.
EMULATION_MAX_THREADS = 1 << 31
EMULATION_MAX_ELEMENTS = 1 << 24
# On a GPU the limit is what we can sensibly copy back and draw, not the GPU's speed.
GPU_MAX_ELEMENTS = 1 << 26
GPU_MAX_THREADS = 1 << 31
# On a GPU each block's first thread also writes the SM it ran on (``%smid``), one int32 per
# block: kept for launches of up to this many blocks (16 MiB); a remote run carries fewer back.
SM_MAP_MAX_BLOCKS = 1 << 22
REMOTE_SM_MAP_MAX_BLOCKS = 1 << 18
#: no GPU has this many SMs (the H100 has 132): an SM map beyond it is not one
MAX_SM_NUMBER = 4095
#: the run's description beside its arrays (grid, block, names: a few hundred bytes)
MAX_META_BYTES = 1 << 20
# On a remote machine the three per-element arrays come back inside one JSON line (delta-coded and
# compressed: a correct launch's arrays shrink to almost nothing, a scrambled one's do not), so a
# remote run keeps fewer elements: what crosses a slow link in seconds and fits the protocol's line.
REMOTE_MAX_ELEMENTS = 1 << 22
#: the arrays' share of the answer line, leaving room for the rest of the message
_INLINE_MAX_BYTES = 15 * 1024 * 1024

Dim = tuple[int, int, int]

#: where a real run happens: an NVIDIA GPU; numba's CUDA simulator (each thread a Python thread);
#: or a compiled CPU emulation (numba @njit) that runs the same per-thread index code over the same
#: grid, block by block and thread by thread in CUDA's order, with no GPU and no CUDA at all
BACKENDS = ("gpu", "simulator", "emulation")
BACKEND_WORDS = {
    "gpu": "on the GPU",
    "simulator": "under numba's CUDA simulator (no GPU here)",
    "emulation": "as a compiled CPU emulation of the kernel (numba @njit, no GPU here)",
}


#: how each backend's ``kernel_s`` is measured. Every one runs the kernel once first (a warm-up
#: launch of one thread with the same argument types), so numba's compile is never inside the time:
#: a first call compiles, and on a GPU that costs hundreds of milliseconds a kernel does not.
TIMING_METHODS = {
    "gpu": "CUDA events around one launch, after a warm-up launch compiled the kernel",
    "simulator": "Python wall time of one simulated launch (the simulator's events record no time)",
    "emulation": "wall time of one call of the compiled loop, after a warm-up call compiled it",
}


def kernel_time_words(seconds: float) -> str:
    """A kernel's time at its own scale: µs below a millisecond, ms below a second, else s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def time_launch(
    cuda_api: Any, warm_up: Callable[[], None], launch: Callable[[], None], *, events: bool
) -> float:
    """Seconds one ``launch`` took, after ``warm_up`` (the same kernel with the same argument
    types, which compiles it) ran and finished outside the timing. With ``events`` the time is
    the GPU's own, between two CUDA events recorded around the launch; without, wall time to
    ``synchronize`` (the simulator's events record nothing)."""
    warm_up()
    cuda_api.synchronize()
    if events:
        start, end = cuda_api.event(), cuda_api.event()
        start.record()
        launch()
        end.record()
        end.synchronize()
        return float(cuda_api.event_elapsed_time(start, end)) / 1000.0
    t0 = time.perf_counter()
    launch()
    cuda_api.synchronize()
    return time.perf_counter() - t0


def time_launch_held(
    cuda_api: Any,
    warm_up: Callable[[], None],
    launch: Callable[[], None],
    *,
    events: bool,
    sm_clock: ReadMhz | None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, str]:
    """``time_launch`` on a GPU whose SM clock was held steady first: an idle GPU's clock is low
    and one launch straight after the compile ran at it. The hold runs the warm-up kernel (it
    touches only scratch arrays, so the real ones stay untouched) until NVML's SM clock stays at
    one value (``explorer.devices.gpu_clock``); the clock is read again after the launch. Returns
    the seconds and the words for the method: the hold, and "throttled: ..." when the clock fell
    below 75% of steady."""
    warm_up()  # compiles before the hold times anything
    cuda_api.synchronize()
    hold = hold_clock(warm_up, cuda_api.synchronize, sm_clock, clock=clock)
    seconds = time_launch(cuda_api, warm_up, launch, events=events)
    after = read_safely(sm_clock)
    steady = max((m for m in (hold.steady_mhz, after) if m is not None), default=None)
    words = [hold.words()] + [w for w in (throttle_note(after, steady),) if w]
    return seconds, "; ".join(words)


def cpu_backend(threads: int) -> str:
    """Without a GPU: the simulator for small launches, the compiled emulation for the rest."""
    return "simulator" if threads <= SIMULATOR_PREFERRED_MAX_THREADS else "emulation"


@dataclass
class RealRunResult:
    """What the kernel wrote: per element, the block and thread that wrote it (-1: untouched)."""

    grid: Dim
    block: Dim
    n: int
    backend: str  # one of BACKENDS
    device_name: str
    block_of_element: np.ndarray  # int64, length n; -1 where no thread wrote
    thread_of_element: np.ndarray  # int64, length n; -1 where no thread wrote
    writes_per_element: np.ndarray  # int32, length n; 1 everywhere for a correct launch
    sum_correct: bool  # c == a + b wherever an element was written
    kernel_s: float  # one launch, after a warm-up launch compiled it; how: ``kernel_method``
    total_s: float  # child process wall time, including numba's import and compile
    # a 2D/3D problem: element i is (x, y, z) with i = (z * height + y) * width + x, written by the
    # thread at that position; None for a 1-D n
    extent: Dim | None = None
    #: the remote machine it ran on ("gpu-lab"), "" for this one
    host: str = ""
    #: on a GPU, the SM each block ran on by linear block number, as the hardware's ``%smid``
    #: register says (int32); None where it could not be read, and ``sm_note`` says why
    sm_of_block: np.ndarray | None = None
    sm_note: str = ""
    #: how ``kernel_s`` was measured (``TIMING_METHODS``); "" from an agent older than the field
    kernel_method: str = ""

    def sms_used(self) -> int | None:
        """How many different SMs ran the launch's blocks (``None`` without an SM map)."""
        if self.sm_of_block is None:
            return None
        import numpy as np

        return int(np.unique(self.sm_of_block[self.sm_of_block >= 0]).size)

    def blocks_per_sm(self) -> dict[int, int]:
        """SM number -> how many of the launch's blocks ran on it (empty without an SM map)."""
        if self.sm_of_block is None:
            return {}
        import numpy as np

        sms, counts = np.unique(self.sm_of_block[self.sm_of_block >= 0], return_counts=True)
        return {int(sm): int(count) for sm, count in zip(sms, counts, strict=True)}

    @property
    def untouched(self) -> int:
        return int((self.writes_per_element == 0).sum())

    @property
    def written_twice(self) -> int:
        return int((self.writes_per_element > 1).sum())

    def mismatches(self, threads_per_block: int) -> int:
        """Written elements whose writer differs from the model's (block i // tpb, thread i % tpb).

        The visualizer's inspector claims element i is handled by that block and thread; a real run
        with zero mismatches is the proof a class can see.
        """
        import numpy as np

        i = np.arange(self.n, dtype=np.int64)
        written = self.writes_per_element > 0
        if self.extent is not None:  # the thread at (x, y, z): blockIdx = pos // blockDim, per axis
            w, h, _d = self.extent
            (gx, gy, _gz), (bx, by, bz) = self.grid, self.block
            x, y, z = i % w, (i // w) % h, i // (w * h)
            block = x // bx + gx * (y // by + gy * (z // bz))
            thread = x % bx + bx * (y % by + by * (z % bz))
            wrong = (self.block_of_element != block) | (self.thread_of_element != thread)
            return int((wrong & written).sum())
        wrong = (self.block_of_element != i // threads_per_block) | (
            self.thread_of_element != i % threads_per_block
        )
        return int((wrong & written).sum())

    def summary(self) -> str:
        """One line for the UI's status: where it ran, what it found."""
        where = f"on the GPU ({self.device_name})" if self.backend == "gpu" else BACKEND_WORDS[self.backend]
        where = on_host(where, self.host)
        what = f"{self.n:,} elements"
        if self.extent is not None:
            e = self.extent
            shape = f"{e[0]:,} x {e[1]:,}" + (f" x {e[2]:,}" if e[2] != 1 else "")
            what = f"the {shape} problem ({self.n:,} elements)"
        parts = [f"Ran {what} {where} in {kernel_time_words(self.kernel_s)}"]
        if self.untouched:
            parts.append(f"{self.untouched:,} elements untouched: the grid has too few threads")
        if self.written_twice:
            parts.append(f"{self.written_twice:,} elements written more than once")
        if not self.untouched and not self.written_twice:
            parts.append("every element written exactly once")
        if not self.sum_correct:
            parts.append("c != a + b somewhere")
        used = self.sms_used()
        if used is not None:
            blocks = _count(self.grid)
            parts.append(f"its {count(blocks, 'block')} ran on {used:,} SMs (read from %smid)")
        return "; ".join(parts) + "."


def _dims(value: Sequence[int]) -> Dim:
    """1 to 3 whole numbers (the agent's request holds lists) as a Dim, missing axes 1."""
    seq = [int(v) for v in value]
    while len(seq) < 3:
        seq.append(1)
    return (seq[0], seq[1], seq[2])


def _shape(config: LaunchConfig) -> tuple[Dim, Dim, int | None, Dim | None]:
    """(grid, block, n, extent) of a launch: what the kernel and the agent's request take."""
    extent = config.extent.as_tuple() if config.extent is not None else None
    return config.grid.as_tuple(), config.block.as_tuple(), config.n, extent


def _count(d: Dim) -> int:
    return d[0] * d[1] * d[2]


def check_launch(config: LaunchConfig, backend: str) -> int:
    """Refuse a run of ``config`` that would take minutes or not fit; return its element count."""
    grid, block, n, extent = _shape(config)
    return check_size(grid, block, n, backend=backend, extent=extent)


def check_size(
    grid: Sequence[int],
    block: Sequence[int],
    n: int | None,
    *,
    simulator: bool = False,
    backend: str | None = None,
    extent: Sequence[int] | None = None,
) -> int:
    """Refuse a run that would take minutes or not fit; return the element count n. Takes the
    launch as the agent's request holds it (lists); a window or a command has ``check_launch``.

    Raises UserError with one line naming the limit, the value and the limit's size.
    """
    chosen = _backend(simulator, backend)
    simulator = chosen == "simulator"
    g, b = _dims(grid), _dims(block)
    threads = _count(g) * _count(b)
    if extent is not None:
        n_elements = _count(_dims(extent))
    else:
        n_elements = threads if n is None else int(n)
    if n_elements < 1:
        raise UserError(f"problem size N is {n_elements}; it must be at least 1")
    if simulator:
        if threads > SIMULATOR_MAX_THREADS:
            raise UserError(
                f"the launch has {threads:,} threads; numba's CUDA simulator (no GPU here) runs at most "
                f"{SIMULATOR_MAX_THREADS:,} (at about {SIMULATOR_MS_PER_THREAD} ms per thread this one would take "
                f"{threads * SIMULATOR_MS_PER_THREAD / 1000:,.0f} s)"
            )
        if n_elements > SIMULATOR_MAX_THREADS * 4:
            raise UserError(
                f"N is {n_elements:,}; a simulator run keeps at most {SIMULATOR_MAX_THREADS * 4:,} elements"
            )
    elif chosen == "emulation":
        if threads > EMULATION_MAX_THREADS:
            raise UserError(
                f"the launch has {threads:,} threads; the CPU emulation (no GPU here) runs at most "
                f"{EMULATION_MAX_THREADS:,}"
            )
        if n_elements > EMULATION_MAX_ELEMENTS:
            raise UserError(
                f"N is {n_elements:,}; the CPU emulation keeps at most {EMULATION_MAX_ELEMENTS:,} elements"
            )
    else:
        if threads > GPU_MAX_THREADS:
            raise UserError(
                f"the launch has {threads:,} threads; a real run launches at most {GPU_MAX_THREADS:,}"
            )
        if n_elements > GPU_MAX_ELEMENTS:
            raise UserError(f"N is {n_elements:,}; a real run keeps at most {GPU_MAX_ELEMENTS:,} elements")
    return n_elements


def _backend(simulator: bool, backend: str | None) -> str:
    chosen = backend or ("simulator" if simulator else "gpu")
    if chosen not in BACKENDS:
        raise UserError(f"backend is {chosen!r}; choose one of {', '.join(BACKENDS)}")
    return chosen


_KERNEL = None
# numba.cuda, bound by _kernel(). The kernel must reach it as a module global: the simulator swaps
# the globals a kernel sees for its own fake ``cuda`` module, which a closure variable would escape.
cuda: Any = None


_DEVICE_NUMBERS: Any = None  # thread_numbers as a CUDA device function, bound by _kernel()


def _record_vector_add(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    block_of: np.ndarray,
    thread_of: np.ndarray,
    writes: np.ndarray,
    n: int,
    ex: int,
    ey: int,
    ez: int,
) -> None:
    block_linear, thread_linear, i = _DEVICE_NUMBERS(
        cuda.blockIdx.x,
        cuda.blockIdx.y,
        cuda.blockIdx.z,
        cuda.gridDim.x,
        cuda.gridDim.y,
        cuda.threadIdx.x,
        cuda.threadIdx.y,
        cuda.threadIdx.z,
        cuda.blockDim.x,
        cuda.blockDim.y,
        cuda.blockDim.z,
        ex,
        ey,
        ez,
        n,
    )
    if i >= 0:  # the guard: threads outside the problem do nothing
        c[i] = a[i] + b[i]
        block_of[i] = block_linear
        thread_of[i] = thread_linear
        cuda.atomic.add(writes, i, 1)


_DEVICE_RECORD: Any = None  # _record_vector_add as a device function, bound by _kernel_with_sm()
_SMID: Any = None  # the PTX function reading %smid, bound by _kernel_with_sm()
_KERNEL_SM: Any = None

#: The SM a thread runs on: the ``%smid`` register, which numba has no name for, read by a
#: hand-written PTX function linked into the kernel. It follows numba's ABI for
#: ``declare_device("dx_smid", "int32()")``: the first parameter points at the return value, and
#: the function's own result is a status (0). ``%smid`` is the SM's number while the thread runs.
SMID_PTX = """//
// Device Explorer: dx_smid() returns the number of the SM the calling thread runs on.
//
.version 6.5
.target sm_50
.address_size 64

.visible .func  (.param .b32 func_retval0) dx_smid(
	.param .b64 dx_smid_param_0
)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<2>;

	ld.param.u64 	%rd1, [dx_smid_param_0];
	mov.u32 	%r1, %smid;
	st.u32 	[%rd1], %r1;
	mov.u32 	%r2, 0;
	st.param.b32	[func_retval0+0], %r2;
	ret;
}
"""


def _record_vector_add_sm(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    block_of: np.ndarray,
    thread_of: np.ndarray,
    writes: np.ndarray,
    sm_of_block: np.ndarray,
    n: int,
    ex: int,
    ey: int,
    ez: int,
) -> None:
    """The recording kernel, and block by block the SM that ran it (the block's first thread writes it)."""
    _DEVICE_RECORD(a, b, c, block_of, thread_of, writes, n, ex, ey, ez)
    if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0 and cuda.threadIdx.z == 0:
        block_linear = cuda.blockIdx.x + cuda.gridDim.x * (cuda.blockIdx.y + cuda.gridDim.y * cuda.blockIdx.z)
        sm_of_block[block_linear] = _SMID()


def _kernel() -> Any:  # a numba CUDA dispatcher (numba has no type hints)
    """Compile (once) the recording kernel; numba is imported here, never at module import."""
    global _KERNEL, _DEVICE_NUMBERS, cuda
    if _KERNEL is None:
        from explorer.numbacuda import cuda as numba_cuda

        cuda = numba_cuda
        _DEVICE_NUMBERS = numba_cuda.jit(device=True)(thread_numbers)
        _KERNEL = numba_cuda.jit(_record_vector_add)
    return _KERNEL


def _kernel_with_sm() -> Any:  # a numba CUDA dispatcher
    """Compile (once) the recording kernel that also reads ``%smid`` (GPU only: numba's simulator
    links no PTX). Raises whatever numba raises when the PTX cannot be linked."""
    global _KERNEL_SM, _DEVICE_RECORD, _SMID
    if _KERNEL_SM is None:
        _kernel()
        from explorer.numbacuda import cuda as numba_cuda

        folder = tempfile.mkdtemp(prefix="explorer-smid-")
        ptx = os.path.join(folder, "dx_smid.ptx")
        with open(ptx, "w", encoding="ascii") as fh:
            fh.write(SMID_PTX)
        _DEVICE_RECORD = numba_cuda.jit(device=True)(_record_vector_add)
        _SMID = numba_cuda.declare_device("dx_smid", "int32()")
        _KERNEL_SM = numba_cuda.jit(link=[ptx])(_record_vector_add_sm)
    return _KERNEL_SM


def _extent_args(extent: Dim | None) -> tuple[int, int, int]:
    """The kernel's (ex, ey, ez): (0, 0, 0) for a 1-D n."""
    return extent if extent is not None else (0, 0, 0)


def _run_emulated(g: Dim, b: Dim, n_elements: int, extent: Dim | None) -> RealRunResult:
    import numpy as np

    t_total = time.perf_counter()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n_elements).astype(np.float32)
    bb = rng.standard_normal(n_elements).astype(np.float32)
    c = np.zeros(n_elements, np.float32)
    block_of = np.full(n_elements, -1, np.int64)
    thread_of = np.full(n_elements, -1, np.int64)
    writes = np.zeros(n_elements, np.int32)
    from explorer.jitcache import first_compile
    from explorer.launch_runs.realrun_emulation import emulate  # imports numba: only ever in the child

    one, scratch = np.ones(3, np.int64), np.zeros(1, np.int64)
    # compile, or load from numba's cache, before the clock starts (one thread, one element); a
    # first compile is said on stderr (the window's real-run status says numba compiles first)
    with first_compile(emulate, "the real run's CPU emulation", 2.0):
        emulate(
            one,
            one,
            np.zeros(3, np.int64),
            a[:1],
            bb[:1],
            c[:1].copy(),
            scratch,
            scratch.copy(),
            writes[:1].copy(),
            1,
        )
    t0 = time.perf_counter()
    grid_a, block_a, extent_a = (np.array(v, np.int64) for v in (g, b, _extent_args(extent)))
    emulate(grid_a, block_a, extent_a, a, bb, c, block_of, thread_of, writes, n_elements)
    kernel_s = time.perf_counter() - t0
    written = writes > 0
    return RealRunResult(
        grid=g,
        block=b,
        n=n_elements,
        backend="emulation",
        device_name="CPU emulation (numba @njit)",
        block_of_element=block_of,
        thread_of_element=thread_of,
        writes_per_element=writes,
        sum_correct=bool(np.allclose(c[written], (a + bb)[written])),
        kernel_s=kernel_s,
        total_s=time.perf_counter() - t_total,
        extent=extent,
        kernel_method=TIMING_METHODS["emulation"],
    )


def run_here(
    grid: Sequence[int],
    block: Sequence[int],
    n: int | None,
    *,
    emulate: bool = False,
    extent: Sequence[int] | None = None,
) -> RealRunResult:
    """Run the kernel in this process, with numba in whatever mode the environment selected
    (or, with ``emulate``, the compiled CPU emulation, which needs no CUDA at all).

    Use ``run_real`` from a UI or a process that has already imported numba without the simulator.
    """
    g, b = _dims(grid), _dims(block)
    e = _dims(extent) if extent is not None else None
    if emulate:
        return _run_emulated(g, b, check_size(g, b, n, backend="emulation", extent=e), e)
    import numpy as np

    from explorer.numbacuda import cuda

    simulator = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    n_elements = check_size(g, b, n, simulator=simulator, extent=e)
    t_total = time.perf_counter()
    if not simulator and not cuda.is_available():
        raise UserError("no usable CUDA GPU was found by numba; run with the simulator instead")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n_elements).astype(np.float32)
    bb = rng.standard_normal(n_elements).astype(np.float32)
    kernel = _kernel()
    d_a, d_b = cuda.to_device(a), cuda.to_device(bb)
    d_c = cuda.to_device(np.zeros(n_elements, np.float32))
    d_block = cuda.to_device(np.full(n_elements, -1, np.int64))
    d_thread = cuda.to_device(np.full(n_elements, -1, np.int64))
    d_writes = cuda.to_device(np.zeros(n_elements, np.int32))
    blocks = _count(g)
    sm_note = ""
    d_sm = None
    if simulator:
        sm_note = "the simulator has no SMs"
    elif blocks > SM_MAP_MAX_BLOCKS:
        sm_note = f"the SM map is kept for launches of at most {SM_MAP_MAX_BLOCKS:,} blocks"
    else:
        try:
            kernel_sm = _kernel_with_sm()
            d_sm = cuda.to_device(np.full(blocks, -1, np.int32))
        except Exception as exc:  # the run goes on without the SM map, saying why
            sm_note = (
                f"%smid could not be read: {(str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]}"
            )
    # the warm-up: one thread writing one element of scratch arrays of the same types, so the
    # timed launch finds the kernel compiled and the real arrays untouched
    s_a, s_b, s_c = (cuda.to_device(np.zeros(1, np.float32)) for _ in range(3))
    s_block, s_thread = (cuda.to_device(np.full(1, -1, np.int64)) for _ in range(2))
    s_writes = cuda.to_device(np.zeros(1, np.int32))
    one = (1, 1, 1)
    if d_sm is not None:
        s_sm = cuda.to_device(np.full(1, -1, np.int32))

        def warm_up() -> None:
            kernel_sm[one, one](s_a, s_b, s_c, s_block, s_thread, s_writes, s_sm, 1, 0, 0, 0)

        def launch() -> None:
            kernel_sm[g, b](d_a, d_b, d_c, d_block, d_thread, d_writes, d_sm, n_elements, *_extent_args(e))

    else:

        def warm_up() -> None:
            kernel[one, one](s_a, s_b, s_c, s_block, s_thread, s_writes, 1, 0, 0, 0)

        def launch() -> None:
            kernel[g, b](d_a, d_b, d_c, d_block, d_thread, d_writes, n_elements, *_extent_args(e))

    method = TIMING_METHODS["simulator" if simulator else "gpu"]
    if simulator:
        kernel_s = time_launch(cuda, warm_up, launch, events=False)
    else:
        from explorer.devices.gpu_clock import cuda_sm_reader

        reader = cuda_sm_reader(f"cuda:{cuda.get_current_device().id}")
        kernel_s, clock_words = time_launch_held(cuda, warm_up, launch, events=True, sm_clock=reader)
        method = f"{method}; {clock_words}"
    c = d_c.copy_to_host()
    writes = d_writes.copy_to_host()
    written = writes > 0
    sum_correct = bool(np.allclose(c[written], (a + bb)[written]))
    if simulator:
        device_name = "numba CUDA simulator"
    else:
        device_name = cuda.get_current_device().name
        device_name = device_name.decode() if isinstance(device_name, bytes) else str(device_name)
    return RealRunResult(
        grid=g,
        block=b,
        n=n_elements,
        backend="simulator" if simulator else "gpu",
        device_name=device_name,
        block_of_element=d_block.copy_to_host(),
        thread_of_element=d_thread.copy_to_host(),
        writes_per_element=writes,
        sum_correct=sum_correct,
        kernel_s=kernel_s,
        total_s=time.perf_counter() - t_total,
        extent=e,
        sm_of_block=d_sm.copy_to_host() if d_sm is not None else None,
        sm_note=sm_note,
        kernel_method=method,
    )


def _save(result: RealRunResult, path: str) -> None:
    import numpy as np

    meta = {
        "grid": list(result.grid),
        "extent": list(result.extent) if result.extent is not None else None,
        "block": list(result.block),
        "n": result.n,
        "backend": result.backend,
        "device_name": result.device_name,
        "sum_correct": result.sum_correct,
        "kernel_s": result.kernel_s,
        "total_s": result.total_s,
        "sm_note": result.sm_note,
        "kernel_method": result.kernel_method,
    }
    arrays: dict[str, Any] = {
        "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        "block_of_element": result.block_of_element,
        "thread_of_element": result.thread_of_element,
        "writes_per_element": result.writes_per_element,
    }
    if result.sm_of_block is not None:
        arrays["sm_of_block"] = result.sm_of_block
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def _check_shapes(path: str, n_elements: int, blocks: int) -> None:
    """Read no array of the child's result file before its header says it has the launch's shape
    (one per element, the SM map one per block, the description at most MAX_META_BYTES): a
    damaged file costs a header, not its size in memory. UserError (one line) otherwise."""
    import zipfile

    import numpy as np

    expected = {
        "meta": (MAX_META_BYTES, "bytes of description"),
        "block_of_element": (n_elements, "elements"),
        "thread_of_element": (n_elements, "elements"),
        "writes_per_element": (n_elements, "elements"),
        "sm_of_block": (blocks, "blocks"),
    }
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                name = info.filename.removesuffix(".npy")
                if name not in expected:
                    raise UserError(f"the real run's result holds {name!r}, which no run writes")
                with z.open(info) as fh:
                    major, _minor = np.lib.format.read_magic(fh)
                    header = (
                        np.lib.format.read_array_header_1_0
                        if major == 1
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _fortran, _dtype = header(fh)
                most, unit = expected[name]
                exact = name != "meta"
                if len(shape) != 1 or (shape[0] != most if exact else shape[0] > most):
                    raise UserError(
                        f"the real run's {name} has shape {shape}; the launch has {most:,} {unit}"
                        + ("" if exact else " at most")
                    )
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise UserError(f"the real run's result file cannot be read: {exc}") from None


def _load(
    path: str, total_s: float, n_elements: int | None = None, blocks: int | None = None
) -> RealRunResult:
    """The child's result; with the launch's ``n_elements`` and ``blocks`` each array's shape is
    checked from its header before the array is read."""
    import numpy as np

    if n_elements is not None and blocks is not None:
        _check_shapes(path, n_elements, blocks)
    with np.load(path) as data:
        meta = loads(bytes(data["meta"]), max_bytes=MAX_META_BYTES)
        return RealRunResult(
            grid=tuple(meta["grid"]),
            extent=tuple(meta["extent"]) if meta.get("extent") else None,
            block=tuple(meta["block"]),
            n=meta["n"],
            backend=meta["backend"],
            device_name=meta["device_name"],
            block_of_element=data["block_of_element"],
            thread_of_element=data["thread_of_element"],
            writes_per_element=data["writes_per_element"],
            sum_correct=meta["sum_correct"],
            kernel_s=meta["kernel_s"],
            total_s=total_s,
            sm_of_block=data["sm_of_block"] if "sm_of_block" in data.files else None,
            sm_note=str(meta.get("sm_note", "")),
            kernel_method=str(meta.get("kernel_method", "")),
        )


class RealRunStopped(UserError):
    """The run was stopped on purpose (Stop, a changed launch, the window closing)."""


def run_real(
    config: LaunchConfig,
    *,
    simulator: bool = False,
    backend: str | None = None,
    timeout_s: float = 300.0,
    on_process: Callable[[AgentProcess], None] | None = None,
    remote: Remote | None = None,
    device_index: int | None = None,
) -> RealRunResult:
    """Run the kernel with ``config``'s grid and block over its problem in a child process and load
    its result: on the GPU, under the simulator (``simulator``, or ``backend="simulator"``) or as
    the compiled CPU emulation (``backend="emulation"``). With a 2D/3D problem (``config.extent``)
    each thread writes the element at its position, as an image kernel does; with no problem size
    every thread writes one element.

    The child is an agent (``explorer.agent``, method ``realrun.run``) started with the simulator
    switched on or off; it dies with this process whatever happens. Blocks until the child
    finishes: call it from a worker thread, never the UI thread. The size is checked here first so
    a refused run costs nothing. ``on_process`` receives the agent so a window that closes, or
    whose launch changed, can ``cancel()`` it instead of waiting; the run then raises
    ``RealRunStopped``.

    With ``remote`` the agent runs on that machine over ssh (``explorer.remote``), on its GPU
    ``device_index`` (its first without one), and the arrays come back in the protocol's answer
    (``realrun_inline``), never through a file; ssh's and Slurm's failures are one line.
    """
    from explorer.agent.child import AgentCancelled, AgentTimeout, local_agent
    from explorer.agent.protocol import AgentError

    chosen = _backend(simulator, backend)
    g, b, n, e = _shape(config)
    n_elements = check_size(g, b, n, backend=chosen, extent=e)
    if remote is not None:
        return _run_remote(g, b, n, e, chosen, n_elements, remote, device_index, timeout_s, on_process)
    agent = local_agent(
        env_overrides={"NUMBA_ENABLE_CUDASIM": "1" if chosen == "simulator" else None},
        label="the real run",
    )
    if on_process is not None:
        on_process(agent)
    fd, path = tempfile.mkstemp(prefix="explorer-realrun-", suffix=".npz")
    os.close(fd)
    params = {
        "grid": list(g),
        "block": list(b),
        "n": None if n is None else int(n),
        "extent": None if e is None else list(e),
        "out": path,
        "emulate": chosen == "emulation",
    }
    t0 = time.perf_counter()
    try:
        agent.start()
        agent.request("realrun.run", params, timeout_s=timeout_s)
        return _load(path, time.perf_counter() - t0, n_elements, _count(g))
    except AgentCancelled:
        raise RealRunStopped("the real run was stopped") from None
    except AgentTimeout:
        raise UserError(f"the real run took longer than {timeout_s:.0f} s and was stopped") from None
    except AgentError as exc:
        raise UserError(str(exc)) from None
    finally:
        agent.close()
        try:
            os.unlink(path)
        except OSError:
            pass


def _run_remote(
    g: Dim,
    b: Dim,
    n: int | None,
    e: Dim | None,
    chosen: str,
    n_elements: int,
    remote: Remote,
    device_index: int | None,
    timeout_s: float,
    on_process: Callable[[AgentProcess], None] | None,
) -> RealRunResult:
    from dataclasses import replace

    from explorer.agent.child import AgentCancelled, AgentFailed, AgentTimeout
    from explorer.agent.protocol import AgentError
    from explorer.remote.session import RemoteAgentProcess

    if n_elements > REMOTE_MAX_ELEMENTS:
        raise UserError(
            f"N is {n_elements:,}; a real run on another machine ({remote.host}) brings back at most "
            f"{REMOTE_MAX_ELEMENTS:,} elements"
        )
    if chosen == "simulator":  # numba reads the switch once, at import: it is set for the agent there
        remote = replace(remote, prefix=("env", "NUMBA_ENABLE_CUDASIM=1", *remote.prefix))
    agent = RemoteAgentProcess(remote, label=f"the real run on {remote.host}")
    if on_process is not None:
        on_process(agent)
    params = {
        "grid": list(g),
        "block": list(b),
        "n": None if n is None else int(n),
        "extent": None if e is None else list(e),
        "inline": True,
        "emulate": chosen == "emulation",
        "device_index": device_index,
    }
    t0 = time.perf_counter()
    try:
        agent.start()
        answer = agent.request("realrun.run", params, timeout_s=timeout_s)
        result = result_from_inline(answer.get("result"), g, b, n_elements, e, time.perf_counter() - t0)
        result.host = remote.host
        return result
    except AgentCancelled:
        raise RealRunStopped("the real run was stopped") from None
    except AgentTimeout as exc:
        raise UserError(f"the real run on {remote.host} stopped: {exc}") from None
    except AgentFailed as exc:  # the run there refused or failed: say where
        raise UserError(f"on {remote.host}: {exc}") from None
    except AgentError as exc:  # ssh's or Slurm's reason, already naming the machine
        raise UserError(str(exc)) from None
    finally:
        agent.close()


def _encode_array(values: np.ndarray) -> str:
    """An index array for a JSON line: its differences (a correct launch's are nearly all 0 or 1),
    zlib-compressed, base64."""
    import base64
    import zlib

    import numpy as np

    deltas = np.diff(values.astype(np.int64), prepend=np.int64(0)).astype("<i8")
    return base64.b64encode(zlib.compress(deltas.tobytes(), 6)).decode("ascii")


def _decode_array(text: Any, n: int, dtype: str, name: str) -> np.ndarray:
    """``_encode_array``'s inverse, checked: exactly ``n`` values, and never more bytes inflated
    than that (a small answer must not unpack into gigabytes)."""
    import base64
    import binascii
    import zlib

    import numpy as np

    if not isinstance(text, str):
        raise ValueError(f"{name} is missing")
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, n * 8 + 1)
    except (binascii.Error, UnicodeEncodeError, zlib.error):
        raise ValueError(f"{name} is not encoded as this version encodes it") from None
    if len(raw) != n * 8 or inflater.unconsumed_tail:
        raise ValueError(f"{name} does not hold {n:,} values")
    return np.cumsum(np.frombuffer(raw, dtype="<i8")).astype(dtype)


def result_to_inline(result: RealRunResult) -> dict[str, Any]:
    """A run's result as one JSON object (the agent's answer to a remote run). UserError when the
    arrays do not compress into a protocol line (a launch that scrambles the elements)."""
    arrays = {
        "block_of_element": _encode_array(result.block_of_element),
        "thread_of_element": _encode_array(result.thread_of_element),
        "writes_per_element": _encode_array(result.writes_per_element),
    }
    sm_note = result.sm_note
    if result.sm_of_block is not None:
        if result.sm_of_block.size <= REMOTE_SM_MAP_MAX_BLOCKS:
            arrays["sm_of_block"] = _encode_array(result.sm_of_block)
        else:
            sm_note = f"a run on another machine brings the SM map back for at most {REMOTE_SM_MAP_MAX_BLOCKS:,} blocks"
    size = sum(len(a) for a in arrays.values())
    if size > _INLINE_MAX_BYTES:
        raise UserError(
            f"the run's per-element records are {size:,} bytes compressed, more than the "
            f"{_INLINE_MAX_BYTES:,} one answer can carry back; choose a smaller N"
        )
    return {
        "grid": list(result.grid),
        "block": list(result.block),
        "extent": list(result.extent) if result.extent is not None else None,
        "n": result.n,
        "backend": result.backend,
        "device_name": result.device_name,
        "sum_correct": result.sum_correct,
        "kernel_s": result.kernel_s,
        "sm_note": sm_note,
        "kernel_method": result.kernel_method,
        **arrays,
    }


def result_from_inline(
    data: Any, grid: Dim, block: Dim, n: int, extent: Dim | None, total_s: float
) -> RealRunResult:
    """The result another machine's agent sent for the launch asked (untrusted: every field
    checked against the request). UserError naming what does not fit."""
    import math

    try:
        if not isinstance(data, dict):
            raise ValueError("no result came back")
        if (
            data.get("grid") != list(grid)
            or data.get("block") != list(block)
            or data.get("n") != n
            or data.get("extent") != (list(extent) if extent is not None else None)
        ):
            raise ValueError("it answered for another launch")
        backend, name, correct, kernel_s = (
            data.get("backend"),
            data.get("device_name"),
            data.get("sum_correct"),
            data.get("kernel_s"),
        )
        if backend not in BACKENDS or not isinstance(name, str) or not isinstance(correct, bool):
            raise ValueError("its backend, device or check is not valid")
        if (
            isinstance(kernel_s, bool)
            or not isinstance(kernel_s, (int, float))
            or not math.isfinite(kernel_s)
        ):
            raise ValueError("its kernel time is not a number")
        return RealRunResult(
            grid=grid,
            block=block,
            n=n,
            backend=backend,
            device_name=name[:200],
            block_of_element=_decode_array(data.get("block_of_element"), n, "int64", "block_of_element"),
            thread_of_element=_decode_array(data.get("thread_of_element"), n, "int64", "thread_of_element"),
            writes_per_element=_decode_array(
                data.get("writes_per_element"), n, "int32", "writes_per_element"
            ),
            sum_correct=correct,
            kernel_s=max(0.0, float(kernel_s)),
            total_s=total_s,
            extent=extent,
            sm_of_block=_sm_map_from_inline(data, grid),
            sm_note=str(data.get("sm_note") or "")[:300],
            kernel_method=str(data.get("kernel_method") or "")[:300],
        )
    except ValueError as exc:
        raise UserError(f"the remote's real run sent a result that is not valid here: {exc}") from None


def _sm_map_from_inline(data: dict[str, Any], grid: Dim) -> np.ndarray | None:
    """The SM map another machine sent, checked: one SM number (or -1) per block of the launch."""
    text = data.get("sm_of_block")
    if text is None:
        return None
    blocks = _count(grid)
    if blocks > REMOTE_SM_MAP_MAX_BLOCKS:
        raise ValueError("it sent an SM map for more blocks than a remote run carries")
    sm = _decode_array(text, blocks, "int32", "sm_of_block")
    if sm.size and (int(sm.min()) < -1 or int(sm.max()) > MAX_SM_NUMBER):
        raise ValueError(f"its SM map holds numbers outside -1..{MAX_SM_NUMBER}")
    return sm


def run_to_file(
    grid: Sequence[int],
    block: Sequence[int],
    n: int | None,
    out: str,
    *,
    emulate: bool = False,
    extent: Sequence[int] | None = None,
) -> str:
    """The agent's side of ``run_real``: run here, save the result to ``out``; the backend used."""
    result = run_here(_dims(grid), _dims(block), n, emulate=emulate, extent=extent)
    _save(result, out)
    return result.backend
