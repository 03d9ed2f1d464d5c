"""The Benchmarks page's state, Qt-free: which workload is shown, the run under way, its results.

A ``BenchSession`` is to the Benchmarks page what ``explorer.launch.session.LaunchSession`` is to
the visualizer: it owns what the page shows and emits an event when that changes; the widgets
under ``explorer/ui/bench`` read it and call its methods, never each other. The form (workload,
devices, sizes, budget) builds a ``BenchPlan``; the session decides whether it may run, the view
starts the worker's stream and hands each thing the stream says back to the session.

What it owns:

- the **results**: the points of one run per workload, with their roofs (``RunResults``), and
  which workload is **shown** (the page never shows one workload's points under another's title);
- the **run**: idle or running or stopping, the plan under way and the last one started here
  (what Resume measures the rest of), the points the engine counted, the time left, what the run
  waits for, and how the last run ended (finished, stopped, failed);
- the **bar**: the progress bar's value, range and words, and the line beside it;
- the **error**: one line for the user (a refused start, a run that failed, a save that could
  not be written), or "";
- the **roof shown** beside the run's own: a catalog GPU's spec-sheet roof, by device key;
- the **recording** of a lesson step, drawn beside the run while its workload is shown.

Events (``session.events``; callbacks take no argument): ``shown`` (another workload is shown, or
its run was replaced: reload everything), ``point`` (the shown run gained one point at its end),
``run`` (a run started or ended, or Stop was asked), ``progress`` (the bar, the time left or the
wait changed), ``message`` (the error line changed), ``roofs`` (the shown run's roofs or the
catalog roof changed), ``recorded`` (the recording changed) and ``resume`` (what Resume offers
changed). Each is emitted exactly when what it names changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from explorer.bench.fmt import eta_text
from explorer.bench.results import BenchPoint
from explorer.bench.run_results import RunResults
from explorer.bench.runner import BenchPlan, Progress, Waiting
from explorer.errors import UserError
from explorer.events import Event
from explorer.roofs.model import Roof
from explorer.words import count

Phase = Literal["idle", "running", "stopping"]
Outcome = Literal["", "finished", "stopped", "failed"]


@dataclass(frozen=True)
class Bar:
    """The progress bar as the page shows it: ``maximum`` 0 is a busy bar (no total yet)."""

    value: int = 0
    maximum: int = 1
    text: str = "no run yet"
    tooltip: str = ""


@dataclass(frozen=True)
class Recording:
    """A lesson step's recorded results: measured on the lesson maker's machine (``device`` in
    words), on ``date``; never mistaken for a run made here."""

    device: str
    date: str
    points: tuple[BenchPoint, ...] = ()

    def __post_init__(self) -> None:
        if not self.date.strip():
            raise UserError("a recording needs the date it was measured on")
        stray = [p for p in self.points if not isinstance(p, BenchPoint)]
        if stray:
            raise UserError(f"a recording holds benchmark points only, not {type(stray[0]).__name__}")


@dataclass(frozen=True)
class ResumeOffer:
    """What Resume offers: how many points the last run left, and the button's words."""

    left: int = 0
    text: str = ""
    tooltip: str = ""


def one_line(text: str) -> str:
    """The first non-empty line of ``text``, stripped: a message never spills a traceback."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class BenchEvents:
    """The session's events; see the module's docstring for when each is emitted."""

    def __init__(self) -> None:
        self.shown = Event("shown")
        self.point = Event("point")
        self.run = Event("run")
        self.progress = Event("progress")
        self.message = Event("message")
        self.roofs = Event("roofs")
        self.recorded = Event("recorded")
        self.resume = Event("resume")


@dataclass
class _RunState:
    plan: BenchPlan | None = None
    total: int = 0
    eta_s: float | None = None
    waiting: Waiting | None = None
    cancelled: bool = False
    failed: bool = False


class BenchSession:
    """The Benchmarks page's model: shown workload, run lifecycle, results, bar, error (no Qt).

    ``tell`` receives a sentence the user must read once (a damaged results file moved aside,
    finished points no variant of today matches): the window's notices. It is never called with
    an empty one.
    """

    def __init__(self, tell: Callable[[str], object] | None = None) -> None:
        self.events = BenchEvents()
        self.results = RunResults()
        self._teller = tell
        self.phase: Phase = "idle"
        self.outcome: Outcome = ""
        self.last_plan: BenchPlan | None = None
        self._run = _RunState()
        self.bar = Bar()
        self.eta = ""  # the line beside the bar while a run goes on
        self.message = ""
        self.catalog_key = ""
        self.recording: Recording | None = None
        self.resume_offer = ResumeOffer()

    # --- state read by the views ------------------------------------------------------------
    @property
    def running(self) -> bool:
        """A run is under way (or stopping): the form is locked and Start refuses."""
        return self.phase != "idle"

    @property
    def shown(self) -> str:
        return self.results.shown

    @property
    def points(self) -> list[BenchPoint]:
        """The shown workload's run, in the order its points arrived."""
        return self.results.points

    @property
    def plan(self) -> BenchPlan | None:
        """The plan of the run under way (None while idle)."""
        return self._run.plan if self.running else None

    @property
    def total_points(self) -> int:
        """The points of the run under way, as the engine counted them (0 before it says)."""
        return self._run.total

    @property
    def waiting(self) -> Waiting | None:
        """What the run waits for (another run's turn on the GPU, its Slurm job), until a point or
        a progress record with a point done replaces it."""
        return self._run.waiting

    @property
    def wait_text(self) -> str:
        """The engine's whole sentence about the wait, shown under the bar ("" when none)."""
        return self._run.waiting.message if self._run.waiting is not None else ""

    def roofs(self) -> list[Roof]:
        """The roofs the shown run's points were placed under."""
        return self.results.roofs_of()

    def roofs_shown(self, roof_here: Callable[[str], Roof | None]) -> list[Roof]:
        """The roofs the roofline and the bandwidth view draw: for each (machine, device) of the
        shown run, the roof its points were placed under; where the run carries none (a file of an
        older version, a worker that could not say), this machine's (``roof_here(device)``, None
        when that device is not here), kept with the run from then on; with no point yet, this
        machine's CPU roof."""
        points = self.points
        carried = {(r.host, r.device): r for r in self.results.roofs_of()}
        wanted = list(dict.fromkeys((p.host, p.device) for p in points)) or [("", "cpu")]
        roofs: list[Roof] = []
        for host, device in wanted:
            roof = carried.get((host, device))
            if roof is None and not host:
                roof = roof_here(device)
                if roof is not None and points:
                    self.results.add_roof(roof)
            if roof is not None:
                roofs.append(roof)
        return roofs

    def summary(self) -> str:
        """The status bar's sentence about the run that just ended ("" before any ended)."""
        if not self.outcome:
            return ""
        done = len(self.points)
        errors = sum(1 for p in self.points if p.error)
        noisy = self.results.noisy_count()
        word = "stopped" if self.outcome == "stopped" else "finished"
        return (
            f"Benchmark {word}: {done} points"
            + (f", {errors} with errors (see the red rows)" if errors else "")
            + (f", {noisy} disturbed by other programs (tinted rows, hollow markers)" if noisy else "")
        )

    # --- setters --------------------------------------------------------------------------
    def show(self, workload: str) -> bool:
        """Show ``workload``'s own run (or nothing yet); ``True`` when that changed what is shown.
        An empty name is refused with one line."""
        if not isinstance(workload, str) or not workload.strip():
            raise UserError(f"a workload to show must be named, not {workload!r}")
        changed = self.results.show(workload)
        if changed:
            self._shown_changed()
        return changed

    def set_run(self, points: Sequence[BenchPoint], roofs: Sequence[Roof] | None = None) -> None:
        """Replace the shown workload's run with ``points`` (all of that workload; another
        workload's point is refused with one line naming it)."""
        if not self.shown:
            raise UserError("choose a workload before giving it a run")
        try:
            self.results.set_run(self.shown, points, roofs)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        self._shown_changed()

    def set_catalog(self, key: str) -> None:
        """The catalog GPU whose spec-sheet roof the roofline draws beside the run's ("": none)."""
        if not isinstance(key, str):
            raise UserError(f"a catalog device is named by its key, not {key!r}")
        if key != self.catalog_key:
            self.catalog_key = key
            self.events.roofs.emit()

    def set_recording(self, recording: Recording | None) -> None:
        """A lesson step's recorded results (None: take them away)."""
        if recording is not None and not isinstance(recording, Recording):
            raise UserError(f"a recording is a Recording, not {type(recording).__name__}")
        if recording != self.recording:
            self.recording = recording
            self.events.recorded.emit()

    def recorded_points(self) -> list[BenchPoint]:
        """The recording's measured points of the shown workload (none without a recording)."""
        rec = self.recording
        if rec is None:
            return []
        return [p for p in rec.points if p.workload == self.shown and p.error is None]

    def recorded_mark(self) -> str:
        """ "recorded on NVIDIA H100 80GB HBM3, 2026-11-26" for the shown workload's recorded
        points ("" when there are none)."""
        points = self.recorded_points()
        if self.recording is None or not points:
            return ""
        return recorded_mark(self.recording, points)

    def show_error(self, text: str) -> None:
        """Say ``text`` (its first line) as the page's error line; "" clears it."""
        line = one_line(text)
        if line != self.message:
            self.message = line
            self.events.message.emit()

    # --- a run's lifecycle ------------------------------------------------------------------
    def start(self, plan: BenchPlan, kept: Sequence[BenchPoint] = (), *, measuring: bool = False) -> bool:
        """Begin ``plan`` (``kept``: the finished points of the run it resumes, shown first).
        ``False``, with the reason as the error line, while a run or a ceilings measurement goes
        on. The caller starts the worker's stream only on ``True``."""
        if not isinstance(plan, BenchPlan):
            raise UserError(f"a run starts from a BenchPlan, not {type(plan).__name__}")
        if self.running:
            self.show_error("a benchmark is already running: stop it first")
            return False
        if measuring:  # a run beside it would disturb both: one at a time
            self.show_error("the ceilings are being measured: wait for it, or stop it, first")
            return False
        problem = plan_problem(plan)
        if problem:
            self.show_error(problem)
            return False
        stray = sorted({p.workload for p in kept} - {plan.workload})
        if stray:
            raise UserError(f"a {plan.workload} run cannot keep points of {', '.join(stray)}")
        self.show_error("")
        self.results.start_run(plan.workload)
        if kept:
            self.results.set_run(plan.workload, kept)
        if not plan.skip:
            self.last_plan = plan
        self.phase, self.outcome = "running", ""
        self._run = _RunState(plan=plan)
        self.eta = ""
        where = plan.remote.host if plan.remote is not None else ""
        starting = (
            f"connecting to {where} and starting the worker there…"
            if where
            else "starting the worker process…"
        )
        self.bar = Bar(0, 0, starting)
        self._update_resume()
        self.events.shown.emit()
        self.events.roofs.emit()
        self.events.run.emit()
        self.events.progress.emit()
        return True

    def stop(self) -> bool:
        """Ask the run to stop; ``True`` when there is one to stop (the view then cancels its
        stream; the run ends when the stream says so)."""
        if self.phase != "running":
            return False
        self.phase = "stopping"
        self._run.cancelled = True
        self.bar = Bar(self.bar.value, self.bar.maximum, "stopping…")
        self.events.run.emit()
        self.events.progress.emit()
        return True

    def progress(self, progress: Progress) -> None:
        """The engine's count: ``done`` of ``total`` points, and the time left."""
        if not self.running:
            return  # a late record of a run that has ended
        done, total = progress.done, progress.total
        if not (isinstance(done, int) and isinstance(total, int)) or done < 0 or total < 0 or done > total:
            raise UserError(f"progress {done} of {total} points: counts run from 0 up to the total")
        if progress.eta_s is not None and not (math.isfinite(progress.eta_s) and progress.eta_s >= 0):
            raise UserError(f"time left {progress.eta_s!r} s: must be a finite number of seconds >= 0")
        self._run.total, self._run.eta_s = total, progress.eta_s
        if done:
            self._run.waiting = None  # a point came: whatever the run waited for is over
        text = "stopping…" if self.phase == "stopping" else f"{done} / {total} points"
        self.bar = Bar(done, max(total, 1), text)
        self.eta = eta_text(progress.eta_s)
        self.events.progress.emit()

    def wait(self, waiting: Waiting) -> None:
        """What the run waits for, as the engine said it: the few words on the bar, the whole
        sentence beside it, until the next point or progress record."""
        if not self.running:
            return
        self._run.waiting = waiting
        self.bar = Bar(self.bar.value, self.bar.maximum, waiting.short, waiting.message)
        self.eta = ""
        self.events.progress.emit()

    def add_point(self, point: BenchPoint) -> bool:
        """One point of the run (measured, or an error row); ``True`` when it is the shown
        workload's (a late point of a workload no longer shown is kept, not drawn)."""
        if not isinstance(point, BenchPoint):
            raise UserError(f"a run's point is a BenchPoint, not {type(point).__name__}")
        if not self.results.add(point):
            return False
        self.events.point.emit()
        return True

    def add_roof(self, roof: Roof, workload: str | None = None) -> None:
        """The roof a device's points of the run were placed under (its first one wins); what it
        must tell the user is said once."""
        workload = workload or (self._run.plan.workload if self._run.plan is not None else self.shown)
        self.results.add_roof(roof, workload)
        self._tell(roof.notice)
        if workload == self.shown:
            self.events.roofs.emit()

    def measured_again(self, roofs: Sequence[Roof]) -> None:
        """This machine's ceilings were measured anew: every run's points of those devices are
        judged against the new roofs (the shown run reloads when it changed)."""
        changed = False
        for roof in roofs:
            changed |= self.results.measured_again(roof)
        if changed:
            self.events.shown.emit()
        self.events.roofs.emit()

    def fail(self, text: str) -> None:
        """The run could not go on: its reason becomes the one error line (never a traceback)."""
        self._run.failed = True
        self.show_error(one_line(text) or "the benchmark stopped without saying why")

    def end(self) -> None:
        """The stream ended (finished, stopped or failed): the bar says how far it got, the
        points are kept for the next start, and Resume is offered for what is left."""
        if not self.running:
            return
        run = self._run
        done = len(self.points)
        total = run.total or done
        self.outcome = "stopped" if run.cancelled else "failed" if run.failed else "finished"
        self.phase = "idle"
        run.waiting = None
        self.eta = ""
        word = "stopped" if run.cancelled else "done"
        maximum = self.bar.maximum or max(run.total, 1)
        value = self.bar.value if self.bar.maximum else min(done, maximum)
        self.bar = Bar(value, maximum, f"{word}: {done} / {total} points")
        self.save_last()
        self._update_resume()
        self.events.progress.emit()
        self.events.run.emit()

    # --- resume -------------------------------------------------------------------------------
    def resume_left(self) -> int:
        """How many points of the last run started here have no result (0: none, or no such run)."""
        plan = self.last_plan
        if plan is None or self.running:
            return 0
        from explorer.bench.resume import resume

        try:
            return resume(plan, self.results.points_of(plan.workload)).left
        except UserError:
            return 0

    def resume(self, *, measuring: bool = False) -> BenchPlan | None:
        """Start the rest of the last run started here, keeping its finished points; the plan
        started (the view runs its stream), or None with the reason as the error line."""
        plan = self.last_plan
        if self.running or plan is None:
            return None
        from explorer.bench.resume import resume

        try:
            resumed = resume(plan, self.results.points_of(plan.workload))
        except UserError as exc:
            self.show_error(str(exc))
            self._update_resume()
            return None
        self._tell(resumed.unmatched)  # finished points no variant of today matches
        return resumed.plan if self.start(resumed.plan, resumed.kept, measuring=measuring) else None

    def _update_resume(self) -> None:
        """Offer Resume while the shown run is the last one started here and it left points."""
        plan = self.last_plan
        left = self.resume_left() if plan is not None and plan.workload == self.shown else 0
        offer = ResumeOffer()
        if left and plan is not None:
            where = f" on {plan.remote.host}" if plan.remote is not None else ""
            offer = ResumeOffer(
                left,
                f"Resume ({left} left)",
                f"Measure only what this run has left{where}: {count(left, 'point')} without a result "
                "(error rows, points not reached); the finished points are kept",
            )
        if offer != self.resume_offer:
            self.resume_offer = offer
            self.events.resume.emit()

    # --- persistence --------------------------------------------------------------------------
    def save_last(self) -> bool:
        """Keep the shown run for the next start; ``False``, with the reason as the error line,
        when it cannot be written."""
        if not self.points:
            return False
        from explorer.bench.results import save_last

        try:
            save_last(self.points, self.results.roofs_of())
        except OSError as exc:
            self.show_error(
                f"could not keep these results for next time in {exc.filename or 'the data folder'}: "
                f"{exc.strerror or exc}"
            )
            return False
        except ValueError as exc:  # a value JSON cannot hold (NaN): the old file stays
            self.show_error(f"could not keep these results for next time: {exc}")
            return False
        return True

    def restore_last(self) -> str | None:
        """The last run kept on disk, as its workload's run (shown by the caller when the form
        still offers that workload); its workload, or None when there is none. A damaged file is
        moved aside and the user told once."""
        workload, notice = self.results.restore_last()
        self._tell(notice)
        if workload is not None and workload == self.shown:
            self._shown_changed()
        return workload

    def show_restored(self) -> None:
        """The bar over a run restored from disk: how many points, measured when."""
        done = len(self.points)
        if not done or self.running:
            return
        self.bar = Bar(done, done, f"last results: {done} points, measured {self.results.measured_words()}")
        self.events.progress.emit()

    # --- internals ----------------------------------------------------------------------------
    def _tell(self, text: str) -> None:
        if text and self._teller is not None:
            self._teller(text)

    def _shown_changed(self) -> None:
        self._update_resume()
        if not self.running:
            done = len(self.points)
            self.bar = Bar(
                done,
                max(done, 1),
                f"{done} points from this workload's last run" if done else "no run of this workload yet",
            )
        self.events.shown.emit()
        self.events.roofs.emit()
        self.events.recorded.emit()
        self.events.progress.emit()


def plan_problem(plan: BenchPlan) -> str:
    """Why ``plan`` cannot run, in one line naming the value and the limit ("" when it can): what
    the page can tell before a worker starts. The engine checks the rest in its own words."""
    if not plan.devices:
        return "Choose at least one device."
    if plan.sizes is not None:
        if not plan.sizes:
            return "the sizes are empty: give at least one, or leave the workload's defaults"
        bad = next((n for n in plan.sizes if n < 1), None)
        if bad is not None:
            return f"size {bad} is not a size: each must be at least 1"
    if not (math.isfinite(plan.time_budget_s) and plan.time_budget_s > 0):
        return f"time budget {plan.time_budget_s!r} s per point: must be more than 0"
    return ""


def recorded_mark(recording: Recording, points: Sequence[BenchPoint]) -> str:
    """ "recorded on NVIDIA H100 80GB HBM3, 2026-11-26": the recording's device, short (the name
    its GPU points carry, else its words up to the first bracket or comma), and its date."""
    from explorer.bench.judge import recorded_device_name

    gpus = list(dict.fromkeys(p.device for p in points if p.device != "cpu"))
    if gpus:
        device = recorded_device_name(list(points), gpus[0])
    else:
        device = recording.device.split(" (", 1)[0].split(",", 1)[0].strip() or recording.device
    return f"recorded on {device}, {recording.date}"
