"""Utilization truth: the visualizer's predicted occupancy of a launch run for real, joined with
GPM's SM occupancy over the windows that cover the run. The join is checked against a brute force
over thousands of random timelines (GPM as the exact average of a millisecond timeline), and end
to end from GPM sample pairs read through the stand-in NVML."""

from __future__ import annotations

import random

import pytest

from explorer.devices.live import LiveReading
from explorer.devices.nvml import NvmlSession
from explorer.launch.config import Dim3, LaunchConfig
from explorer.launch.occupancy_truth import (
    PredictedOccupancy,
    compare,
    expected_reading,
    occupancy_truth,
)
from explorer.launch.schedule import plan_launch
from tests.devices.fake_nvml import hopper_gpu, make_fake_nvml
from tests.launch.conftest import H100


def _prediction(pct: float, busy_s: float, started: float, ended: float) -> PredictedOccupancy:
    return PredictedOccupancy(
        "cuda:0",
        "NVIDIA H100",
        LaunchConfig(Dim3(264), Dim3(256)),
        pct,
        32,
        64,
        ("registers",),
        busy_s,
        1,
        started,
        ended,
    )


def test_the_expected_reading_scales_the_prediction_by_the_share_of_the_window_the_kernel_ran():
    assert expected_reading(50.0, 0.25, 1.0) == 12.5
    assert expected_reading(50.0, 3.0, 1.0) == 50.0  # a kernel filling the window reads all of it
    assert expected_reading(80.0, 0.0, 1.0) == 0.0
    with pytest.raises(ValueError, match="the GPM window is 0.0 s"):
        expected_reading(50.0, 0.1, 0.0)
    with pytest.raises(ValueError, match="the kernel ran -1 s"):
        expected_reading(50.0, -1, 1.0)
    assert compare(50.0, 59.9).within and not compare(50.0, 60.1).within
    assert compare(50.0, 40.0, 10).within and compare(50.0, 44.0, 5).within is False
    assert "+9.9 points from the expected 50.0 % (within 10 points)" in compare(50.0, 59.9).text


def _brute(times: list[int], occupancy_ms: list[float], start: int, end: int) -> tuple[float, float]:
    """The covering windows found by trying every pair of readings (the tightest that holds the
    run), and GPM's average over them: the mean of the millisecond timeline."""
    best = None
    for i in range(len(times)):
        for j in range(i + 1, len(times)):
            if (
                times[i] <= start
                and times[j] >= end
                and (best is None or times[j] - times[i] < best[1] - best[0])
            ):
                best = (times[i], times[j])
    assert best is not None
    lo, hi = best
    return sum(occupancy_ms[lo:hi]) / (hi - lo), hi - lo


def test_the_join_matches_a_brute_force_over_random_timelines():
    rng = random.Random(7)
    checked = 0
    for case in range(3000):
        n = rng.randint(2, 8)
        gaps = [rng.randint(1, 1500) for _ in range(n - 1)]
        times = [rng.randint(0, 100)]
        for g in gaps:
            times.append(times[-1] + g)
        span = times[-1]
        occupancy_ms = [0.0] * span
        predicted = rng.uniform(0, 100)
        start = rng.randint(times[0], span - 1) if case % 5 else times[0]  # smallest: at a reading
        end = rng.randint(start + 1, span) if case % 7 else min(span, start + 1)  # a 1-ms run
        k0 = rng.randint(start, end - 1)
        k1 = rng.randint(k0 + 1, end)
        for t in range(k0, k1):
            occupancy_ms[t] = predicted
        readings = []
        for i, t in enumerate(times):
            value = sum(occupancy_ms[times[i - 1] : t]) / (t - times[i - 1]) if i else 0.0
            readings.append(LiveReading(timestamp_s=t / 1e3, sm_occupancy_pct=value))
        truth = occupancy_truth(_prediction(predicted, (k1 - k0) / 1e3, start / 1e3, end / 1e3), readings)
        measured, window_ms = _brute(times, occupancy_ms, start, end)
        assert truth.window_s == pytest.approx(window_ms / 1e3)
        assert truth.agreement is not None
        assert truth.agreement.measured_pct == pytest.approx(measured, abs=1e-9)
        # GPM is the exact average here, so the expected reading is what it read
        assert truth.agreement.expected_pct == pytest.approx(measured, abs=1e-9) and truth.agreement.within
        checked += 1
    assert checked == 3000


def test_no_comparison_before_the_covering_reading_or_without_gpm():
    p = _prediction(50.0, 0.01, 10.0, 10.5)
    r = [
        LiveReading(timestamp_s=9.5, sm_occupancy_pct=0.0),
        LiveReading(timestamp_s=10.2, sm_occupancy_pct=1.0),
    ]
    assert "waiting for the GPM reading" in occupancy_truth(p, r).why
    late = [r[1], LiveReading(timestamp_s=11.0, sm_occupancy_pct=1.0)]
    assert "no reading was taken before the run began" in occupancy_truth(p, late).why
    gone = LiveReading(timestamp_s=11.0)
    gone.unavailable.mark("sm_occupancy_pct", "NVML's GPM metrics are not available for this GPU")
    truth = occupancy_truth(p, [*r, gone])
    assert truth.agreement is None and "not available for this GPU" in truth.why
    assert truth.lines()[-1] == truth.why


def test_gpm_sample_pairs_through_nvml_give_the_readings_the_join_compares():
    fake = make_fake_nvml([hopper_gpu()])
    now = [100.0]
    plan = plan_launch(LaunchConfig(Dim3(132 * 8), Dim3(256)), H100)
    with NvmlSession(fake, clock=lambda: now[0]) as session:
        readings = [session.read_live(0)]  # primes GPM: no value yet
        for t, pct in ((101.0, 3.0), (102.0, 40.0), (103.0, 2.0)):
            now[0] = t
            fake.gpus[0].sm_occupancy_pct = pct
            readings.append(session.read_live(0))
    assert [r.sm_occupancy_pct for r in readings] == [None, 3.0, 40.0, 2.0]
    # a kernel of 0.8 s at the plan's occupancy inside the second from 101 to 102
    prediction = PredictedOccupancy.from_plan("cuda:0", "H100", plan, 0.8, 101.05, 101.95)
    truth = occupancy_truth(prediction, readings)
    assert truth.windows == 1 and truth.window_s == 1.0
    expected = 100 * plan.occupancy.occupancy * 0.8
    assert truth.agreement.expected_pct == pytest.approx(expected)
    assert truth.agreement.within == (abs(40.0 - expected) <= 10)
    assert "run for real" in truth.lines()[0] and "expected" in truth.lines()[1]
