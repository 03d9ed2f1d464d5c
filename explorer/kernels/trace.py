"""The child's side: run a student's script under numba's CUDA simulator and record, for every
launch, each lane's global and shared accesses and the source lines it ran.

Runs only in an agent started with ``NUMBA_ENABLE_CUDASIM=1`` (``explorer.kernels.run``): the
simulator runs each CUDA thread as a Python thread, so the hooks here see real indices. Three
hooks, put in before the script runs and never taken out (the agent exits after one script):

* the simulator's device arrays (``FakeCUDAArray``) record each element a lane loads or stores;
* ``cuda.shared.array`` hands out arrays that record the same, at offsets of one shared space;
* a line tracer on the simulator's threads records each lane's path through the script's lines.

A launch over the thread budget is refused before it runs, naming the kernel and the limit; the
script's output is kept (within a bound) and returned with the counts.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import resource
import runpy
import signal
import sys
import threading
import traceback
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.kernels.counts import LaneAccess, LineCounts, access_counts, execution_counts

WARP = 32
MAX_OUTPUT_CHARS = 64 * 1024
MAX_EVENTS = 5_000_000  # lines and accesses over the whole script: past it the trace is refused
FILE_SIZE_LIMIT = 64 * 1024 * 1024  # bytes the script may write to one file


class BudgetExceeded(Exception):
    """The script asked for more than the budget allows: one line naming what and the limit."""


@dataclass
class Launch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    accesses: list[LaneAccess] = field(default_factory=list)
    paths: dict[tuple[int, int, int], list[int]] = field(default_factory=dict)
    #: each ``cuda.shared.array`` call site's bytes (one array per block at each) and the dynamic
    #: shared memory the launch asked for: what one block holds, for its occupancy
    shared_sites: dict[tuple[str, int], int] = field(default_factory=dict)
    dynamic_shared: int = 0

    @property
    def shared_bytes(self) -> int:
        """Static shared memory per block (each array 16-byte aligned, as the compiler lays them
        out) plus the dynamic shared memory of the launch."""
        return sum(-(-b // 16) * 16 for b in self.shared_sites.values()) + self.dynamic_shared


@dataclass
class Tracer:
    script: str  # the script's path, as its frames' co_filename names it
    max_threads: int  # per launch
    launches: list[Launch] = field(default_factory=list)
    events: int = 0
    _arrays: dict[int, int] = field(default_factory=dict)  # id(root array) -> number
    _roots: list[Any] = field(default_factory=list)  # keeps the roots alive so ids stay theirs
    _shared_base: dict[int, int] = field(default_factory=dict)  # id(shared root) -> offset
    _shared_end: int = 0  # where the next shared array starts
    block_thread: type | None = None  # the simulator's thread class: one CUDA thread each
    _occurrences: Any = field(default_factory=weakref.WeakKeyDictionary)  # thread -> its access counts

    # --- where a lane is -------------------------------------------------------------------------
    def lane(self) -> tuple[Launch, int, int, int, Any] | None:
        """(launch, block, warp, lane, thread) of the simulator thread running now, or None."""
        current = threading.current_thread()
        if self.block_thread is None or not isinstance(current, self.block_thread) or not self.launches:
            return None
        t: Any = current
        gx, gy, _ = self.launches[-1].grid
        bx, by, _ = self.launches[-1].block
        block = t.blockIdx.x + gx * (t.blockIdx.y + gy * t.blockIdx.z)
        tid = t.threadIdx.x + bx * (t.threadIdx.y + by * t.threadIdx.z)
        return self.launches[-1], block, tid // WARP, tid % WARP, t

    def source_line(self) -> int | None:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.script:
                return frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return None

    def count(self) -> None:
        self.events += 1
        if self.events > MAX_EVENTS:
            raise BudgetExceeded(
                f"the kernels ran more than {MAX_EVENTS:,} traced lines and accesses; the simulator's "
                "budget: launch fewer threads or a smaller problem"
            )

    # --- accesses --------------------------------------------------------------------------------
    def record(self, ary: Any, idx: Any, space: str, kind: str) -> None:
        where = self.lane()
        if where is None:
            return
        line = self.source_line()
        if line is None:
            return
        offset = element_offset(ary, idx)
        if offset is None:  # a slice or a fancy index: not one element
            return
        self.count()
        launch, block, warp, lane, thread = where
        root = root_array(ary)
        number = self._arrays.get(id(root))
        if number is None:
            number = self._arrays[id(root)] = len(self._arrays)
            self._roots.append(root)
        address = data_pointer(ary) - data_pointer(root) + offset
        if space == "shared":
            base = self._shared_base.get(id(root))
            if base is None:  # shared arrays laid out one after another in one space, 16-byte aligned
                base = self._shared_base[id(root)] = -(-self._shared_end // 16) * 16
                self._shared_end = base + int(root.nbytes)
            address += base
        counters = self._occurrences.setdefault(thread, {})
        key = (line, space, kind, number)
        occurrence = counters.get(key, 0)
        counters[key] = occurrence + 1
        launch.accesses.append(
            LaneAccess(block, warp, lane, line, space, kind, number, occurrence, address, int(ary.itemsize))
        )

    # --- lines -----------------------------------------------------------------------------------
    def trace_calls(self, frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != self.script or self.lane() is None:
            return None
        return self.trace_lines

    def trace_lines(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            where = self.lane()
            if where is not None:
                self.count()
                launch, block, warp, lane, _thread = where
                launch.paths.setdefault((block, warp, lane), []).append(frame.f_lineno)
        return self.trace_lines


def root_array(ary: Any) -> Any:
    import numpy as np

    root = ary
    while isinstance(getattr(root, "base", None), np.ndarray):
        root = root.base
    return root


def data_pointer(ary: Any) -> int:
    return int(ary.__array_interface__["data"][0])


def element_offset(ary: Any, idx: Any) -> int | None:
    """Bytes from ``ary``'s first element to the one ``idx`` names; None unless it names one."""
    import numpy as np

    if not isinstance(idx, tuple):
        idx = (idx,)
    if len(idx) != ary.ndim:
        return None
    offset = 0
    for i, n, stride in zip(idx, ary.shape, ary.strides, strict=True):
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            return None
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            return None  # out of bounds: numpy raises it as the kernel's fault
        offset += i * stride
    return offset


def install(tracer: Tracer) -> None:
    """Put the hooks into numba's simulator (the agent was started with it switched on)."""
    import numpy as np
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.cudadrv import devicearray

    tracer.block_thread = sim_kernel.BlockThread
    fake = devicearray.FakeCUDAArray
    get, put = fake.__getitem__, fake.__setitem__

    def traced_get(self: Any, idx: Any) -> Any:
        tracer.record(self._ary, idx, "global", "load")
        return get(self, idx)

    def traced_put(self: Any, idx: Any, val: Any) -> Any:
        tracer.record(self._ary, idx, "global", "store")
        return put(self, idx, val)

    fake.__getitem__ = traced_get  # type: ignore[method-assign]
    fake.__setitem__ = traced_put  # type: ignore[method-assign]

    class SharedArray(np.ndarray):
        """A shared array that tells the tracer what each lane touches."""

        def __getitem__(self, idx: Any) -> Any:
            tracer.record(self, idx, "shared", "load")
            return super().__getitem__(idx)

        def __setitem__(self, idx: Any, val: Any) -> None:
            tracer.record(self, idx, "shared", "store")
            super().__setitem__(idx, val)

    allocating = threading.Lock()

    def shared_array(self: Any, shape: Any, dtype: Any) -> Any:
        from numba.core import types
        from numba.np import numpy_support

        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        if shape == 0:  # dynamic shared memory: one buffer for every such array, as the simulator has it
            if tracer.launches:
                tracer.launches[-1].dynamic_shared = int(self._dynshared_size)
            count = self._dynshared_size // np.dtype(dtype).itemsize
            return np.frombuffer(self._dynshared.data, dtype=dtype, count=count).view(SharedArray)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with allocating:  # every lane of the block reaches this line at once: one array for them all
            res = self._allocations.get(key)
            if res is None:
                res = self._allocations[key] = np.zeros(shape, dtype).view(SharedArray)
                if tracer.launches:
                    tracer.launches[-1].shared_sites[key] = int(res.nbytes)
        return res

    kernelapi.FakeCUDAShared.array = shared_array  # type: ignore[method-assign]

    call = sim_kernel.FakeCUDAKernel.__call__

    def traced_call(self: Any, *args: Any) -> Any:
        if self._device:
            return call(self, *args)
        grid, block = sim_kernel.normalize_kernel_dimensions(self.grid_dim, self.block_dim)
        grid3 = tuple(int(v) for v in (*tuple(grid), 1, 1)[:3])
        block3 = tuple(int(v) for v in (*tuple(block), 1, 1)[:3])
        threads = grid3[0] * grid3[1] * grid3[2] * block3[0] * block3[1] * block3[2]
        name = str(self.fn.__name__)
        if threads > tracer.max_threads:
            raise BudgetExceeded(
                f"kernel {name} launches {threads:,} threads (grid {grid3}, block {block3}); the simulator's "
                f"budget is {tracer.max_threads:,} threads per launch (about 0.1 ms each): launch a smaller "
                "problem for the trace"
            )
        tracer.launches.append(Launch(name, grid3, block3))  # type: ignore[arg-type]
        return call(self, *args)

    sim_kernel.FakeCUDAKernel.__call__ = traced_call  # type: ignore[method-assign]
    threading.settrace(tracer.trace_calls)


def branch_lines(source: str) -> set[int]:
    """The lines whose statement can send lanes two ways: if, while, for, a conditional expression,
    a short-circuit and/or, a comprehension's condition."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            lines.add(node.test.lineno)
        elif isinstance(node, (ast.For, ast.comprehension)):
            lines.add(node.iter.lineno)
        elif isinstance(node, ast.BoolOp):
            lines.add(node.lineno)
    return lines


class BoundedText(io.TextIOBase):
    """What the script prints, kept up to ``MAX_OUTPUT_CHARS``."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.cut = False

    def write(self, s: str) -> int:
        room = MAX_OUTPUT_CHARS - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        if len(s) > room:
            self.cut = True
        return len(s)

    def writable(self) -> bool:
        return True

    def text(self) -> str:
        return "".join(self.parts) + ("\n[... output cut at 64 KB]\n" if self.cut else "")


def run_script(path: str, max_threads: int) -> dict[str, Any]:
    """Run the script as ``python FILE`` would (its ``__main__``, its folder first on the path and as
    the working folder) with the hooks in; the per-line counts of every launch, its output, and
    what stopped it, if anything."""
    script = str(Path(path).resolve())
    source = Path(script).read_text(encoding="utf-8", errors="replace")
    source_lines = source.splitlines()
    try:
        branches = branch_lines(source)
    except SyntaxError as exc:
        return {"launches": [], "output": "", "error": f"{Path(script).name} line {exc.lineno}: {exc.msg}"}
    tracer = Tracer(script, max_threads)
    with contextlib.suppress(ValueError, OSError):  # a file the script writes stops at the bound
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    install(tracer)
    out = BoundedText()
    error: str | None = None
    exit_code: int | None = None
    os.chdir(Path(script).parent)
    sys.path.insert(0, str(Path(script).parent))
    sys.argv = [script]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        exit_code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exit_code:
            error = f"the script exited with status {exit_code}"
    except BudgetExceeded as exc:
        error = str(exc)
    except BaseException as exc:  # the student's script: whatever it raised, in one line
        error = script_error(exc, script, tracer)
    finally:
        threading.settrace(None)
    launches = []
    for launch in tracer.launches:
        lines: dict[int, LineCounts] = {}
        access_counts(launch.accesses, lines)
        execution_counts(launch.paths, branches, lines)
        for number, c in lines.items():
            c.source = source_lines[number - 1].strip()[:200] if 0 < number <= len(source_lines) else ""
        launches.append(
            {
                "kernel": launch.kernel,
                "grid": list(launch.grid),
                "block": list(launch.block),
                "shared_bytes": launch.shared_bytes,
                "lines": [lines[n].to_dict() for n in sorted(lines)],
            }
        )
    return {"launches": launches, "output": out.text(), "error": error, "exit_code": exit_code}


def script_error(exc: BaseException, script: str, tracer: Tracer) -> str:
    """What the script raised, in one line, at its own line (a kernel's fault names the kernel)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == script:
            line = frame.lineno
    where = f" at line {line}" if line else ""
    text = " ".join(str(exc).split())[:300]
    in_kernel = tracer.launches and "tid=" in text
    what = f"kernel {tracer.launches[-1].kernel} faulted" if in_kernel else "the script raised"
    return f"{what}{where}: {type(exc).__name__}: {text}" if text else f"{what}{where}: {type(exc).__name__}"
