"""Hold a GPU's SM clock at its steady value before timing, and tell a point whose clock fell.

An idle GPU parks its SM clock low (345 MHz on an H100) and raises it only after some tens of
milliseconds of work: a kernel timed straight after its compile can run 1.7x slow for its first
100 ms, steadily, so its samples agree with each other and pass as settled. Before the first
sample the step is therefore run until NVML's SM clock has stayed at one value for
``HOLD_S`` (bounded by ``HOLD_BOUND_S``, said when hit). During the samples the clock is read
again; a point whose clock fell below ``THROTTLE_SHARE`` of that steady value is marked
throttled (nvbench's rule: power or heat held the GPU back, so the figure is not its steady one).

Qt-free and torch-free: the clock reader is a plain callable, so the rules are tested with fakes.
It lives under ``explorer.devices`` (beside the NVML wrapper) so both the benchmarks and the
launch visualizer's real runs can use it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: readings within this share of each other are one clock (NVML steps by ~15 MHz near 2 GHz)
STEADY_TOLERANCE = 0.02
#: the SM clock must stay at one value this long before the samples start
HOLD_S = 0.1
#: the most the hold waits; a clock that keeps moving is then said, not waited on for ever
HOLD_BOUND_S = 2.0
#: a point whose SM clock fell below this share of the steady value is throttled (nvbench's rule)
THROTTLE_SHARE = 0.75

ReadMhz = Callable[[], "float | None"]


class SmClock:
    """An SM clock reader that also knows the GPU's highest SM clock (NVML's max clock info): a
    cold clock parked at one low value is steady too, so the hold also waits for the clock to
    reach ``THROTTLE_SHARE`` of that highest value. Any plain callable works as a reader without it."""

    def __init__(self, read: ReadMhz, max_mhz: float | None = None) -> None:
        self.read = read
        self.max_mhz = max_mhz

    def __call__(self) -> float | None:
        return self.read()


def max_mhz_of(read_sm_mhz: ReadMhz | None) -> float | None:
    """The highest SM clock a reader knows (``SmClock.max_mhz``), or None."""
    value = getattr(read_sm_mhz, "max_mhz", None)
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


@dataclass(frozen=True)
class ClockHold:
    """What the hold found: the steady SM clock (None: NVML gave none), how long it ran the step,
    and whether it gave up at its bound with the clock still moving."""

    steady_mhz: float | None
    waited_s: float
    bound_hit: bool = False

    def words(self) -> str:
        """One plain sentence for a point's method text."""
        if self.steady_mhz is None:
            return "no SM clock from NVML: no clock hold before the samples"
        if self.bound_hit:
            return (
                f"SM clock still moving after {self.waited_s:.1f} s of warm-up (the hold's bound); "
                f"timed at {self.steady_mhz:.0f} MHz"
            )
        return f"SM clock held steady at {self.steady_mhz:.0f} MHz before the samples"


def read_safely(read_sm_mhz: ReadMhz | None) -> float | None:
    """The reader's MHz, or None when there is no reader, it fails, or says nonsense."""
    if read_sm_mhz is None:
        return None
    try:
        value = read_sm_mhz()
    except Exception:  # a driver that stops answering must never stop a measurement
        return None
    if value is None:
        return None
    mhz = float(value)
    return mhz if mhz > 0 else None


def hold_clock(
    step: Callable[[], object],
    sync: Callable[[], object],
    read_sm_mhz: ReadMhz | None,
    *,
    clock: Callable[[], float] = time.perf_counter,
    hold_s: float = HOLD_S,
    bound_s: float = HOLD_BOUND_S,
) -> ClockHold:
    """Run ``step`` (then ``sync``) until the SM clock has stayed within ``STEADY_TOLERANCE`` of
    one value for ``hold_s`` (and, where the reader knows the GPU's highest clock, at
    ``THROTTLE_SHARE`` of it or above), at most ``bound_s``; return that value. Without a reading
    (no NVML, a reader that fails) nothing runs and the hold says so."""
    if read_safely(read_sm_mhz) is None:
        return ClockHold(None, 0.0)
    floor = THROTTLE_SHARE * (max_mhz_of(read_sm_mhz) or 0.0)
    start = clock()
    anchor: float | None = None
    anchor_t = start
    while True:
        step()
        sync()
        mhz = read_safely(read_sm_mhz)
        now = clock()
        if mhz is None:  # NVML went away mid-hold: time on without it
            return ClockHold(None, now - start)
        if anchor is None or abs(mhz - anchor) > STEADY_TOLERANCE * anchor:
            anchor, anchor_t = mhz, now
        elif now - anchor_t >= hold_s and anchor >= floor:
            return ClockHold(anchor, now - start)
        if now - start >= bound_s:
            return ClockHold(anchor, now - start, bound_hit=True)


def throttle_note(min_mhz: float | None, steady_mhz: float | None) -> str:
    """The one sentence of a throttled point; "" when its clock stayed at 75% of steady or better."""
    if min_mhz is None or not steady_mhz or min_mhz >= THROTTLE_SHARE * steady_mhz:
        return ""
    return (
        f"throttled: the GPU's SM clock fell to {min_mhz:.0f} MHz during the samples, below "
        f"{THROTTLE_SHARE:.0%} of its steady {steady_mhz:.0f} MHz (power or heat held it back)"
    )


class ClockWatch:
    """One measurement's SM clock over several timed loops (a GPU roof: sgemm, the FMA loop, the
    bandwidth sweep): ``hold`` before a loop, ``sample`` after each timed launch, ``add`` a
    ``Timing``'s own figures; ``note`` is the throttle sentence for the whole ("" when none)."""

    def __init__(self, read: ReadMhz | None) -> None:
        self.read = read
        self.steady_mhz: float | None = None
        self.low_mhz: float | None = None
        self.holds: list[ClockHold] = []

    def hold(
        self,
        step: Callable[[], object],
        sync: Callable[[], object],
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> ClockHold:
        done = hold_clock(step, sync, self.read, clock=clock)
        self.holds.append(done)
        self.add(done.steady_mhz, None)
        return done

    def sample(self) -> None:
        """Read the clock after a timed launch (outside its timing)."""
        mhz = read_safely(self.read)
        self.add(mhz, mhz)

    def add(self, steady_mhz: float | None, low_mhz: float | None) -> None:
        if steady_mhz is not None:
            self.steady_mhz = max(self.steady_mhz or 0.0, steady_mhz)
        if low_mhz is not None:
            self.low_mhz = low_mhz if self.low_mhz is None else min(self.low_mhz, low_mhz)

    def note(self) -> str:
        return throttle_note(self.low_mhz, self.steady_mhz)


# --- the real reader: NVML's SM clock of one GPU -------------------------------------------------

_sessions: dict[int, Any] = {}


def nvml_sm_reader(nvml_index: int | None, nvml: Any = None) -> ReadMhz | None:
    """A reader of NVML GPU ``nvml_index``'s current SM clock in MHz, or None when NVML (or the
    index) is not there. The NVML session stays open for the process: a read is one driver call."""
    if nvml_index is None:
        return None
    from explorer.devices.nvml import NvmlSession

    session = _sessions.get(nvml_index) if nvml is None else None
    try:
        if session is None:
            session = NvmlSession(nvml)
            session.init()
            handle = session.handle(nvml_index)
            lib = session.nvml
            lib.nvmlDeviceGetClockInfo(handle, lib.NVML_CLOCK_SM)
            if nvml is None:
                _sessions[nvml_index] = session
    except Exception:  # no pynvml, no driver, no such GPU: time without a hold
        return None
    live = session

    def read() -> float | None:
        lib = live.nvml
        return float(lib.nvmlDeviceGetClockInfo(live.handle(nvml_index), lib.NVML_CLOCK_SM))

    try:
        lib = live.nvml
        top: float | None = float(lib.nvmlDeviceGetMaxClockInfo(live.handle(nvml_index), lib.NVML_CLOCK_SM))
    except Exception:  # an NVML without it: the hold waits on steadiness alone
        top = None
    return SmClock(read, top)


def no_reading() -> float | None:
    """The reader of a GPU NVML cannot see: the hold then says there was none."""
    return None


def cuda_sm_reader(device: str) -> ReadMhz | None:
    """The SM clock reader of ``cuda:N`` (its NVML index found through ``CUDA_VISIBLE_DEVICES``);
    ``no_reading`` without NVML (so the method text says there was no hold); None on a CPU."""
    if not device.startswith("cuda"):
        return None
    return _cuda_sm_reader(device) or no_reading


def _cuda_sm_reader(device: str) -> ReadMhz | None:
    from explorer.devices.nvml import cuda_visible_nvml_indices, import_nvml

    try:
        lib = import_nvml()
        lib.nvmlInit()
    except Exception:  # no pynvml or no driver: time without a hold
        return None
    try:
        count = int(lib.nvmlDeviceGetCount())
        uuids = [_text(lib.nvmlDeviceGetUUID(lib.nvmlDeviceGetHandleByIndex(i))) for i in range(count)]
        mapping = cuda_visible_nvml_indices(os.environ.get("CUDA_VISIBLE_DEVICES"), uuids)
        ordinal = int(device.split(":", 1)[1]) if ":" in device else 0
        if ordinal >= len(mapping.nvml_indices):
            return None
        index = mapping.nvml_indices[ordinal]
    except Exception:
        return None
    finally:
        try:
            lib.nvmlShutdown()  # balances the init above; the reader's session holds its own
        except Exception:
            pass
    return nvml_sm_reader(index)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
