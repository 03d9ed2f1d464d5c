"""The noise verdict: synthetic loads and samples in, ``noisy`` and the reason in words out.

Each case is a situation a student's laptop is in: quiet, a second program on the other core, two
busy programs, a hypervisor taking time, a sample run whose conditions changed half way.
"""

from __future__ import annotations

import time

import pytest

from explorer.bench import noise
from explorer.bench.execute import MAX_ATTEMPTS, Outcome, PointSpec, measure_until_quiet
from explorer.bench.noise import Load, Verdict, noise_verdict
from explorer.bench.timing import summarize

# A settled point: 100 samples around 1 ms
STEADY = dict(median_s=1.0e-3, min_s=0.97e-3, spread_s=0.02e-3, repeats=100)


def load(*, wall=1.0, own=2.0, others=0.02, cpus=2, steal=0.0, waiting=0.0):
    return Load(wall_s=wall, own_cpu_s=own, others_cpu_s=others, cpus=cpus, steal_s=steal, waiting_s=waiting)


def test_a_quiet_point_is_not_marked():
    v = noise_verdict(load(), threads=2, **STEADY)
    assert v == Verdict(False, "")


def test_other_programs_on_all_cores_mark_a_two_thread_point_and_say_how_much():
    # two busy programs on a 2-core machine: they got 0.96 of the 2 core-seconds
    v = noise_verdict(load(others=0.96, waiting=0.9), threads=2, **STEADY)
    assert v.noisy
    assert v.reason.startswith("other programs used 48% of the CPU during this point")
    assert "waited for a CPU 45% of the time" in v.reason


def test_a_program_on_the_free_core_does_not_mark_a_one_thread_point():
    # numpy's one thread on core 0, another program busy on core 1: nothing competed
    assert not noise_verdict(load(own=1.0, others=1.0), threads=1, **STEADY).noisy
    # but the same program against two threads takes cores they needed
    assert noise_verdict(load(own=1.0, others=1.0), threads=2, **STEADY).noisy


def test_others_share_is_judged_beyond_the_clock_tick_resolution():
    # 0.15 of a 0.1 s region is a few clock ticks: too coarse to call noisy on its own
    short = load(wall=0.1, own=0.2, others=0.03)
    assert short.others_share() == pytest.approx(0.15)
    assert not noise_verdict(short, threads=2, **STEADY).noisy
    # the same share over 2 s is measured well enough
    assert noise_verdict(load(wall=2.0, own=4.0, others=0.6), threads=2, **STEADY).noisy


def test_waiting_for_a_cpu_marks_the_point_even_when_the_machine_looks_idle_to_psutil():
    v = noise_verdict(load(waiting=0.5), threads=2, **STEADY)
    assert v.noisy and v.reason.startswith("its threads waited for a CPU 25% of the time")
    assert not noise_verdict(load(waiting=0.1), threads=2, **STEADY).noisy  # 5%: scheduler jitter


def test_without_run_queue_figures_own_cpu_time_stands_in_for_preemption():
    ran_half = Load(wall_s=1.0, own_cpu_s=0.5, others_cpu_s=0.0, cpus=2, waiting_s=None)
    v = noise_verdict(ran_half, threads=1, **STEADY)
    assert v.noisy and "ran only 50% of the time" in v.reason
    # a GPU point's thread sleeps while the GPU works: its low CPU time is no sign of anything
    assert not noise_verdict(ran_half, threads=1, on_cpu=False, **STEADY).noisy


def test_steal_time_is_reported_where_the_os_gives_it():
    v = noise_verdict(load(steal=0.3), threads=2, **STEADY)
    assert v.noisy and "hypervisor gave 15% of the CPU to other virtual machines" in v.reason
    assert not noise_verdict(load(steal=None), threads=2, **STEADY).noisy


def test_steal_within_tick_resolution_or_a_few_percent_is_not_a_disturbance():
    # 7% stolen over a short region is a handful of 10 ms ticks: the quiet cloud VM's normal state
    assert not noise_verdict(load(wall=0.3, steal=0.042), threads=2, **STEADY).noisy
    # the same share over a long region is still under the bar (10%, as for other programs)
    assert not noise_verdict(load(wall=5.0, steal=0.7), threads=2, **STEADY).noisy
    v = noise_verdict(load(wall=5.0, steal=1.5), threads=2, **STEADY)
    assert v.noisy and "hypervisor gave 15%" in v.reason


def test_wide_spread_and_median_far_above_min_mark_a_point():
    v = noise_verdict(load(), threads=2, median_s=1e-3, min_s=0.9e-3, spread_s=0.4e-3, repeats=50)
    assert v.noisy and v.reason == "its samples spread widely (IQR 40% of the median)"
    v = noise_verdict(load(), threads=2, median_s=8e-3, min_s=1e-3, spread_s=0.1e-3, repeats=50)
    assert v.noisy and v.reason == "the median is 8.0x the fastest sample"
    # three samples have no quartiles to speak of: their max - min is not judged as an IQR
    assert not noise_verdict(load(), threads=2, median_s=1e-3, min_s=0.9e-3, spread_s=0.4e-3, repeats=3).noisy


def test_every_cause_found_is_named_with_the_machine_first():
    v = noise_verdict(
        load(others=1.0, waiting=1.0), threads=2, median_s=8e-3, min_s=1e-3, spread_s=4e-3, repeats=20
    )
    parts = v.reason.split("; ")
    assert parts[0].startswith("other programs used 50%")
    assert len(parts) == 4


def test_no_load_figures_still_judges_the_samples():
    assert not noise_verdict(None, threads=1, **STEADY).noisy
    assert noise_verdict(None, threads=1, median_s=3e-3, min_s=1e-3, spread_s=0, repeats=9).noisy


def test_observing_the_machine_around_busy_work_reads_sane_figures():
    start = noise.observe_start()
    c0 = time.process_time()
    while time.process_time() - c0 < 0.1:  # spin for 0.1 s of CPU, however busy the machine is
        pass
    got = noise.observe_end(start)
    assert got.own_cpu_s >= 0.1 and got.wall_s >= got.own_cpu_s * 0.95
    assert got.others_cpu_s >= 0 and got.cpus >= 1
    if got.waiting_s is not None:
        # a spinning thread is either on a CPU or waiting for one
        assert got.own_cpu_s + got.waiting_s >= 0.7 * got.wall_s
        assert got.waiting_s <= got.wall_s


# --- re-measure policy -------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def scripted_attempts(clock: Clock, medians: list[float], noisy: list[bool], took_s: float):
    """A run function whose n-th attempt takes ``took_s`` and measures ``medians[n]``; the judge
    marks attempt n as ``noisy[n]``. Records the budget each attempt was given."""
    budgets: list[float] = []

    def run(spec: PointSpec) -> Outcome:
        budgets.append(spec.budget_s)
        clock.t += took_s
        return Outcome(summarize([medians[len(budgets) - 1]] * 5))

    def judge_attempt(out: Outcome, spec: PointSpec) -> Verdict:
        i = medians.index(out.timing.median_s)
        return Verdict(noisy[i], f"attempt {i} disturbed" if noisy[i] else "")

    return run, judge_attempt, budgets


def spec(budget_s: float = 2.0) -> PointSpec:
    return PointSpec(0, "matmul", "cpu", "cpu", variant_key="plain", size=64, budget_s=budget_s)


def test_a_quiet_first_attempt_is_kept_and_not_remeasured():
    clock = Clock()
    run, judge_attempt, budgets = scripted_attempts(clock, [1.0], [False], took_s=0.5)
    out, verdict, again = measure_until_quiet(run, spec(), judge_attempt, clock)
    assert (out.timing.median_s, verdict.noisy, again) == (1.0, False, 0)
    assert budgets == [pytest.approx(0.8)]  # the first attempt leaves room for a second


def test_a_disturbed_point_is_remeasured_and_the_quiet_attempt_kept():
    clock = Clock()
    run, judge_attempt, budgets = scripted_attempts(clock, [9.0, 1.0], [True, False], took_s=0.5)
    out, verdict, again = measure_until_quiet(run, spec(), judge_attempt, clock)
    assert (out.timing.median_s, verdict, again) == (1.0, Verdict(False, ""), 1)
    assert budgets[1] == pytest.approx(1.5)  # the rest of the point's budget


def test_a_point_disturbed_every_time_keeps_its_fastest_attempt_marked():
    clock = Clock()
    run, judge_attempt, _ = scripted_attempts(clock, [9.0, 3.0, 5.0], [True, True, True], took_s=0.1)
    out, verdict, again = measure_until_quiet(run, spec(), judge_attempt, clock)
    assert out.timing.median_s == 3.0
    assert verdict == Verdict(True, "attempt 1 disturbed")
    assert again == MAX_ATTEMPTS - 1


def test_no_remeasure_when_the_budget_has_no_room_for_another_attempt():
    clock = Clock()
    # 1.7 s of 2 s spent: 0.3 s left is under half the first attempt's 0.8 s
    run, judge_attempt, budgets = scripted_attempts(clock, [9.0, 1.0], [True, False], took_s=1.7)
    out, verdict, again = measure_until_quiet(run, spec(), judge_attempt, clock)
    assert (out.timing.median_s, verdict.noisy, again, len(budgets)) == (9.0, True, 0, 1)


@pytest.mark.parametrize(
    "max_threads,cpus,busy,expected",
    [
        (2, 2, 0.05, 2),  # quiet: every core
        (2, 2, 0.4, 2),  # a little background: still both
        (2, 2, 0.6, 1),  # one core's worth taken: one thread, no barrier to wait at
        (2, 2, 1.9, 1),  # two busy programs: one thread, never none
        (8, 16, 3.0, 8),  # torch's own count is the ceiling
        (16, 16, 5.2, 11),
    ],
)
def test_a_cpu_point_uses_one_thread_per_free_core(max_threads, cpus, busy, expected):
    assert noise.threads_to_use(max_threads, cpus, busy) == expected


def test_a_point_that_gave_threads_up_to_other_programs_is_marked_with_why():
    # two busy programs: the point ran steadily on 1 thread, but 1.5-2.2x the quiet 2-thread figure
    v = noise_verdict(load(), threads=1, threads_quiet=2, others_busy_at_start=1.9, **STEADY)
    assert v.noisy and v.reason == "other programs kept 1.9 cores busy, so it ran on 1 of 2 threads"
    # every thread it would have used on a quiet machine: nothing to say
    assert not noise_verdict(load(), threads=2, threads_quiet=2, **STEADY).noisy
    # a GPU point (no CPU thread choice) is not judged on threads
    assert not noise_verdict(load(), threads=1, threads_quiet=None, **STEADY).noisy


def test_numpy_blas_gets_the_threads_other_programs_leave_free_and_the_point_says_so(monkeypatch):
    """numpy's matvec runs on OpenBLAS, whose threads torch's setting does not reach: with two other
    programs busy on a 2-core machine it must run on one thread, the point must say so, and BLAS
    must get its own count back afterwards (the next point may find the machine quiet)."""
    import os

    from threadpoolctl import threadpool_info

    from explorer.bench import execute
    from explorer.bench.workloads import get_workload

    def blas_counts():
        return [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]

    import numpy  # noqa: F401 - loads the BLAS threadpoolctl looks for

    before = blas_counts()
    if not before or max(before) < 2:
        pytest.skip("numpy's BLAS here has fewer than 2 threads to give up")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(execute, "others_busy_cores", lambda: 1.9)
    seen = []
    real_time_plain = execute.time_plain

    def spying_time_plain(*args, **kwargs):
        seen.append(blas_counts())
        return real_time_plain(*args, **kwargs)

    monkeypatch.setattr("explorer.bench.wl_numba.time_plain", spying_time_plain)
    point, fatal = execute.run_point(
        PointSpec(0, "matvec", "cpu", "cpu numpy", variant_key="numpy", size=256, repeats=3, budget_s=0.3),
        get_workload("matvec"),
    )
    assert not fatal and point.error is None
    assert seen and all(max(c) == 1 for c in seen)
    assert point.threads == 1
    assert point.noisy and "ran on 1 of 2 threads" in point.noise_reason
    assert "other programs kept 1.9 cores busy" in point.extra["threads_note"]
    assert blas_counts() == before
