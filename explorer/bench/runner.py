"""Runs a benchmark plan in a worker *process* and streams one BenchPoint per point.

Why a process: an out-of-memory error, a driver fault, a segfault in a native library or a
kernel that never returns must not take the window (or the CLI) down. The parent talks to the
worker over a pipe, one point at a time, and watches it: if the worker dies or overruns
``point_timeout_s`` the point becomes an error row, the worker is replaced, and the run goes on.

The worker is started with the "spawn" context (fork is unsafe once CUDA or Qt threads exist,
and spawn is what frozen PyInstaller builds support, with ``multiprocessing.freeze_support()``
in the entry point). This module imports nothing heavy, so spawning is cheap to import.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from explorer.bench.results import BenchPoint, error_point
from explorer.bench.workloads import Workload, get_workload
from explorer.errors import UserError
from explorer.inputs import parse_device_key

POLL_S = 0.05
STARTUP_TIMEOUT_S = 120.0  # spawning + importing torch on a loaded laptop can be slow


@dataclass
class BenchPlan:
    workload: str
    devices: list[str]
    sizes: list[int] | None = None  # None -> each device's default sizes
    repeats: int | None = None  # None -> adaptive (until the spread settles or the budget ends)
    time_budget_s: float = 2.0  # per point
    point_timeout_s: float = 120.0  # a point running longer becomes an error row; the worker is replaced
    cpu_threads: int | None = None  # None -> torch's default (all cores)
    # Run the worker below normal priority so a window sharing few cores stays responsive; the
    # benchmark loses only the moments the window actually needs the CPU. Off for the CLI.
    low_priority: bool = False


@dataclass
class Progress:
    done: int
    total: int
    eta_s: float | None


@dataclass
class _PlannedPoint:
    spec: dict
    workload: Workload
    label: str = field(default="")


def parse_device(text: str) -> str:
    """'cpu' or 'cuda:N' normalised; UserError otherwise (presence is checked where CUDA is loaded)."""
    return parse_device_key(text)


def plan_points(plan: BenchPlan) -> list[dict]:
    """Every point of the plan, in run order: by size, then device, then variant, so the series
    of all devices grow together on the live plot."""
    w = get_workload(plan.workload)
    if not plan.devices:
        raise UserError("no device chosen; choose 'cpu' or 'cuda:N'")
    devices = list(dict.fromkeys(parse_device(d) for d in plan.devices))
    partner: dict[str, str | None] = {d: None for d in devices}
    if w.needs_gpu_count >= 2:
        # A multi-GPU workload runs once, on the first GPU chosen, with the second as its partner
        # (the partner defaults to the next GPU when only one is named, as on the CLI).
        gpus = [d for d in devices if d != "cpu"]
        if gpus:
            partner[gpus[0]] = gpus[1] if len(gpus) > 1 else None
            devices = [d for d in devices if d == "cpu" or d == gpus[0]]
    if plan.sizes is not None:
        for s in plan.sizes:
            if not isinstance(s, int) or isinstance(s, bool) or s <= 0:
                raise UserError(f"{w.size_name} must be a positive whole number; got '{s}'")
    if plan.repeats is not None and plan.repeats <= 0:
        raise UserError(f"repeats must be at least 1; got {plan.repeats}")
    rows: list[tuple[int, int, int, str, str, str]] = []
    for di, dev in enumerate(devices):
        sizes = plan.sizes if plan.sizes is not None else list(w.default_sizes(dev))
        suffixes = w.variants_cpu if dev == "cpu" else w.variants_gpu
        for size in sizes:
            for vi, suffix in enumerate(suffixes):
                variant = f"{dev} {suffix}" if suffix else dev
                rows.append((size, di, vi, dev, variant, suffix))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [
        dict(
            index=i,
            workload=w.name,
            device=dev,
            variant=variant,
            suffix=suffix,
            size=size,
            repeats=plan.repeats,
            budget_s=plan.time_budget_s,
            cpu_threads=plan.cpu_threads,
            partner=partner.get(dev),
        )
        for i, (size, _, _, dev, variant, suffix) in enumerate(rows)
    ]


def _lower_priority() -> None:
    try:
        import psutil

        proc = psutil.Process()
        if hasattr(psutil, "BELOW_NORMAL_PRIORITY_CLASS"):  # Windows
            proc.nice(psutil.BELOW_NORMAL_PRIORITY_CLASS)
        else:
            proc.nice(min(19, proc.nice() + 10))
    except Exception:
        pass  # a priority we cannot change is not worth failing a benchmark for


def _worker_main(conn, preload: tuple[str, ...], low_priority: bool = False) -> None:
    """The worker process: import what the workload needs, then measure points until told to stop."""
    import importlib

    if low_priority:
        _lower_priority()

    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:
            pass  # the point itself will report what is missing
    from explorer.bench.execute import PointSpec, run_point

    conn.send(("ready", None))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "stop":
            return
        spec = PointSpec(**msg[1])
        point, fatal = run_point(spec)
        conn.send(("point", point.to_dict(), fatal))
        if fatal:
            return


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "was stopped"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed ({name})"
    if code >= 0xC0000000:  # a Windows exception code, e.g. 0xC0000005 access violation
        return f"crashed (exception 0x{code:08X})"
    return f"exited with code {code}"


class _WorkerGone(Exception):
    """The worker process ended (crash, kill, out of memory): its pipe closed or it is not alive."""


class _Worker:
    def __init__(self, preload: tuple[str, ...], low_priority: bool = False) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(
            target=_worker_main,
            args=(child, preload, low_priority),
            daemon=True,
            name="device-explorer-bench",
        )
        self.proc.start()
        child.close()
        self.ready = False

    def receive(self, timeout_s: float) -> tuple | None:
        """The next message, or None when none came within ``timeout_s``; raises ``_WorkerGone``
        once the process has ended and nothing it sent is left to read."""
        if self.conn.poll(timeout_s):
            try:
                return self.conn.recv()
            except (EOFError, OSError):
                raise _WorkerGone from None
        if not self.proc.is_alive():
            raise _WorkerGone
        return None

    def stop(self, graceful: bool = True) -> None:
        if graceful and self.proc.is_alive():
            try:
                self.conn.send(("stop",))
                self.proc.join(1.0)
            except (OSError, ValueError):
                pass
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(1.0)
        try:
            self.conn.close()
        except OSError:
            pass


class BenchRun:
    """One run of a plan. ``events()`` yields Progress and BenchPoint items as they happen;
    ``cancel()`` may be called from any thread and ends ``events()`` within ~0.1 s."""

    def __init__(self, plan: BenchPlan) -> None:
        self.plan = plan
        self.workload = get_workload(plan.workload)
        self._specs = plan_points(plan)
        self.total_points = len(self._specs)
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self.points: list[BenchPoint] = []
        self.workers_started = 0

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()
        with self._lock:
            worker = self._worker
        if worker is not None and worker.proc.is_alive():
            worker.proc.terminate()

    # --- the stream ------------------------------------------------------------------------

    def events(self) -> Iterator[BenchPoint | Progress]:
        started = time.monotonic()
        yield Progress(0, self.total_points, None)
        try:
            for done, spec in enumerate(self._specs):
                if self.cancelled:
                    return
                point = self._run_one(spec)
                if point is None:  # cancelled mid-point
                    return
                self.points.append(point)
                yield point
                elapsed = time.monotonic() - started
                finished = done + 1
                eta = elapsed / finished * (self.total_points - finished)
                yield Progress(finished, self.total_points, eta)
        finally:
            self._shutdown()

    def run_all(self) -> list[BenchPoint]:
        return [e for e in self.events() if isinstance(e, BenchPoint)]

    # --- internals -------------------------------------------------------------------------

    def _error(self, spec: dict, message: str) -> BenchPoint:
        w = self.workload
        return error_point(
            w.name, spec["variant"], spec["device"], spec["size"], w.size_label(spec["size"]), message, w.unit
        )

    def _start_worker(self) -> _Worker | None:
        """A ready worker, or None if cancelled; raises RuntimeError if it could not start."""
        try:
            worker = _Worker(self.workload.preload, self.plan.low_priority)
        except OSError as exc:  # no processes left, no memory to spawn
            raise RuntimeError(f"could not start the benchmark worker: {exc}") from None
        self.workers_started += 1
        with self._lock:
            self._worker = worker
        if self.cancelled:  # cancel() may have run before the worker was registered
            worker.stop(graceful=False)
            return None
        deadline = time.monotonic() + max(STARTUP_TIMEOUT_S, self.plan.point_timeout_s)
        while time.monotonic() < deadline:
            if self.cancelled:
                return None
            try:
                msg = worker.receive(POLL_S)
            except _WorkerGone:
                worker.proc.join(1.0)
                raise RuntimeError(
                    f"the benchmark worker {_describe_exit(worker.proc.exitcode)} while starting"
                ) from None
            if msg is not None and msg[0] == "ready":
                worker.ready = True
                return worker
        worker.stop(graceful=False)
        raise RuntimeError("the benchmark worker did not start in time")

    def _replace_worker(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop(graceful=False)

    def _run_one(self, spec: dict) -> BenchPoint | None:
        with self._lock:
            worker = self._worker
        if worker is None or not worker.proc.is_alive():
            self._replace_worker()
            try:
                worker = self._start_worker()
            except RuntimeError as exc:
                self._replace_worker()
                return None if self.cancelled else self._error(spec, str(exc))
            if worker is None:
                return None
        try:
            worker.conn.send(("run", spec))
        except (OSError, ValueError):
            self._replace_worker()
            return (
                None
                if self.cancelled
                else self._error(spec, "the benchmark worker was gone; started a new one")
            )
        timeout = self.plan.point_timeout_s
        deadline = time.monotonic() + timeout
        while True:
            if self.cancelled:
                return None
            try:
                msg = worker.receive(POLL_S)
            except _WorkerGone:
                if self.cancelled:
                    return None
                worker.proc.join(2.0)
                how = _describe_exit(worker.proc.exitcode)
                self._replace_worker()
                return self._error(
                    spec,
                    f"the worker process {how} while measuring this point; a new worker continues the run",
                )
            if msg is not None and msg[0] == "point":
                try:
                    point = BenchPoint.from_dict(msg[1])
                except ValueError as exc:  # a NaN or a wrong type: an error row, not a crash
                    point = self._error(spec, f"the worker reported a value that is not valid: {exc}")
                if msg[2]:  # fatal: the CUDA context is unusable
                    self._replace_worker()
                return point
            if time.monotonic() > deadline:
                self._replace_worker()
                return self._error(
                    spec,
                    f"took longer than the time limit of {timeout:g} s; "
                    "the worker was stopped and a new one continues the run",
                )

    def _shutdown(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop(graceful=not self.cancelled)
