"""Latency hiding: how many warps keep a warp scheduler busy while their loads are in flight.

Occupancy matters because of Little's law: to keep issuing one instruction per cycle while each
warp waits L cycles for its data, a scheduler needs enough other warps with work to do in the
meantime (PMPP ch. 4-5; Volkov, "Understanding Latency Hiding on GPUs", UC Berkeley 2016). This
module simulates one SM's warp schedulers cycle by cycle, in the simplest loop that shows it:

* the SM has S schedulers (one per SM sub-partition: 4 on every GPU since Maxwell, 2 on GP100);
  resident warp w is fixed to scheduler w mod S;
* every warp loops forever: one load, then K arithmetic instructions that need the loaded value
  but not each other. The load is issued in cycle c; the warp then waits L cycles (c+1 .. c+L) and
  issues its first arithmetic instruction in cycle c+L+1, one per cycle after that, then the next
  load. Alone, a warp issues K+1 instructions every L+K+1 cycles;
* each cycle, each scheduler issues one instruction from one of its eligible warps: ``gto``
  (greedy then oldest: the warp it issued last, while it can go on; else the oldest) or ``lrr``
  (loose round robin: the next eligible warp after the one it issued last).

So with N warps on a scheduler the share of cycles it issues is, in the steady state,

    U(N) = min(1, N (K+1) / (L+K+1)),   and it reaches 1 at  N* = ceil((L+K+1) / (K+1))  warps.

That is gto's steady state, exactly. lrr's warps take turns, so they issue their loads in
successive cycles and wait out L together: U = min(1, N (K+1) / (N K + L + 1)), 1 only from
N = L + 1. A scheduler with no warp (fewer warps than schedulers) issues nothing: it counts as 0.

A measured latency (what a pointer chase reports: cycles from a load to the next load that needs
its value) is L + 1 in this loop, so a published latency of 4 cycles is L = 3: then N* = 4 warps per
scheduler, 16 per SM on 4 schedulers, the CUDA programming guide's figure for 4-cycle arithmetic.

Per cycle, each warp is issuing, stalled on memory, eligible (ready, not picked) or idle (a warp
slot of the SM no resident warp fills): ``LatencyRun.states`` keeps them for the first cycles, for
the animation. Qt-free; numpy only.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from explorer.devices.limits import ArchLimits
from explorer.inputs import InputError, shown
from explorer.launch.occupancy import Occupancy
from explorer.roofs.latency import LatencyLadder
from explorer.words import count, percent

POLICIES = ("gto", "lrr")
POLICY_WORDS = {
    "gto": "greedy then oldest: the same warp while it can issue, else the oldest ready one",
    "lrr": "loose round robin: the next ready warp after the one issued last",
}
IDLE, STALLED, ELIGIBLE, ISSUING = 0, 1, 2, 3
STATE_NAMES = ("idle", "stalled on memory", "eligible", "issuing")
#: limits of what a request may ask (each a message naming the value and the limit)
#: warps one simulated SM may hold: real SMs hold at most 64, but one scheduler with hundreds of
#: warps is how the model reaches N* for a DRAM latency with little arithmetic (L = 650, K = 0: 651)
MAX_WARPS = 1024
#: warps per SM on any NVIDIA GPU so far (the curve's range)
SM_MAX_WARPS = 64
MAX_SCHEDULERS = 8
MAX_LATENCY = 10_000  # cycles: far past any DRAM latency measured (about 1000 on the slowest)
MAX_ALU = 1_000
MIN_CYCLES = 100
#: the most cycles a run may ask for, unless the warps and the loop need more to settle: then the
#: default run's length is the limit (``LatencyConfig.cycles_limit``), so no legal launch is refused
MAX_CYCLES = 200_000
#: cycles whose per-warp states are kept for the animation
RECORD_CYCLES = 4_096


@dataclass(frozen=True)
class LatencyConfig:
    """One SM: ``warps`` resident warps over ``schedulers`` schedulers, each warp looping one load
    (L = ``mem_latency`` cycles of waiting) and ``alu`` (K) arithmetic instructions.

    ``cycles``: how long to simulate (0: enough for a steady state, ``default_cycles``).
    ``warp_slots``: the SM's warp slots, drawn as idle where no warp is resident (0: ``warps``)."""

    warps: int
    mem_latency: int
    alu: int
    schedulers: int = 4
    policy: str = "gto"
    cycles: int = 0
    warp_slots: int = 0

    def __post_init__(self) -> None:
        problems = []
        for name, value, low, high in (
            ("warps", self.warps, 1, MAX_WARPS),
            ("memory latency L", self.mem_latency, 0, MAX_LATENCY),
            ("arithmetic instructions K", self.alu, 0, MAX_ALU),
            ("schedulers", self.schedulers, 1, MAX_SCHEDULERS),
        ):
            if not low <= value <= high:
                problems.append(f"{name} is {value}; it must be from {low} to {high}")
        if self.cycles and not problems and not MIN_CYCLES <= self.cycles <= self.cycles_limit:
            needs = (
                ""
                if self.cycles_limit == MAX_CYCLES
                else f" (what {self.warps} warps with L = {self.mem_latency} and K = {self.alu} need to settle)"
            )
            problems.append(
                f"cycles is {self.cycles:,}; it must be from {MIN_CYCLES} to {self.cycles_limit:,}{needs}"
            )
        if self.policy not in POLICIES:
            problems.append(f"policy {shown(self.policy)} is not one of {', '.join(POLICIES)}")
        if self.warp_slots and self.warp_slots < self.warps:
            problems.append(f"{self.warps} warps do not fit the SM's {self.warp_slots} warp slots")
        if problems:
            raise InputError(problems)

    @property
    def period(self) -> int:
        """L + K + 1: the cycles one warp alone needs for one trip round its loop."""
        return self.mem_latency + self.alu + 1

    @property
    def slots(self) -> int:
        return self.warp_slots or self.warps

    def warps_on(self, scheduler: int) -> int:
        """Resident warps fixed to ``scheduler`` (warp w goes to scheduler w mod S)."""
        return len(range(scheduler, self.warps, self.schedulers))

    @property
    def lrr_round(self) -> int:
        """lrr's period on the busiest scheduler: its N warps take one turn each, so they issue
        their loads together and wait out L together; a round is N (K+1) issues and the cycles
        nobody can issue in, max(N (K+1), N K + L + 1) cycles."""
        n = self.warps_on(0)
        return max(n * (self.alu + 1), n * self.alu + self.mem_latency + 1)

    @property
    def window_period(self) -> int:
        """The period the steady state repeats with: a loop period for gto, a round for lrr."""
        return self.lrr_round if self.policy == "lrr" else self.period

    @property
    def warm_cycles(self) -> int:
        """The start-up. gto: the warps have settled once the busiest scheduler has gone round all
        its warps twice (and at least two loop periods have passed). lrr: its warps go in step from
        the first cycle, so one round is enough."""
        if self.policy == "lrr":
            return self.lrr_round
        return 2 * max(self.period, self.warps_on(0) * (self.alu + 1))

    @property
    def default_cycles(self) -> int:
        """Enough for the start-up to settle and a dozen loop periods (at least one whole lrr round)
        after it. No cap: 1,024 warps on one scheduler with L and K at their limits need about 2.2
        million cycles (seconds)."""
        return max(2_000, self.warm_cycles + max(12 * self.period, self.window_period))

    @property
    def cycles_limit(self) -> int:
        """The most ``cycles`` may ask: ``MAX_CYCLES``, or the default run where that is longer."""
        return max(MAX_CYCLES, self.default_cycles)

    @property
    def run_cycles(self) -> int:
        return self.cycles or self.default_cycles


#: the longest run any config may ask for: the default run of the most warps on one scheduler
MOST_CYCLES = max(LatencyConfig(MAX_WARPS, MAX_LATENCY, MAX_ALU, 1, p).default_cycles for p in POLICIES)


def model_utilization_per_scheduler(warps: int, mem_latency: int, alu: int) -> float:
    """U(N) = min(1, N (K+1) / (L+K+1)): Little's law for one scheduler with N warps."""
    return min(1.0, warps * (alu + 1) / (mem_latency + alu + 1))


def warps_needed_per_scheduler(mem_latency: int, alu: int) -> int:
    """N* = ceil((L+K+1) / (K+1)): the fewest warps on one scheduler that keep it issuing every cycle."""
    return -(-(mem_latency + alu + 1) // (alu + 1))


def lrr_utilization_per_scheduler(warps: int, mem_latency: int, alu: int) -> float:
    """lrr's steady state, min(1, N (K+1) / (N K + L + 1)): each ready warp gets one turn in order,
    so the N warps issue their loads in N successive cycles and wait out L together; a round is
    N (K+1) issues and L + 1 - N idle cycles, none once N >= L + 1. (0 for N = 0.)"""
    return min(1.0, warps * (alu + 1) / (warps * alu + mem_latency + 1))


def model_utilization(config: LatencyConfig) -> float:
    """The closed form for the whole SM: the mean of U over its schedulers' warp counts."""
    return (
        sum(
            model_utilization_per_scheduler(config.warps_on(s), config.mem_latency, config.alu)
            for s in range(config.schedulers)
        )
        / config.schedulers
    )


def lrr_utilization(config: LatencyConfig) -> float:
    """lrr's steady state for the whole SM: the mean over its schedulers' warp counts."""
    per = (
        lrr_utilization_per_scheduler(config.warps_on(s), config.mem_latency, config.alu)
        for s in range(config.schedulers)
    )
    return sum(per) / config.schedulers


#: why the closed form is gto's, and what lrr does instead (``--policy lrr`` says it)
LRR_NOTE = (
    "the closed form is exact for gto's steady state (the warp gto keeps issues its K instructions "
    "while the others' loads are in flight); lrr gives each ready warp one turn in order, so the "
    "warps issue their loads in successive cycles and wait out L together"
)


@dataclass(frozen=True, eq=False)
class SchedulerRun:
    """One scheduler's run: the cycles it issued in, and its first cycles' picks and warp states."""

    warps: int
    cycles: int
    issue_cycles: np.ndarray  # int64, every cycle it issued in
    picks: np.ndarray  # int16 per recorded cycle: the local warp issued, -1 for none
    loads: np.ndarray  # bool per recorded cycle: the instruction issued was a load
    states: np.ndarray  # uint8 [recorded cycles, warps]: STALLED, ELIGIBLE or ISSUING


@lru_cache(maxsize=256)
def run_scheduler(warps: int, mem_latency: int, alu: int, policy: str, cycles: int) -> SchedulerRun:
    """Simulate one scheduler with ``warps`` warps for ``cycles`` cycles (see the module docstring).

    The loop steps over the cycles in which something can issue and jumps over the ones in which
    every warp waits, so a long latency costs no more than a short one."""
    record = min(cycles, RECORD_CYCLES)
    states = np.full((record, warps), ELIGIBLE, dtype=np.uint8)
    picks = np.full(record, -1, dtype=np.int16)
    loads = np.zeros(record, dtype=bool)
    issued: list[int] = []
    step = [0] * warps  # 0: the warp's next instruction is its load; k: its k-th arithmetic one
    eligible = [True] * warps
    # the eligible warps: for gto a heap of warp numbers (the oldest on top; entries of warps that
    # have since stalled are dropped when they reach the top), for lrr a sorted list
    ready_heap: list[int] = list(range(warps))
    ready_sorted: list[int] = list(range(warps))
    waiting: list[tuple[int, int]] = []  # (first cycle it can issue in, warp) for stalled warps
    gto = policy == "gto"
    last = -1
    t = 0
    while t < cycles:
        while waiting and waiting[0][0] <= t:
            _, w = heapq.heappop(waiting)
            eligible[w] = True
            if gto:
                heapq.heappush(ready_heap, w)
            else:
                bisect.insort(ready_sorted, w)
        pick = -1
        if gto:
            if last >= 0 and eligible[last]:
                pick = last
            else:
                while ready_heap and not eligible[ready_heap[0]]:
                    heapq.heappop(ready_heap)
                if ready_heap:
                    pick = ready_heap[0]
        elif ready_sorted:
            pick = ready_sorted[bisect.bisect_right(ready_sorted, last) % len(ready_sorted)]
        if pick < 0:
            if not waiting:  # no warp at all (a scheduler of an SM with fewer warps): it stays idle
                break
            t = waiting[0][0]  # every warp waits: nothing issues until the first one can
            continue
        issued.append(t)
        if t < record:
            picks[t] = pick
            states[t, pick] = ISSUING
        if step[pick] == 0:  # the load: the warp waits L cycles for its value
            if t < record:
                states[t + 1 : min(t + 1 + mem_latency, record), pick] = STALLED
                loads[t] = True
            if mem_latency > 0:
                eligible[pick] = False
                if not gto:
                    del ready_sorted[bisect.bisect_left(ready_sorted, pick)]
                heapq.heappush(waiting, (t + mem_latency + 1, pick))
            step[pick] = 1 if alu > 0 else 0
        else:
            step[pick] = step[pick] + 1 if step[pick] < alu else 0
        last = pick
        t += 1
    return SchedulerRun(warps, cycles, np.asarray(issued, dtype=np.int64), picks, loads, states)


@dataclass(frozen=True, eq=False)
class LatencyRun:
    """A simulated SM: each scheduler's run, the steady-state utilization and the closed form."""

    config: LatencyConfig
    schedulers: tuple[SchedulerRun, ...]
    window: tuple[int, int]  # the cycles the steady-state utilization is measured over

    @property
    def cycles(self) -> int:
        return self.config.run_cycles

    @property
    def utilization(self) -> float:
        """Issue slots used / issue slots, over ``window`` (whole loop periods after the start-up)."""
        lo, hi = self.window
        used = sum(
            int(np.count_nonzero((r.issue_cycles >= lo) & (r.issue_cycles < hi))) for r in self.schedulers
        )
        return used / ((hi - lo) * len(self.schedulers))

    @property
    def model_utilization(self) -> float:
        return model_utilization(self.config)

    @property
    def warps_needed_per_scheduler(self) -> int:
        return warps_needed_per_scheduler(self.config.mem_latency, self.config.alu)

    @property
    def warps_needed(self) -> int:
        """Warps per SM that hide the latency: N* on every scheduler."""
        return self.config.schedulers * self.warps_needed_per_scheduler

    @property
    def recorded_cycles(self) -> int:
        return min(self.cycles, RECORD_CYCLES)

    def states(self) -> np.ndarray:
        """uint8 [recorded cycles, the SM's warp slots]: each warp's state per cycle, IDLE for the
        slots no resident warp fills. Column w is warp w (on scheduler w mod S)."""
        c = self.config
        out = np.full((self.recorded_cycles, c.slots), IDLE, dtype=np.uint8)
        for s, run in enumerate(self.schedulers):
            out[:, s : c.warps : c.schedulers] = run.states
        return out

    def picks(self) -> np.ndarray:
        """int16 [recorded cycles, schedulers]: the warp (SM-wide number) each scheduler issued, -1 none."""
        c = self.config
        out = np.full((self.recorded_cycles, c.schedulers), -1, dtype=np.int16)
        for s, run in enumerate(self.schedulers):
            local = run.picks.astype(np.int32)
            out[:, s] = np.where(local >= 0, local * c.schedulers + s, -1)
        return out

    def issued_by(self, cycle: int) -> int:
        """Instructions the SM issued in cycles 0 .. cycle - 1 (the view's running count)."""
        return sum(int(np.searchsorted(r.issue_cycles, cycle)) for r in self.schedulers)

    @property
    def lrr_utilization(self) -> float:
        return lrr_utilization(self.config)

    def warnings(self) -> list[str]:
        """What the figures mean for a real SM: N* past the warps an SM can hold."""
        c = self.config
        limit = c.warp_slots or SM_MAX_WARPS
        if self.warps_needed <= limit:
            return []
        held = "this SM's" if c.warp_slots else "any NVIDIA SM's"
        return [
            f"N* = {self.warps_needed} warps per SM is more than {held} {limit} warp slots: occupancy "
            "alone cannot hide this latency; more independent instructions per load (K) can"
        ]

    def summary_lines(self) -> list[str]:
        c = self.config
        per = ", ".join(str(c.warps_on(s)) for s in range(c.schedulers))
        lrr = []
        if c.policy == "lrr":
            lrr = [
                f"{LRR_NOTE}:",
                f"lrr's steady state: N (K+1) issues every N K + L + 1 cycles, U = min(1, N (K+1) / "
                f"(N K + L + 1)) = {percent(self.lrr_utilization)} here; it hides L only from N = L + 1 = "
                f"{c.mem_latency + 1} warps per scheduler",
            ]
        return [
            f"{c.warps} warps on {count(c.schedulers, 'scheduler')} ({per}); "
            f"each loops 1 load (waits L = {c.mem_latency} cycles) + K = {c.alu} arithmetic instructions",
            f"policy: {c.policy} ({POLICY_WORDS[c.policy]})",
            f"simulated utilization {percent(self.utilization)} of issue slots "
            f"(cycles {self.window[0]:,} to {self.window[1]:,} of {self.cycles:,})",
            f"model U(N) = min(1, N (K+1) / (L+K+1)) = {percent(self.model_utilization)}",
            f"warps needed: N* = ceil((L+K+1) / (K+1)) = {self.warps_needed_per_scheduler} per scheduler, "
            f"{self.warps_needed} per SM",
            *lrr,
            *(f"warning: {w}" for w in self.warnings()),
        ]

    def to_dict(self) -> dict[str, Any]:
        c = self.config
        return {
            "warps": c.warps,
            "mem_latency": c.mem_latency,
            "alu": c.alu,
            "schedulers": c.schedulers,
            "policy": c.policy,
            "cycles": self.cycles,
            "warps_per_scheduler": [c.warps_on(s) for s in range(c.schedulers)],
            "utilization": self.utilization,
            "model_utilization": self.model_utilization,
            "warps_needed": self.warps_needed,
            "warps_needed_per_scheduler": self.warps_needed_per_scheduler,
            "steady_state_cycles": list(self.window),
            **({"lrr_utilization": self.lrr_utilization} if c.policy == "lrr" else {}),
            "warnings": self.warnings(),
        }


def steady_window(config: LatencyConfig) -> tuple[int, int]:
    """Whole periods after the start-up (``LatencyConfig.warm_cycles``): a window of whole periods
    (gto's loop period, lrr's round on the busiest scheduler) counts each warp's turns evenly."""
    cycles, period = config.run_cycles, config.window_period
    warm = config.warm_cycles
    periods = (cycles - warm) // period
    if periods < 1:
        need = warm + period
        raise InputError(
            f"cycles is {cycles:,}; with L = {config.mem_latency} and K = {config.alu} the run needs at least "
            f"{need:,} to settle and measure one {'round' if config.policy == 'lrr' else 'loop period'}"
        )
    return cycles - periods * period, cycles


def simulate_latency(config: LatencyConfig) -> LatencyRun:
    """Run the SM's schedulers (each alone: they share nothing in this model)."""
    window = steady_window(config)
    runs = tuple(
        run_scheduler(config.warps_on(s), config.mem_latency, config.alu, config.policy, config.run_cycles)
        for s in range(config.schedulers)
    )
    return LatencyRun(config, runs, window)


@dataclass(frozen=True)
class CurvePoint:
    warps: int  # per SM
    simulated: float
    model: float


@dataclass(frozen=True)
class UtilizationCurve:
    """Utilization against resident warps per SM, simulated and in closed form, for one L and K."""

    mem_latency: int
    alu: int
    schedulers: int
    policy: str
    points: tuple[CurvePoint, ...]

    @property
    def warps_needed(self) -> int:
        return self.schedulers * warps_needed_per_scheduler(self.mem_latency, self.alu)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mem_latency": self.mem_latency,
            "alu": self.alu,
            "schedulers": self.schedulers,
            "policy": self.policy,
            "warps_needed": self.warps_needed,
            "points": [{"warps": p.warps, "simulated": p.simulated, "model": p.model} for p in self.points],
        }


def utilization_curve(
    mem_latency: int, alu: int, schedulers: int = 4, policy: str = "gto", max_warps: int = SM_MAX_WARPS
) -> UtilizationCurve:
    """U for 1 .. ``max_warps`` warps per SM. The schedulers are alike, so each warp count per
    scheduler is simulated once and an SM's U is the mean over its schedulers' counts."""
    per_scheduler: dict[int, float] = {}
    points = []
    for warps in range(1, max_warps + 1):
        config = LatencyConfig(warps, mem_latency, alu, schedulers, policy)
        total = 0.0
        for s in range(schedulers):
            n = config.warps_on(s)
            if n not in per_scheduler:
                one = LatencyConfig(max(n, 1), mem_latency, alu, 1, policy)
                per_scheduler[n] = simulate_latency(one).utilization if n else 0.0
            total += per_scheduler[n]
        points.append(CurvePoint(warps, total / schedulers, model_utilization(config)))
    return UtilizationCurve(mem_latency, alu, schedulers, policy, tuple(points))


# ----------------------------------------------------------------------------- tied to a launch


@dataclass(frozen=True)
class LaunchWarps:
    """What occupancy leaves for latency hiding: resident warps, schedulers and warp slots per SM."""

    warps: int
    schedulers: int
    warp_slots: int
    limiter: str  # what capped the resident warps (occupancy's limiter)

    @property
    def per_scheduler(self) -> float:
        return self.warps / self.schedulers


def launch_warps(occ: Occupancy, limits: ArchLimits) -> LaunchWarps:
    """Resident warps per SM from the launch's occupancy; schedulers = the SM's sub-partitions
    (``cudaOccSubPartitionsPerMultiprocessor``: one warp scheduler each)."""
    return LaunchWarps(
        warps=occ.active_warps_per_sm,
        schedulers=limits.reg_sub_partitions,
        warp_slots=occ.max_warps_per_sm,
        limiter=occ.limiter,
    )


def config_for_launch(
    occ: Occupancy, limits: ArchLimits, mem_latency: int, alu: int, policy: str = "gto", cycles: int = 0
) -> LatencyConfig:
    """The latency model for the SM a launch fills: raising registers or shared memory lowers
    ``warps`` here, and the utilization with it."""
    lw = launch_warps(occ, limits)
    if lw.warps < 1:
        raise InputError("the launch fits no block on an SM, so no warp is resident to hide latency")
    return LatencyConfig(lw.warps, mem_latency, alu, lw.schedulers, policy, cycles, lw.warp_slots)


# ----------------------------------------------------------------------------- published latencies

GPU_BENCHES = "te42kyfo/gpu-benches"
GPU_BENCHES_COMMIT = "1c36d509ee717dca9215c27135fa1e611bb03ed1"
_GPU_BENCHES_METHOD = (
    "pointer chase: one warp follows a random cycle through a buffer, cycles per load at the SM clock "
    "in the file's first column"
)


@dataclass(frozen=True)
class LatencyPreset:
    """A published latency and where it comes from. ``latency_cycles`` is the measured figure (a
    load to the next load that needs its value); the model's L is one less (see the docstring)."""

    key: str
    label: str
    latency_cycles: int
    source: str
    method: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    memory: bool = True  # the latency is a load's (False: an arithmetic result's)

    @property
    def waited(self) -> str:
        """What a warp issues and then waits for, in words ("a load", "an instruction")."""
        return "a load" if self.memory else "an instruction"

    @property
    def mem_latency(self) -> int:
        return max(0, self.latency_cycles - 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "latency_cycles": self.latency_cycles,
            "mem_latency": self.mem_latency,
            "source": self.source,
            "method": self.method,
        }


def _bench(gpu: str, level: str, cycles: int, file: str, data_set: str) -> LatencyPreset:
    key = f"{gpu.lower().replace(' ', '-')}-{level.lower()}"
    return LatencyPreset(
        key=key,
        label=f"{gpu} {level}: {cycles} cycles",
        latency_cycles=cycles,
        source=f"{GPU_BENCHES}, gpu-latency/{file} (commit {GPU_BENCHES_COMMIT[:7]}), the {data_set} data set",
        method=_GPU_BENCHES_METHOD,
    )


#: Published latencies, each with its source. gpu-benches' files list data set (kB) and cycles per
#: load; the figure here is the plateau's value: L1 at the smallest set, L2 where the set fits L2
#: and no longer L1, DRAM at the largest set.
PRESETS: tuple[LatencyPreset, ...] = (
    LatencyPreset(
        key="cuda-guide-arithmetic",
        label="arithmetic on cc 7.x: 4 cycles",
        latency_cycles=4,
        source=(
            "CUDA C++ Programming Guide, 'Maximize Utilization: Multiprocessor Level': on compute "
            "capability 7.x most arithmetic instructions take 4 cycles, so 16 active warps per SM "
            "(4 cycles, 4 warp schedulers) hide them"
        ),
        method="NVIDIA's documented figure",
        memory=False,
    ),
    _bench("V100", "L1", 30, "v100.txt", "1 kB"),
    _bench("V100", "L2", 215, "v100.txt", "1,029 kB"),
    _bench("V100", "DRAM", 437, "v100.txt", "1,529,075 kB (1.5 GB)"),
    _bench("A100", "L1", 36, "a100_40.txt", "1 kB"),
    _bench("A100", "L2", 213, "a100_40.txt", "1,029 kB"),
    _bench("A100", "DRAM", 575, "a100_40.txt", "1,529,075 kB (1.5 GB)"),
    _bench("H100 PCIe", "L1", 34, "h100_pcie.txt", "1 kB"),
    _bench("H100 PCIe", "L2", 266, "h100_pcie.txt", "1,029 kB"),
    _bench("H100 PCIe", "DRAM", 658, "h100_pcie.txt", "1,529,075 kB (1.5 GB)"),
)
VOLKOV_NOTE = (
    "Volkov (Understanding Latency Hiding on GPUs, UC Berkeley EECS-2016-143) analyses this loop: a "
    "memory access followed by arithmetic, and the warps Little's law asks for."
)


def find_preset(key: str) -> LatencyPreset:
    for p in PRESETS:
        if p.key == key.strip().lower():
            return p
    raise InputError(f"latency preset {shown(key)} is not one of {', '.join(p.key for p in PRESETS)}")


def occupancy_for_hiding(mem_latency: int, alu: int, schedulers: int, warp_slots: int) -> float:
    """The occupancy (resident warps / warp slots) at which the model hides the latency fully."""
    return min(1.0, schedulers * warps_needed_per_scheduler(mem_latency, alu) / warp_slots)


#: the key of the preset made from this GPU's own stored latency ladder (``preset_from_ladder``)
MEASURED_PRESET_KEY = "measured-dram"


def preset_from_ladder(ladder: LatencyLadder) -> LatencyPreset | None:
    """The preset "L measured on this GPU": the DRAM level of the GPU's stored pointer-chase ladder,
    with its clock and method as the source; None when the ladder has no DRAM level."""
    cycles = ladder.levels().get("DRAM")
    if cycles is None:
        return None
    whole = max(1, round(cycles))
    return LatencyPreset(
        key=MEASURED_PRESET_KEY,
        label=f"measured on this GPU, DRAM: {whole} cycles",
        latency_cycles=whole,
        source=(
            f"the pointer-chase ladder measured on {ladder.device_name} and stored with its ceilings "
            f"(DRAM level, SM clock {ladder.sm_clock_mhz:.0f} MHz during the ladder)"
        ),
        method=ladder.method,
    )
