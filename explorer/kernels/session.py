"""The "Your kernel" tab's state, Qt-free: which script, its last trace, whether one is running,
the line picked, and whether the file changed on disk since (the tab runs it again then).

The tab is a view of this model (``explorer.events.Event`` callbacks, the ``LaunchSession``
recipe): it calls ``open``, ``start``/``finish``/``fail`` around the trace it runs in the
background, ``pick`` when a line is clicked, and ``poll`` now and then; it reads the rest back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from explorer.devices.limits import limits_for_device
from explorer.devices.model import Device
from explorer.errors import UserError
from explorer.events import Event
from explorer.kernels.counts import request_model
from explorer.kernels.run import KernelLaunch, KernelReport, LineFigures, check_script
from explorer.launch.occupancy import Occupancy, occupancy
from explorer.launch.texts import occupancy_headline, plain
from explorer.memory.banks import BankConflicts
from explorer.memory.coalescing import Coalescing

#: registers per thread the occupancy assumes: the simulator compiles nothing for a GPU, and 32 is
#: what a small kernel like these takes on most architectures (``launch --regs`` says otherwise)
ASSUMED_REGS = 32


@dataclass
class KernelEvents:
    script: Event = field(default_factory=lambda: Event("script"))  # opened, running, traced or failed
    selection: Event = field(default_factory=lambda: Event("selection"))  # the line picked


@dataclass(frozen=True)
class Heat:
    """How bad one line is, 0 (fine) to 1 (worst), per cost: the tab's colours."""

    sectors: float
    wavefronts: float
    idle_lanes: float


class KernelSession:
    def __init__(self) -> None:
        self.events = KernelEvents()
        self.path: Path | None = None
        self.report: KernelReport | None = None
        self.problem = ""  # one line: why the last run gave no trace
        self.running = False
        self.launch_index = 0
        self.picked: int | None = None  # a source line number
        self._stamp: tuple[int, int] | None = None  # (mtime_ns, size) the last run saw

    # --- the script ------------------------------------------------------------------------------
    def open(self, path_text: str) -> None:
        """Take the script to trace (checked now: one line when it is no readable .py file)."""
        self.path = check_script(path_text)
        self.report, self.problem, self.picked, self.launch_index = None, "", None, 0
        self.events.script.emit()

    def start(self) -> Path:
        """The run begins; returns the script to trace. Raises when there is none or one runs."""
        if self.path is None:
            raise UserError("open a script first (File > Open or drop a .py file here)")
        if self.running:
            raise UserError("the script is already running under the simulator")
        self.running = True
        self._stamp = self._on_disk()
        self.events.script.emit()
        return self.path

    def finish(self, report: KernelReport) -> None:
        self.running, self.report = False, report
        self.problem = report.error or ("" if report.launches else "the script launched no kernel")
        self.launch_index = min(self.launch_index, max(0, len(report.launches) - 1))
        if self.picked is not None and self.line(self.picked) is None:
            self.picked = None
        self.events.script.emit()

    def fail(self, message: str) -> None:
        self.running, self.problem = False, message
        self.events.script.emit()

    def poll(self) -> bool:
        """Whether the script changed on disk since the last run began (the tab runs it again)."""
        if self.path is None or self.running or self._stamp is None:
            return False
        return self._on_disk() != self._stamp

    def _on_disk(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.path) if self.path is not None else None
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size) if info is not None else None

    # --- what the tab shows ----------------------------------------------------------------------
    @property
    def launch(self) -> KernelLaunch | None:
        if self.report is None or not self.report.launches:
            return None
        return self.report.launches[self.launch_index]

    def set_launch(self, index: int) -> None:
        if self.report is not None and 0 <= index < len(self.report.launches):
            self.launch_index, self.picked = index, None
            self.events.script.emit()

    def line(self, number: int) -> LineFigures | None:
        launch = self.launch
        return next((ln for ln in launch.lines if ln.line == number), None) if launch is not None else None

    def pick(self, number: int | None) -> None:
        self.picked = number
        self.events.selection.emit()

    def heat(self, ln: LineFigures) -> Heat:
        """Each cost of the line against the worst line of its launch (the colour's depth)."""
        launch = self.launch
        lines = launch.lines if launch is not None else (ln,)
        worst_s = max((x.excess_sectors for x in lines), default=0)
        worst_w = max((x.excess_wavefronts for x in lines), default=0)
        idle = 0.0 if ln.active_lanes_mean is None else 1.0 - ln.active_lanes_mean / 32.0
        return Heat(
            sectors=ln.excess_sectors / worst_s if worst_s > 0 else 0.0,
            wavefronts=ln.excess_wavefronts / worst_w if worst_w > 0 else 0.0,
            idle_lanes=max(0.0, idle),
        )

    def first_request(self, ln: LineFigures) -> Coalescing | BankConflicts | None:
        """The line's first warp-level request as the Memory page's model has it (its picture)."""
        first = ln.first_access
        if first is None:
            return None
        try:
            return request_model(first["space"], first["lanes"], first["addresses"], int(first["elem_bytes"]))
        except (UserError, KeyError, TypeError, ValueError, ZeroDivisionError):
            return None  # a trace the models cannot draw (a record of an odd size): the words say it

    def occupancy(self, device: Device | None) -> Occupancy | None:
        """The launch's theoretical occupancy on ``device`` from its block size and the shared
        memory its blocks hold, with ``ASSUMED_REGS`` registers per thread (None: no launch, no
        GPU, or a block the GPU cannot take)."""
        launch = self.launch
        if launch is None or device is None or not device.is_gpu:
            return None
        try:
            return occupancy(
                limits_for_device(device), launch.threads_per_block, ASSUMED_REGS, launch.shared_bytes
            )
        except UserError:
            return None

    def occupancy_line(self, device: Device | None) -> str:
        """One line under the summary: the occupancy, its limiter, and what it rests on."""
        launch = self.launch
        if launch is None or device is None:
            return ""
        occ = self.occupancy(device)
        name = device.display_name
        if occ is None or occ.active_blocks_per_sm == 0:
            return f"On {name} a block of {launch.threads_per_block:,} threads and {launch.shared_bytes:,} B of shared memory cannot launch."
        return (
            f"On {name}: {plain(occupancy_headline(occ))}; {launch.threads_per_block:,} threads and "
            f"{launch.shared_bytes:,} B of shared memory per block, {ASSUMED_REGS} registers per thread "
            "assumed (an estimate: the simulator compiles no GPU code)"
        )

    def summary(self) -> str:
        """One line under the table: what ran, or why nothing did."""
        if self.path is None and self.problem:
            return self.problem
        if self.path is None:
            return "Open a numba script (or drop one here): it runs as python FILE.py would, under the CUDA simulator."
        if self.running:
            return f"Running {self.path.name} under the CUDA simulator..."
        if self.problem:
            return self.problem
        launch = self.launch
        if launch is None:
            return f"{self.path.name} has not run yet."
        count = len(self.report.launches) if self.report is not None else 1
        return (
            f"kernel {launch.kernel}: grid {launch.grid}, block {launch.block} "
            f"(launch {self.launch_index + 1} of {count}); counts per source line, Nsight Compute's definitions"
        )
