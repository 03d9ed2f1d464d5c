"""Run it for real on a GPU holds the SM clock first: the warm-up kernel (scratch arrays only) runs
until NVML's SM clock is steady, then the one launch is timed; a clock that fell below 75% of
steady is said in the method. A fake CUDA API and a fake clock stand for the GPU."""

from __future__ import annotations

import pytest

from explorer.devices.gpu_clock import HOLD_S, no_reading
from explorer.launch_runs import realrun
from tests.launch_runs.test_realrun_timing import _FakeCuda


class _Timed:
    """A fake wall clock and a warm-up kernel that takes 1 ms of it per launch."""

    def __init__(self) -> None:
        self.t = 0.0
        self.warm_ups = 0

    def clock(self) -> float:
        return self.t

    def warm_up(self) -> None:
        self.warm_ups += 1
        self.t += 1e-3


def test_the_clock_is_held_before_the_timed_launch_and_the_launch_is_timed_with_events():
    cuda, fake = _FakeCuda(), _Timed()
    launches: list[float] = []
    seconds, words = realrun.time_launch_held(
        cuda,
        fake.warm_up,
        lambda: launches.append(fake.t),
        events=True,
        sm_clock=lambda: 1980.0,
        clock=fake.clock,
    )
    assert seconds == pytest.approx(135e-6)
    assert launches and launches[0] >= HOLD_S  # the launch came after 100 ms of steady clock
    assert fake.warm_ups >= HOLD_S / 1e-3
    assert words == "SM clock held steady at 1980 MHz before the samples"


def test_a_clock_that_fell_during_the_launch_is_said():
    cuda, fake = _FakeCuda(), _Timed()
    launched = {"done": False}

    def reader() -> float:
        return 1300.0 if launched["done"] else 1980.0

    def launch() -> None:
        launched["done"] = True

    _, words = realrun.time_launch_held(
        cuda, fake.warm_up, launch, events=True, sm_clock=reader, clock=fake.clock
    )
    assert "throttled: the GPU's SM clock fell to 1300 MHz" in words


def test_without_nvml_there_is_no_hold_and_the_method_says_so():
    cuda, fake = _FakeCuda(), _Timed()
    seconds, words = realrun.time_launch_held(
        cuda, fake.warm_up, lambda: None, events=True, sm_clock=no_reading, clock=fake.clock
    )
    assert seconds == pytest.approx(135e-6)
    assert fake.warm_ups == 2  # the compile before the hold and time_launch's own: no hold ran
    assert words == "no SM clock from NVML: no clock hold before the samples"
