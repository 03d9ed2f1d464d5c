"""Runs a benchmark plan in a worker *process* and streams one BenchPoint per point.

Why a process: an out-of-memory error, a driver fault, a segfault in a native library or a
kernel that never returns must not take the window (or the CLI) down. The worker is an agent
(``explorer.agent``: ``device-explorer agent`` speaking JSON lines on a pipe), asked for one point
at a time; the parent watches it: if the worker dies or overruns ``point_timeout_s`` the point
becomes an error row, the worker is replaced, and the run goes on. The agent dies with its parent
whatever signal the parent gets, and a cancel kills its whole process group.

This module imports nothing heavy; the worker imports the workload's modules (``bench.prepare``)
before its first point is timed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from explorer.agent.child import (
    AgentCancelled,
    AgentFailed,
    AgentGone,
    AgentProcess,
    AgentSilent,
    AgentTimeout,
    local_agent,
)
from explorer.agent.protocol import AgentError
from explorer.bench.results import BenchPoint, error_point
from explorer.bench.spec import PointKey, PointSpec
from explorer.bench.workloads import get_workload
from explorer.errors import UserError
from explorer.gpuqueue.share import QueueWait
from explorer.inputs import parse_device_key
from explorer.remote.session import JobEnded, RemoteAgentProcess, RemoteGone
from explorer.remote.slurm import JobState
from explorer.roofs.model import Roof, RoofKey

if TYPE_CHECKING:
    from explorer.bench.variants import Variant
    from explorer.remote.target import Remote

#: what a run waits for, said to the user as it changes
Waiting = QueueWait | JobState

STARTUP_TIMEOUT_S = 120.0
#: How long a run waits in the queue for a GPU another run holds (``gpu.lock``) before giving up.
GPU_QUEUE_TIMEOUT_S = 3600.0  # starting + importing torch on a loaded laptop can be slow
WORKER_LABEL = "the benchmark worker"
#: Asking the worker for the roof its points were placed under: built once there, from its store.
ROOF_TIMEOUT_S = 60.0
#: A remote point's deadline is its own time budget plus this (starting the kernel, a warm-up, a
#: slow repeat over the budget); a remote that takes a point and goes silent (a hung driver call,
#: a link that dropped without a word) costs the run no more than that, and the run goes on.
REMOTE_POINT_MARGIN_S = 90.0
#: While a run waits for a GPU's turn the remote says where it stands about once a second:
#: this long without a word from it is a remote gone silent, not a long line.
GPU_QUEUE_SILENCE_S = 60.0


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
    # Measure each device's ceilings (sgemm, memory bandwidth) before its first point where none
    # fresh are cached, so every point can be placed on the roofline; seconds, once per machine.
    measure_roof: bool = False
    remeasure_roof: bool = False  # measure them again even where fresh ones are cached
    # A GPU memory workload (``Workload.l2_switch``) flushes the L2 before each sample unless
    # this asks for it warm; CPU points and other workloads run as they always do.
    warm_l2: bool = False
    # Run on another machine (``explorer.remote``): the same agent over ssh, one point at a time.
    # A dropped connection becomes that point's error row; the next point connects again. Each
    # point there has ``point_deadline_s``: its budget plus a margin, at most ``point_timeout_s``.
    remote: Remote | None = None
    # Points already measured, left out of this run (``explorer.bench.resume``): a run that lost
    # its connection or was stopped goes on with the points it has no result for.
    skip: frozenset[PointKey] = frozenset()


@dataclass
class Progress:
    done: int
    total: int
    eta_s: float | None


def parse_device(text: str) -> str:
    """'cpu' or 'cuda:N' normalised; UserError otherwise (presence is checked where CUDA is loaded)."""
    return parse_device_key(text)


def point_deadline_s(plan: BenchPlan, spec: PointSpec) -> float:
    """How long the run waits for ``spec``'s answer: ``point_timeout_s``; on a remote machine at
    most the point's own budget plus ``REMOTE_POINT_MARGIN_S`` (a point that measures the device's
    ceilings first keeps the whole ``point_timeout_s``)."""
    if plan.remote is None or spec.measure_roof or spec.remeasure_roof:
        return plan.point_timeout_s
    return min(plan.point_timeout_s, spec.budget_s + REMOTE_POINT_MARGIN_S)


def plan_host(plan: BenchPlan) -> str:
    """The machine ``plan`` runs on, as its points' keys name it ("" for this one)."""
    return plan.remote.host if plan.remote is not None else ""


def plan_points(plan: BenchPlan) -> list[PointSpec]:
    """Every point of the plan, in run order: by size, then device, then variant, so the series
    of all devices grow together on the live plot. The points in ``plan.skip`` (by key) are left out."""
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
    rows: list[tuple[int, int, int, str, Variant]] = []
    for di, dev in enumerate(devices):
        sizes = plan.sizes if plan.sizes is not None else list(w.default_sizes(dev))
        for size in sizes:
            rows.extend((size, di, vi, dev, v) for vi, v in enumerate(w.variants_on(dev)))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    host = plan_host(plan)
    if plan.skip:  # a resumed run: the points measured before are not measured again
        rows = [r for r in rows if PointKey(host, r[3], r[4].key, r[0]) not in plan.skip]
    first_of_device: dict[str, int] = {}
    for i, row in enumerate(rows):
        first_of_device.setdefault(row[3], i)
    return [
        PointSpec(
            index=i,
            workload=w.name,
            device=dev,
            variant=v.series_name(dev),
            variant_key=v.key,
            size=size,
            repeats=plan.repeats,
            budget_s=plan.time_budget_s,
            cpu_threads=plan.cpu_threads,
            partner=partner.get(dev),
            measure_roof=plan.measure_roof or plan.remeasure_roof,
            # only a device's first point measures again; the later ones find it fresh
            remeasure_roof=plan.remeasure_roof and first_of_device.get(dev) == i,
            warm_l2=plan.warm_l2 and dev != "cpu" and w.l2_switch,
        )
        for i, (size, _, _, dev, v) in enumerate(rows)
    ]


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
        self._worker: AgentProcess | None = None
        self.points: list[BenchPoint] = []
        self.workers_started = 0
        # Why the remote machine could not be reached, once a connection failed to start: the
        # points left are not measured (each would wait for ssh to fail again), but every one
        # gets its row saying why, and a new run resumes from the rows that have no result.
        self.remote_down: str | None = None
        # The roof each device's points were placed under, per (host, device) (``Roof.key``; host
        # set for a remote machine's), asked of the worker once, after the device's first measured
        # point: one roof per (host, device), carried with the results, never re-read here.
        self.roofs: dict[RoofKey, Roof] = {}
        # Told what the run waits for, from the thread iterating ``events()``: its place in a GPU's
        # line (``QueueWait``: who holds it, since when, where this run stands), about once a
        # second; a Slurm job's state and reason as Slurm changes them (``JobState``).
        self.on_waiting: Callable[[Waiting], None] | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def worker_pid(self) -> int | None:
        """The process id of the current worker, None between workers (tests and diagnostics)."""
        with self._lock:
            worker = self._worker
        return worker.pid if worker is not None else None

    @property
    def agent_pid(self) -> int | None:
        """The current agent's own process id as its hello gave it: on the remote machine for a
        remote run (``worker_pid`` is then the local ssh client's), None between workers."""
        with self._lock:
            worker = self._worker
        hello = worker.hello if worker is not None else None
        return hello.pid if hello is not None else None

    def cancel(self) -> None:
        self._cancel.set()
        with self._lock:
            worker = self._worker
        if worker is not None:
            worker.cancel()

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
                self._ask_roof(point)
                yield point
                elapsed = time.monotonic() - started
                finished = done + 1
                eta = elapsed / finished * (self.total_points - finished)
                yield Progress(finished, self.total_points, eta)
        except BaseException:
            # Ctrl-C or a signal turned into an exception on this thread: stop the worker first,
            # so nothing is left computing while the caller reports what finished.
            self.cancel()
            raise
        finally:
            self._shutdown()

    def run_all(self) -> list[BenchPoint]:
        return [e for e in self.events() if isinstance(e, BenchPoint)]

    # --- internals -------------------------------------------------------------------------

    def _going_on(self, spec: PointSpec, words: str) -> str:
        """``words`` ("; a new worker continues the run") where points follow ``spec``; "" after
        the run's last point, whose error row must not promise a continuation that never comes."""
        return words if self._specs and spec is not self._specs[-1] else ""

    def _error(self, spec: PointSpec, message: str) -> BenchPoint:
        w = self.workload
        return error_point(
            w.name,
            spec.variant,
            spec.device,
            spec.size,
            w.size_label(spec.size),
            message,
            w.unit,
            variant_key=spec.variant_key,
            host=plan_host(self.plan),
        )

    def _start_worker(self) -> AgentProcess | None:
        """A ready worker, or None if cancelled; raises RuntimeError if it could not start."""
        if self.plan.remote is not None:
            worker: AgentProcess = RemoteAgentProcess(
                self.plan.remote, label=f"{WORKER_LABEL} on {self.plan.remote.host}", on_job=self._job_changed
            )
        else:
            worker = local_agent(label=WORKER_LABEL)
        with self._lock:
            self._worker = worker
        if self.cancelled:  # cancel() may have run before the worker was registered
            return None
        self.workers_started += 1
        timeout = max(STARTUP_TIMEOUT_S, self.plan.point_timeout_s)
        try:
            worker.start()
            worker.request(
                "bench.prepare",
                {"preload": list(self.workload.preload), "low_priority": self.plan.low_priority},
                timeout_s=timeout,
            )
        except AgentCancelled:
            return None
        except AgentTimeout as exc:
            if self.plan.remote is not None:
                raise RuntimeError(str(exc)) from None
            raise RuntimeError(f"{WORKER_LABEL} did not start in time") from None
        except AgentGone as exc:
            if self.cancelled:
                return None
            if self.plan.remote is not None:  # ssh's or Slurm's reason, in words
                if isinstance(exc, RemoteGone) and exc.reachable and not isinstance(exc, JobEnded):
                    # reached, then lost (the ssh client killed, the link dropped while the
                    # worker imported its modules): the next point connects again
                    raise _LostWhileStarting(str(exc)) from None
                raise RuntimeError(str(exc)) from None
            raise RuntimeError(f"{WORKER_LABEL} {exc.how} while starting") from None
        except AgentError as exc:
            raise RuntimeError(str(exc)) from None
        return worker

    def _gpus(self) -> list[str]:
        return sorted({d for d in self.plan.devices if d.startswith("cuda")})

    def _waiting(self, event: dict) -> None:
        wait = QueueWait.from_event(event)
        if wait is not None and self.on_waiting is not None:
            self.on_waiting(wait)

    def _job_changed(self, job: JobState) -> None:
        if self.on_waiting is not None:
            self.on_waiting(job)

    def _take_gpus(self, worker: AgentProcess, spec: PointSpec) -> BenchPoint | None:
        """Take (or keep) the run's turn on each of its GPUs before a point on one: runs on one GPU
        take turns on that machine, and the wait is said as it goes. An error row when the turn
        cannot be had; None when it is held (or the point is not on a GPU)."""
        if not spec.device.startswith("cuda"):
            return None
        try:
            for device in self._gpus():
                worker.request(
                    "gpu.lock",
                    {"device": device, "workload": self.workload.name},
                    timeout_s=GPU_QUEUE_TIMEOUT_S,
                    on_event=self._waiting,
                    idle_timeout_s=GPU_QUEUE_SILENCE_S if self.plan.remote is not None else None,
                )
        except AgentFailed as exc:  # the agent is fine; the line cannot be joined (in words)
            return self._error(spec, f"not measured: {exc}")
        except AgentTimeout as exc:
            self._replace_worker()
            if isinstance(exc, AgentSilent):
                return self._error(
                    spec,
                    f"not measured: {exc}" + self._going_on(spec, "; the next point connects again"),
                )
            return self._error(
                spec, f"not measured: the GPU was not free within {GPU_QUEUE_TIMEOUT_S:g} s of waiting"
            )
        return None

    def _replace_worker(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.close(grace_s=0)

    def _run_one(self, spec: PointSpec) -> BenchPoint | None:
        with self._lock:
            worker = self._worker
        if worker is None or not worker.alive():
            self._replace_worker()
            if self.remote_down is not None:
                return self._error(spec, f"not measured: {self.remote_down}")
            try:
                worker = self._start_worker()
            except _LostWhileStarting as exc:
                self._replace_worker()
                if self.cancelled:
                    return None
                return self._error(
                    spec, f"{exc} while starting" + self._going_on(spec, "; the next point connects again")
                )
            except RuntimeError as exc:
                self._replace_worker()
                if self.plan.remote is not None:
                    self.remote_down = str(exc)
                return None if self.cancelled else self._error(spec, str(exc))
            if worker is None:
                return None
        timeout = point_deadline_s(self.plan, spec)
        try:
            refused = self._take_gpus(worker, spec)
            if refused is not None:
                return refused
            answer = worker.request("bench.point", spec.to_dict(), timeout_s=timeout)
        except AgentCancelled:
            return None
        except AgentTimeout:
            self._replace_worker()
            if self.cancelled:
                return None
            if self.plan.remote is not None:
                return self._error(
                    spec,
                    f"{self.plan.remote.host} did not answer this point within {timeout:g} s (its budget "
                    f"of {spec.budget_s:g} s and a margin); its agent was stopped"
                    + self._going_on(spec, " and the next point connects again"),
                )
            return self._error(
                spec,
                f"took longer than the time limit of {timeout:g} s; the worker was stopped"
                + self._going_on(spec, " and a new one continues the run"),
            )
        except AgentGone as exc:
            self._replace_worker()
            if self.cancelled:
                return None
            if isinstance(exc, JobEnded) and self.plan.remote is not None:
                # Slurm ended the job (its time limit, a cancel): another would end the same way
                self.remote_down = str(exc)
                ended = exc.job.ended_words(self.plan.remote.host)
                return self._error(spec, f"{ended} while this point was measured{exc.job.ended_hint}")
            if self.plan.remote is not None:  # already a sentence naming the machine and the cause
                return self._error(
                    spec,
                    f"{exc} while measuring this point"
                    + self._going_on(spec, "; the next point connects again"),
                )
            return self._error(
                spec,
                f"the worker process {exc.how} while measuring this point"
                + self._going_on(spec, "; a new worker continues the run"),
            )
        except AgentError as exc:
            self._replace_worker()
            if self.cancelled:
                return None
            return self._error(spec, f"{exc}" + self._going_on(spec, "; a new worker continues the run"))
        data, fatal = answer.get("point"), answer.get("fatal")
        if not isinstance(data, dict) or not isinstance(fatal, bool):
            self._replace_worker()
            return self._error(
                spec,
                f"{WORKER_LABEL} sent no point" + self._going_on(spec, "; a new worker continues the run"),
            )
        if fatal:  # the CUDA context is unusable: the next point gets a fresh worker
            self._replace_worker()
        try:
            point = BenchPoint.from_dict(data)
        except ValueError as exc:  # a NaN or a wrong type: an error row, not a crash
            return self._error(spec, f"the worker reported a value that is not valid: {exc}")
        if not _answers(point, spec):
            self._replace_worker()
            return self._error(
                spec,
                f"{WORKER_LABEL} answered for another point"
                + self._going_on(spec, "; a new worker continues the run"),
            )
        # every point of a remote run says where it was measured (CSV, JSON, saved results), so a
        # resume knows which machine it belongs to; an older agent's point gets the key it answered
        return replace(point, variant_key=spec.variant_key, host=plan_host(self.plan))

    def _ask_roof(self, point: BenchPoint) -> None:
        """After a device's first measured point, the roof the worker placed it under (built once
        there from that machine's stored ceilings, measured first where the plan asked). A roof
        that cannot be had is left out: the points are still drawn, with their own level and share."""
        if not point.ok or (point.host, point.device) in self.roofs or self.cancelled:
            return
        with self._lock:
            worker = self._worker
        if worker is None or not worker.alive():
            return
        try:
            answer = worker.request("bench.roof", {"device": point.device}, timeout_s=ROOF_TIMEOUT_S)
            roof = Roof.from_dict(answer.get("roof"), host=point.host)
            if roof.device == point.device:  # a roof of another device is no roof of these points
                self.roofs[roof.key] = roof
        except AgentFailed:
            pass  # an agent without the method (an older version) or no record there: no roof
        except AgentError:
            self._replace_worker()  # it stopped answering: the next point starts a fresh one
        except ValueError:
            pass  # not a roof: nothing drawn from it

    def _shutdown(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.close(grace_s=0 if self.cancelled else 1.0)


class _LostWhileStarting(RuntimeError):
    """A remote worker was reached and then lost before it was ready: not a remote that is down."""


def _answers(point: BenchPoint, spec: PointSpec) -> bool:
    """Whether the worker's ``point`` is the one ``spec`` asked for: the same workload, device,
    size and variant key (an agent of a version before keys were sent back answers with the
    series name it was given)."""
    if (point.workload, point.device, point.size) != (spec.workload, spec.device, spec.size):
        return False
    if point.variant_key:
        return point.variant_key == spec.variant_key
    return point.variant == spec.variant
