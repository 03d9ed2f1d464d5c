"""The timing maths, driven by a fake clock so every expected figure is exact."""

from __future__ import annotations

import pytest

from explorer.bench.timing import measure, settled, summarize


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


def scripted_step(clock: FakeClock, durations: list[float]):
    """A step whose n-th call takes durations[n] seconds (the last one repeats)."""
    calls = {"n": 0}

    def step() -> None:
        i = min(calls["n"], len(durations) - 1)
        clock.advance(durations[i])
        calls["n"] += 1

    step.calls = calls  # type: ignore[attr-defined]
    return step


def test_summarize_median_and_iqr_of_known_samples():
    t = summarize([1.0, 2.0, 3.0, 4.0, 5.0])
    assert t.median_s == 3.0
    assert t.spread_s == pytest.approx(2.0)  # Q1 = 2, Q3 = 4 (inclusive quartiles)
    assert t.min_s == 1.0 and t.repeats == 5


def test_summarize_under_four_samples_uses_max_minus_min():
    t = summarize([0.5, 0.1, 0.3])
    assert t.median_s == 0.3
    assert t.spread_s == pytest.approx(0.4)


def test_summarize_divides_grouped_samples_per_step():
    t = summarize([10.0, 20.0, 30.0, 40.0], steps_per_sample=10)
    assert t.median_s == pytest.approx(2.5)
    assert t.samples_s == [1.0, 2.0, 3.0, 4.0]


def test_summarize_rejects_no_samples():
    with pytest.raises(ValueError):
        summarize([])


def test_warmup_is_excluded_and_repeats_are_exact():
    clock = FakeClock()
    # first call (JIT, allocator) takes 100 s; warm-up goes on until two calls agree within 10%
    # (0.5, 0.3, 0.31); then the measured ones.
    step = scripted_step(clock, [100.0, 0.5, 0.3, 0.31, 0.2, 0.4, 0.3, 0.3, 0.3])
    t = measure(step, repeats=5, budget_s=10_000.0, clock=clock)
    assert t.repeats == 5
    assert t.samples_s == pytest.approx([0.2, 0.4, 0.3, 0.3, 0.3])
    assert t.median_s == pytest.approx(0.3)
    assert t.min_s == pytest.approx(0.2)


def test_sync_is_inside_the_timed_region():
    clock = FakeClock()
    step = scripted_step(clock, [0.01])

    def sync() -> None:  # the device needs 0.09 s more to finish what was queued
        clock.advance(0.09)

    t = measure(step, sync, repeats=4, budget_s=100.0, clock=clock, warmup=0)
    assert t.median_s == pytest.approx(0.01 + 0.09)  # the step's launch plus the wait for the device


def test_naive_timing_leaves_the_sync_out_of_the_clock():
    clock = FakeClock()
    step = scripted_step(clock, [0.01])
    synced_calls = {"n": 0}

    def sync() -> None:
        synced_calls["n"] += 1
        clock.advance(0.09)

    t = measure(step, sync, repeats=4, budget_s=100.0, clock=clock, warmup=0, naive=True)
    assert t.median_s == pytest.approx(0.01)  # launches only: the lesson's wrong figure
    assert synced_calls["n"] >= 4  # yet the queue is drained after every sample


def test_stops_when_the_budget_is_spent():
    clock = FakeClock()
    step = scripted_step(clock, [1.0, 1.0, 1.0, 2.0, 1.0, 3.0])  # never settles: spread stays wide
    t = measure(step, budget_s=5.0, clock=clock, warmup=0)
    assert 3 <= t.repeats <= 5
    assert clock.t <= 5.0 + 3.0 + 1.0  # at most one sample past the budget (plus the warm-up)


def test_one_sample_longer_than_the_budget_is_enough():
    clock = FakeClock()
    step = scripted_step(clock, [10.0])
    t = measure(step, budget_s=1.0, clock=clock, warmup=0)
    assert t.repeats == 1 and t.median_s == pytest.approx(10.0)


def test_stops_early_once_the_spread_settles():
    clock = FakeClock()
    step = scripted_step(clock, [0.1])
    t = measure(step, budget_s=1000.0, clock=clock, min_samples=5, warmup=0)
    assert t.repeats == 5
    assert t.spread_s == pytest.approx(0.0)


def test_short_steps_are_grouped_and_reported_per_step():
    clock = FakeClock()
    step = scripted_step(clock, [1e-5])
    t = measure(step, repeats=4, budget_s=10.0, clock=clock, warmup=0)
    assert t.steps_per_sample > 1
    assert t.median_s == pytest.approx(1e-5)


def test_settled_needs_enough_samples_and_a_small_spread():
    assert not settled([1.0, 1.0, 1.0])
    assert settled([1.0] * 6)
    assert not settled([1.0, 2.0, 1.0, 2.0, 1.0, 2.0])


def test_a_compile_in_the_first_call_does_not_eat_the_budget():
    """A numba kernel's first call compiles (1.2 s here) under a 1 s budget: the H100 run gave 3
    cold samples with a spread larger than the median until the budget started after it."""
    clock = FakeClock()
    step = scripted_step(clock, [1.2, 0.002, 0.0011, 0.0012, 0.0011, 0.0011, 0.0012, 0.0011])
    t = measure(step, budget_s=1.0, clock=clock)
    assert t.repeats >= 5
    assert t.median_s == pytest.approx(0.0011, rel=0.1)
    assert t.spread_s < t.median_s / 10


@pytest.mark.parametrize("naive", [False, True])
def test_between_runs_before_every_sample_and_its_time_is_never_in_one(naive):
    """The cold-L2 hook: before each sample, untimed, its own device work drained before the clock
    starts; and each sample is one step even where the step is short enough to be grouped."""
    clock = FakeClock()
    events: list[str] = []
    device = {"pending": 0.0}  # device work queued and not yet waited for

    def step() -> None:
        clock.advance(1e-5 + device["pending"])  # a step queued behind unfinished work waits for it
        device["pending"] = 0.0
        events.append("step")

    def sync() -> None:
        clock.advance(device["pending"])
        device["pending"] = 0.0

    def flush() -> None:
        clock.advance(0.25)  # the hook's host side
        device["pending"] = 0.5  # and its device side, finished only at a synchronize
        events.append("between")

    t = measure(step, sync, repeats=6, budget_s=100.0, clock=clock, warmup=1, naive=naive, between=flush)
    assert t.steps_per_sample == 1
    assert t.repeats == 6
    assert t.samples_s == pytest.approx([1e-5] * 6, abs=1e-12)
    timed = events[2:]  # after the two warm-up steps, which the hook does not precede
    assert events[:2] == ["step", "step"]
    assert timed == ["between", "step"] * 6


def test_between_leaves_budgeted_sampling_one_step_per_sample():
    clock = FakeClock()
    step = scripted_step(clock, [1e-5])
    calls = {"n": 0}

    def flush() -> None:
        calls["n"] += 1
        clock.advance(0.01)

    t = measure(step, budget_s=1.0, clock=clock, warmup=0, between=flush)
    assert t.steps_per_sample == 1
    assert calls["n"] == t.repeats
    assert t.median_s == pytest.approx(1e-5)
    other = FakeClock()
    grouped = measure(scripted_step(other, [1e-5]), repeats=4, budget_s=10.0, clock=other, warmup=0)
    assert grouped.steps_per_sample > 1  # the same step without the hook is grouped
