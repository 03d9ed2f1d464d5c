"""The bandwidth sweep's SM clock in words: the hold, then "throttled" when it fell below 75% of
steady; nothing on the simulator; kept through the sweep's dict and summary."""

from __future__ import annotations

from explorer.devices.gpu_clock import ClockWatch
from explorer.launch_runs.measured import BandwidthPoint, BandwidthSweep, clock_words


class _Gpu:
    def __init__(self) -> None:
        self.t = 0.0

    def clock(self) -> float:
        return self.t

    def step(self) -> None:
        self.t += 1e-3


def _held(readings_after: list[float]) -> ClockWatch:
    gpu, after = _Gpu(), iter(readings_after)
    held = {"done": False}
    watch = ClockWatch(lambda: next(after) if held["done"] else 1980.0)
    watch.hold(gpu.step, lambda: None, clock=gpu.clock)
    held["done"] = True
    for _ in readings_after:
        watch.sample()
    return watch


def test_a_steady_sweep_says_its_hold_only():
    assert clock_words(_held([1980.0, 1965.0])) == "SM clock held steady at 1980 MHz before the samples"


def test_a_throttled_sweep_says_so():
    words = clock_words(_held([1980.0, 1200.0]))
    assert (
        words.startswith("SM clock held steady at 1980 MHz")
        and "throttled: the GPU's SM clock fell to 1200 MHz" in words
    )


def test_the_simulator_says_nothing_about_clocks():
    assert clock_words(None) == ""


def test_the_clock_note_is_in_the_summary_and_the_dict():
    sweep = BandwidthSweep(
        "H100",
        "gpu",
        132,
        600.0,
        2**20,
        2**28,
        None,
        "",
        (BandwidthPoint(1, 100.0, 0.01, 1),),
        "throttled: x",
    )
    assert sweep.summary_lines()[-1] == "throttled: x" and sweep.to_dict()["clock_note"] == "throttled: x"
