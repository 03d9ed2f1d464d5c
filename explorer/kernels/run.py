"""The parent's side: run a student's script in an agent with the CUDA simulator on, under a time,
thread and memory budget, and read back each launch's per-line counts.

The script is the student's own code, run as the student with the rights ``python FILE.py`` has;
it runs only in a child (an agent, ``explorer.agent``), so nothing it does reaches this process:
a loop is stopped at the time budget, a memory hog at the memory budget, a crash or ``os._exit``
ends only the child, and whatever it forked goes with the child's process group.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from explorer.agent.child import AgentError, AgentFailed, AgentTimeout, describe_exit, local_agent
from explorer.errors import UserError

DEFAULT_MAX_THREADS = 4096  # per launch: about 0.1-0.5 s of simulator per 1,000 threads traced
MAX_MAX_THREADS = 1 << 20
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_MEMORY_BYTES = 2 * 1024**3
MAX_SCRIPT_BYTES = 1024 * 1024
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class LineFigures:
    """One source line's counts in one launch (``explorer.kernels.counts.LineCounts`` as sent)."""

    line: int
    source: str
    global_load_requests: int
    global_load_sectors: int
    global_load_sectors_ideal: int
    global_store_requests: int
    global_store_sectors: int
    global_store_sectors_ideal: int
    shared_load_requests: int
    shared_load_wavefronts: int
    shared_load_wavefronts_ideal: int
    shared_store_requests: int
    shared_store_wavefronts: int
    shared_store_wavefronts_ideal: int
    warp_executions: int
    active_lanes_mean: float | None
    divergent_warps: int | None
    first_access: dict[str, Any] | None = None
    first_lanes: list[int] | None = None

    @property
    def excess_sectors(self) -> int:
        return (
            self.global_load_sectors
            - self.global_load_sectors_ideal
            + self.global_store_sectors
            - self.global_store_sectors_ideal
        )

    @property
    def excess_wavefronts(self) -> int:
        return (
            self.shared_load_wavefronts
            - self.shared_load_wavefronts_ideal
            + self.shared_store_wavefronts
            - self.shared_store_wavefronts_ideal
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KernelLaunch:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    lines: tuple[LineFigures, ...]
    #: shared memory one block holds (its ``cuda.shared.array``s and the launch's dynamic share)
    shared_bytes: int = 0

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "grid": list(self.grid),
            "block": list(self.block),
            "shared_bytes": self.shared_bytes,
            "lines": [ln.to_dict() for ln in self.lines],
        }


@dataclass(frozen=True)
class KernelReport:
    """Every launch the script made, what it printed, and what stopped it (None: it ran through)."""

    script: str
    launches: tuple[KernelLaunch, ...]
    output: str = ""
    error: str | None = None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "script": self.script,
            "launches": [launch.to_dict() for launch in self.launches],
            "output": self.output,
            "error": self.error,
        }


def check_script(path_text: str) -> Path:
    """The script to run: a readable regular ``.py`` file of at most ``MAX_SCRIPT_BYTES``."""
    path = Path(os.path.expanduser(path_text)) if path_text else Path()
    shown = path_text[:200]
    if not path_text or not path.name.endswith(".py"):
        raise UserError(
            f"{shown!r} is not a Python file (FILE.py): the kernel page runs the script you wrote"
        )
    try:
        info = path.stat()
    except FileNotFoundError:
        raise UserError(f"no file {shown!r}") from None
    except OSError as exc:
        raise UserError(f"cannot read {shown!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{shown!r} is not a regular file")
    if info.st_size > MAX_SCRIPT_BYTES:
        raise UserError(f"{shown!r} is {info.st_size:,} bytes; a script here is at most {MAX_SCRIPT_BYTES:,}")
    if not os.access(path, os.R_OK):
        raise UserError(f"cannot read {shown!r}: permission denied")
    return path.resolve()


def trace_script(
    path_text: str,
    *,
    max_threads: int = DEFAULT_MAX_THREADS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_memory_bytes: int = DEFAULT_MAX_MEMORY_BYTES,
) -> KernelReport:
    """Run the script under the simulator in an agent and read back its launches' counts; every
    way it can fail is a ``UserError`` line (the child is gone by then)."""
    script = check_script(path_text)
    agent = local_agent(
        env_overrides={"NUMBA_ENABLE_CUDASIM": "1"}, label=f"the simulator running {script.name}"
    )
    over_memory = threading.Event()
    done = threading.Event()

    def watch() -> None:
        import psutil

        while not done.wait(0.2):
            pid = agent.pid
            if pid is None:
                continue
            try:
                proc = psutil.Process(pid)
                rss = proc.memory_info().rss + sum(
                    c.memory_info().rss for c in proc.children(recursive=True) if c.is_running()
                )
            except psutil.Error:
                continue
            if rss > max_memory_bytes:
                over_memory.set()
                agent.cancel()
                return

    watcher = threading.Thread(target=watch, daemon=True, name="kernel-memory-watch")
    try:
        agent.start(hello_timeout_s=START_TIMEOUT_S)
        watcher.start()
        result = agent.request(
            "kernel.trace", {"path": str(script), "max_threads": max_threads}, timeout_s=timeout_s
        )
    except AgentTimeout:
        raise UserError(
            f"{script.name} ran past the {timeout_s:g} s budget under the simulator (it may loop, or launch "
            "more than the simulator can run in that time: about 0.1-0.5 s per 1,000 threads)"
        ) from None
    except AgentFailed as exc:
        raise UserError(f"{script.name}: {exc}") from None
    except AgentError as exc:
        if over_memory.is_set():
            raise UserError(
                f"{script.name} used more than {max_memory_bytes // 1024**2:,} MiB under the simulator and was "
                "stopped; trace a smaller problem"
            ) from None
        code = agent.returncode
        how = describe_exit(code) if code is not None else str(exc)
        raise UserError(f"{script.name} ended the simulator's process ({how}) before it finished") from None
    finally:
        done.set()
        agent.close()
    return report_from(str(script), result)


def report_from(script: str, data: dict[str, Any]) -> KernelReport:
    """The child's answer as records, each field checked (the child ran a student's code)."""
    launches = []
    for raw in _list(data.get("launches")):
        lines = tuple(_line(x) for x in _list(raw.get("lines")))
        launches.append(
            KernelLaunch(
                kernel=str(raw.get("kernel", "kernel"))[:100],
                grid=_dim3(raw.get("grid")),
                block=_dim3(raw.get("block")),
                lines=lines,
                shared_bytes=_bytes(raw.get("shared_bytes", 0)),
            )
        )
    error = data.get("error")
    return KernelReport(
        script=script,
        launches=tuple(launches),
        output=str(data.get("output", ""))[:100_000],
        error=None if error is None else str(error)[:400],
    )


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise UserError("the simulator's child sent a malformed trace")
    return value


def _bytes(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1 << 40:
        raise UserError("the simulator's child sent a malformed shared-memory size")
    return value


def _dim3(value: Any) -> tuple[int, int, int]:
    items = _list(value)
    if len(items) != 3 or not all(isinstance(v, int) and v >= 1 for v in items):
        raise UserError("the simulator's child sent a malformed launch shape")
    return (items[0], items[1], items[2])


def _line(raw: Any) -> LineFigures:
    if not isinstance(raw, dict):
        raise UserError("the simulator's child sent a malformed line")
    values: dict[str, Any] = {}
    for f in fields(LineFigures):
        name, v = f.name, raw.get(f.name)
        if name in ("first_access", "first_lanes", "active_lanes_mean", "divergent_warps"):
            values[name] = v
        elif name == "source":
            values[name] = str(v or "")[:200]
        elif not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise UserError(f"the simulator's child sent a malformed {name}")
        else:
            values[name] = v
    return LineFigures(**values)
