"""Warm-up until stable, the GPU clock hold and the throttle rule, on a fake clock and a fake GPU
driven through the real ``measure()``: every expected figure follows from the fake's costs."""

from __future__ import annotations

import pytest

from explorer.bench.timing import TARGET_SAMPLE_S, measure
from explorer.devices.gpu_clock import (
    HOLD_BOUND_S,
    HOLD_S,
    THROTTLE_SHARE,
    ClockHold,
    ClockWatch,
    SmClock,
    cuda_sm_reader,
    hold_clock,
    no_reading,
    nvml_sm_reader,
    throttle_note,
)

US = 1e-6


class FakeGpu:
    """A queue of kernels on a fake clock: ``step`` enqueues one kernel (its first call compiles on
    the host for ``compile_s``), ``sync`` waits ``sync_s`` plus whatever is queued."""

    def __init__(self, kernel_s, *, sync_s: float = 10 * US, compile_s: float = 1.0) -> None:
        self.t = 0.0
        self.queued = 0.0
        self.calls = 0
        self.kernel_s = kernel_s if callable(kernel_s) else (lambda _t: kernel_s)
        self.sync_s = sync_s
        self.compile_s = compile_s

    def clock(self) -> float:
        return self.t

    def step(self) -> None:
        if self.calls == 0:
            self.t += self.compile_s
        self.calls += 1
        self.queued += self.kernel_s(self.t + self.queued)

    def sync(self) -> None:
        self.t += self.sync_s + self.queued
        self.queued = 0.0


def run(gpu: FakeGpu, **kw):
    return measure(gpu.step, gpu.sync, clock=gpu.clock, **kw)


# --- warm-up until stable ---------------------------------------------------------------------


def test_grouping_is_decided_on_warm_calls_not_on_the_compile():
    """20 us kernel, 10 us sync, 1 s compile, 0.04 s budget: the compile alone overran the budget,
    which used to leave one step per sample and read 30 us."""
    gpu = FakeGpu(20 * US)
    t = run(gpu, budget_s=0.04)
    assert t.steps_per_sample == int(TARGET_SAMPLE_S / (30 * US)) + 1  # grouped on a 30 us warm call
    assert t.median_s == pytest.approx(20 * US + 10 * US / t.steps_per_sample, rel=1e-6)
    assert t.median_s < 21 * US


def test_warm_up_goes_on_until_two_calls_agree():
    """A kernel that slows down its first few warm calls (a cold cache, a lazy allocation): the
    grouping and the samples come after the calls have settled."""
    costs = [1e-3, 5e-4, 3e-4, 2e-4, 1e-4, 1e-4]
    n = {"i": 0}

    def kernel(_t: float) -> float:
        i = min(n["i"], len(costs) - 1)
        n["i"] += 1
        return costs[i]

    gpu = FakeGpu(kernel, sync_s=0.0, compile_s=0.0)
    t = run(gpu, budget_s=10.0)
    assert t.median_s == pytest.approx(1e-4)
    assert t.spread_s == pytest.approx(0.0, abs=1e-12)
    assert t.steps_per_sample == int(TARGET_SAMPLE_S / 1e-4) + 1


def test_a_kernel_longer_than_the_budget_gets_one_warm_call_and_one_sample():
    gpu = FakeGpu(0.5, sync_s=0.0, compile_s=0.0)
    t = run(gpu, budget_s=0.04)
    assert gpu.calls == 3  # the first call, one warm call, one sample
    assert t.repeats == 1 and t.steps_per_sample == 1
    assert t.median_s == pytest.approx(0.5)


def test_repeats_one_keeps_one_sample_after_the_warm_up():
    gpu = FakeGpu(20 * US)
    t = run(gpu, budget_s=0.04, repeats=1)
    assert t.repeats == 1
    assert t.median_s == pytest.approx(20 * US + 10 * US / t.steps_per_sample, rel=1e-6)


def test_a_warm_up_that_never_settles_is_bounded():
    """Calls that alternate 1x and 2x never agree: the warm-up stops at its bound, and measures."""
    n = {"i": 0}

    def kernel(_t: float) -> float:
        n["i"] += 1
        return 1e-3 * (1 + n["i"] % 2)

    gpu = FakeGpu(kernel, sync_s=0.0, compile_s=0.0)
    t = run(gpu, budget_s=1e6, repeats=4)
    assert t.repeats == 4
    assert 2 <= gpu.calls - 1 - 4 <= 50  # the warm calls: more than one, at most the bound


def test_a_warm_up_that_never_settles_keeps_half_the_budget_for_samples():
    n = {"i": 0}

    def kernel(_t: float) -> float:
        n["i"] += 1
        return 0.01 * (1 + n["i"] % 2)

    gpu = FakeGpu(kernel, sync_s=0.0, compile_s=0.0)
    run(gpu, budget_s=0.05)
    warm_calls = gpu.calls - 1
    assert warm_calls <= 5  # 0.025 s of 10-20 ms calls, then the samples


def test_an_explicit_warmup_count_is_kept():
    gpu = FakeGpu(1e-3, sync_s=0.0, compile_s=0.0)
    run(gpu, budget_s=100.0, warmup=3, repeats=2)
    assert gpu.calls == 1 + 3 + 2


# --- the GPU clock hold -----------------------------------------------------------------------

STEADY_MHZ = 1980.0


def test_a_stable_cold_clock_does_not_pass_as_settled():
    """1.73x slow (116 us against 67.3 us) for the first 150 ms after the compile, steadily: the
    warm-up alone sees agreeing calls; the clock hold waits for the SM clock, so the samples are
    warm ones."""
    warm_at = 1.0 + 0.15
    gpu = FakeGpu(lambda t: 116 * US if t < warm_at else 67.3 * US, sync_s=0.0)

    def read() -> float:
        return STEADY_MHZ * 67.3 / 116 if gpu.t < warm_at else STEADY_MHZ

    without = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=0.04)
    assert without.median_s == pytest.approx(116 * US)  # the trap: tight and 1.73x slow

    gpu = FakeGpu(lambda t: 116 * US if t < warm_at else 67.3 * US, sync_s=0.0)
    t = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=0.04, sm_clock=SmClock(read, STEADY_MHZ))
    assert t.median_s == pytest.approx(67.3 * US, rel=1e-6)
    assert t.min_s == pytest.approx(67.3 * US, rel=1e-6)
    assert t.sm_mhz_steady == STEADY_MHZ and t.sm_mhz_min == STEADY_MHZ
    assert not t.throttled and t.throttle_note == ""
    assert f"held steady at {STEADY_MHZ:.0f} MHz" in t.method


def test_a_cold_clock_parked_longer_than_the_hold_is_marked_throttled_without_a_max():
    """A reader that cannot tell the GPU's highest clock: a clock parked low for 150 ms looks
    steady to the hold; samples that see it rise (here 0.2 s of them) are marked, not passed."""
    warm_at = 1.0 + 0.15
    gpu = FakeGpu(lambda t: 116 * US if t < warm_at else 67.3 * US, sync_s=0.0)

    def read() -> float:
        return STEADY_MHZ * 67.3 / 116 if gpu.t < warm_at else STEADY_MHZ

    t = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=1.0, sm_clock=read)
    assert t.throttled and t.sm_mhz_steady == STEADY_MHZ
    assert t.sm_mhz_min == pytest.approx(STEADY_MHZ * 67.3 / 116)


def test_a_steady_clock_is_not_throttled():
    gpu = FakeGpu(1e-3, sync_s=0.0)
    t = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=0.5, sm_clock=lambda: STEADY_MHZ)
    assert not t.throttled and t.throttle_note == ""
    assert t.sm_mhz_steady == t.sm_mhz_min == STEADY_MHZ


def test_a_dip_to_70_percent_during_the_samples_is_throttled():
    gpu = FakeGpu(1e-3, sync_s=0.0)
    sampling = {"on": False}
    reads = {"n": 0}

    def sm() -> float:
        reads["n"] += 1
        return 0.7 * STEADY_MHZ if sampling["on"] and reads["n"] % 7 == 0 else STEADY_MHZ

    # the samples begin once the hold (its 100 ms) is over; the dip is read only after that
    real_sync = gpu.sync

    def sync() -> None:
        real_sync()
        if gpu.t > 1.0 + HOLD_S + 0.05:
            sampling["on"] = True

    t = measure(gpu.step, sync, clock=gpu.clock, budget_s=1.0, sm_clock=sm)
    assert t.throttled
    assert t.sm_mhz_min == pytest.approx(0.7 * STEADY_MHZ)
    assert t.sm_mhz_steady == STEADY_MHZ
    assert "1386 MHz" in t.throttle_note and "75%" in t.throttle_note


def test_a_clock_ramping_from_idle_is_waited_for():
    """345 MHz idle to 1980 MHz over 300 ms of work, the kernel's time following the clock."""
    ramp_s, idle = 0.3, 345.0
    gpu = FakeGpu(lambda t: 50 * US, sync_s=0.0)

    def mhz_at(t: float) -> float:
        done = min(1.0, max(0.0, (t - 1.0) / ramp_s))
        return idle + (STEADY_MHZ - idle) * done

    gpu.kernel_s = lambda t: 50 * US * STEADY_MHZ / mhz_at(t)
    t = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=0.2, sm_clock=lambda: mhz_at(gpu.t))
    assert t.median_s == pytest.approx(50 * US, rel=1e-6)  # every sample at the full clock
    assert t.sm_mhz_steady == pytest.approx(STEADY_MHZ, rel=0.02)
    assert not t.throttled


@pytest.mark.parametrize("reader", [no_reading, lambda: 0.0])
def test_no_nvml_means_no_hold_said_in_the_method(reader):
    gpu = FakeGpu(1e-3, sync_s=0.0)
    t = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=0.5, sm_clock=reader)
    assert "no SM clock from NVML" in t.method
    assert t.sm_mhz_steady is None and t.sm_mhz_min is None and not t.throttled
    assert gpu.calls < 1 + 50 + 600  # no hold ran: warm-up and samples only


def test_a_reader_that_raises_stops_nothing():
    def broken() -> float:
        raise RuntimeError("NVML_ERROR_GPU_IS_LOST")

    gpu = FakeGpu(1e-3, sync_s=0.0)
    t = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=0.5, sm_clock=broken)
    assert t.repeats >= 3 and not t.throttled
    assert "no SM clock from NVML" in t.method


def test_a_cpu_point_says_nothing_about_clocks():
    gpu = FakeGpu(1e-3, sync_s=0.0)
    t = measure(gpu.step, gpu.sync, clock=gpu.clock, budget_s=0.5)
    assert t.method == "perf_counter + sync"
    assert t.sm_mhz_steady is None and not t.throttled


def test_a_clock_that_never_settles_hits_the_hold_bound_and_says_so():
    gpu = FakeGpu(1e-3, sync_s=0.0)
    flip = {"n": 0}

    def sm() -> float:
        flip["n"] += 1
        return 1500.0 + 300.0 * (flip["n"] % 2)

    hold = hold_clock(gpu.step, gpu.sync, sm, clock=gpu.clock)
    assert hold.bound_hit
    assert HOLD_BOUND_S <= hold.waited_s <= HOLD_BOUND_S + 2e-3
    assert "still moving" in hold.words()


def test_the_hold_returns_once_the_clock_stays_for_the_hold_time():
    gpu = FakeGpu(1e-3, sync_s=0.0, compile_s=0.0)
    hold = hold_clock(gpu.step, gpu.sync, lambda: STEADY_MHZ, clock=gpu.clock)
    assert hold == ClockHold(STEADY_MHZ, hold.waited_s)
    assert HOLD_S <= hold.waited_s <= HOLD_S + 2e-3


@pytest.mark.parametrize(
    ("low", "throttled"),
    [(STEADY_MHZ, False), (THROTTLE_SHARE * STEADY_MHZ, False), (THROTTLE_SHARE * STEADY_MHZ - 1, True)],
)
def test_the_throttle_rule_is_below_75_percent_of_steady(low, throttled):
    assert bool(throttle_note(low, STEADY_MHZ)) is throttled
    assert throttle_note(None, STEADY_MHZ) == "" and throttle_note(low, None) == ""


# --- the NVML reader ---------------------------------------------------------------------------


class FakeNvml:
    NVML_CLOCK_SM = 1

    def __init__(self, mhz: int = 1980, fail_init: bool = False) -> None:
        self.mhz = mhz
        self.fail_init = fail_init

    def nvmlInit(self) -> None:
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, i: int) -> str:
        return f"h{i}"

    def nvmlDeviceGetClockInfo(self, handle: str, kind: int) -> int:
        assert handle == "h0" and kind == self.NVML_CLOCK_SM
        return self.mhz

    def nvmlDeviceGetMaxClockInfo(self, handle: str, kind: int) -> int:
        assert handle == "h0" and kind == self.NVML_CLOCK_SM
        return 1980


def test_the_nvml_reader_reads_the_sm_clock():
    nvml = FakeNvml()
    read = nvml_sm_reader(0, nvml)
    assert read is not None and read() == 1980.0
    assert isinstance(read, SmClock) and read.max_mhz == 1980.0
    nvml.mhz = 1410
    assert read() == 1410.0


def test_no_nvml_gives_no_reader():
    assert nvml_sm_reader(0, FakeNvml(fail_init=True)) is None
    assert nvml_sm_reader(None) is None
    assert cuda_sm_reader("cpu") is None


# --- a whole measurement's clock (a GPU roof) --------------------------------------------------


def test_a_clock_watch_over_several_loops_says_a_fall_below_75_percent():
    gpu = FakeGpu(1e-3, sync_s=0.0, compile_s=0.0)
    after_hold = iter([0.9 * STEADY_MHZ, STEADY_MHZ, 0.7 * STEADY_MHZ])
    held = {"done": False}
    watch = ClockWatch(lambda: next(after_hold) if held["done"] else STEADY_MHZ)
    hold = watch.hold(gpu.step, gpu.sync, clock=gpu.clock)
    held["done"] = True
    assert hold.steady_mhz == STEADY_MHZ and not hold.bound_hit
    watch.sample()
    assert watch.note() == ""  # 90% of steady: within nvbench's rule
    watch.add(STEADY_MHZ, STEADY_MHZ)  # a measure() loop's own figures
    watch.sample()
    watch.sample()
    assert watch.low_mhz == pytest.approx(0.7 * STEADY_MHZ)
    assert watch.note().startswith("throttled: the GPU's SM clock fell to 1386 MHz")


def test_a_clock_watch_without_nvml_says_nothing_and_holds_nothing():
    gpu = FakeGpu(1e-3, sync_s=0.0, compile_s=0.0)
    watch = ClockWatch(no_reading)
    assert watch.hold(gpu.step, gpu.sync, clock=gpu.clock).steady_mhz is None
    watch.sample()
    assert gpu.calls == 0 and watch.note() == "" and watch.steady_mhz is None
