"""The worker-process runner: streaming order, cancel, a crashing and a hanging point."""

from __future__ import annotations

import threading
import time

import psutil
import pytest

from explorer.bench.results import BenchPoint
from explorer.bench.runner import BenchPlan, BenchRun, Progress, plan_points
from explorer.bench.wl_selftest import HANG_MARK_ENV
from explorer.errors import UserError
from tests.processes import wait_until


def test_plan_orders_points_by_size_then_device_then_variant():
    specs = plan_points(BenchPlan("vector_add", ["cpu", "cuda:0"], sizes=[2000, 1000]))
    got = [(s.size, s.variant) for s in specs]
    assert got == [
        (1000, "cpu numpy"),
        (1000, "cuda:0 numba kernel"),
        (1000, "cuda:0 numba with copies"),
        (2000, "cpu numpy"),
        (2000, "cuda:0 numba kernel"),
        (2000, "cuda:0 numba with copies"),
    ]
    assert [s.index for s in specs] == list(range(6))


def test_plan_uses_each_devices_default_sizes():
    specs = plan_points(BenchPlan("matmul", ["cpu", "cuda:0"]))
    assert max(s.size for s in specs if s.device == "cpu") == 2048
    assert max(s.size for s in specs if s.device == "cuda:0") == 8192


@pytest.mark.parametrize(
    "plan,needle",
    [
        (BenchPlan("matmul", ["cpu"], sizes=[0]), "got '0'"),
        (BenchPlan("matmul", ["cpu"], sizes=[-4]), "got '-4'"),
        (BenchPlan("matmul", ["gpu"]), "device 'gpu' is not"),
        (BenchPlan("matmul", []), "no device"),
        (BenchPlan("matmul", ["cpu"], repeats=0), "repeats"),
        (BenchPlan("nope", ["cpu"]), "unknown workload"),
    ],
)
def test_bad_plans_are_one_line_user_errors(plan, needle):
    with pytest.raises(UserError) as err:
        BenchRun(plan)
    assert needle in str(err.value)


@pytest.mark.slow
def test_points_stream_in_order_with_progress():
    run = BenchRun(BenchPlan("matmul", ["cpu"], sizes=[16, 48], repeats=3, time_budget_s=0.2))
    events = list(run.events())
    assert isinstance(events[0], Progress) and events[0].done == 0 and events[0].total == 2
    points = [e for e in events if isinstance(e, BenchPoint)]
    assert [p.size for p in points] == [16, 48]
    assert all(p.error is None and p.median_s > 0 and p.repeats == 3 for p in points)
    progress = [e for e in events[1:] if isinstance(e, Progress)]
    assert [p.done for p in progress] == [1, 2] and progress[-1].eta_s == 0
    # each point arrives before the progress that counts it
    assert isinstance(events[1], BenchPoint) and isinstance(events[2], Progress)
    assert run.workers_started == 1  # one worker serves the whole run


@pytest.mark.slow
def test_a_crashing_point_becomes_an_error_row_and_the_run_continues():
    run = BenchRun(BenchPlan("_crash_test", ["cpu"], sizes=[1, 2, 3], repeats=2))
    points = run.run_all()
    assert [p.size for p in points] == [1, 2, 3]
    assert points[0].error is None and points[2].error is None
    assert "crashed" in points[1].error and points[1].median_s is None
    assert run.workers_started == 2


@pytest.mark.slow
def test_the_last_points_error_row_promises_no_worker_to_come():
    """The last point of a run said "a new worker continues the run"."""
    points = BenchRun(BenchPlan("_crash_test", ["cpu"], sizes=[1, 2], repeats=2)).run_all()
    assert points[1].error is not None and "crashed" in points[1].error
    assert "continues" not in points[1].error and "connects again" not in points[1].error
    points = BenchRun(BenchPlan("_crash_test", ["cpu"], sizes=[2, 3], repeats=2)).run_all()
    assert "a new worker continues the run" in (points[0].error or "")  # one still follows


@pytest.mark.slow
def test_a_hanging_point_is_stopped_at_the_time_limit():
    run = BenchRun(BenchPlan("_hang_test", ["cpu"], sizes=[1, 2, 3], repeats=2, point_timeout_s=1.5))
    t0 = time.monotonic()
    points = run.run_all()
    assert [p.size for p in points] == [1, 2, 3]
    assert "time limit of 1.5 s" in points[1].error and points[1].median_s is None
    assert points[0].error is None and points[2].error is None
    assert time.monotonic() - t0 < 30
    assert run.workers_started == 2


@pytest.mark.slow
def test_cancel_ends_the_run_quickly_and_kills_the_worker(tmp_path, monkeypatch):
    mark = tmp_path / "hanging"
    monkeypatch.setenv(HANG_MARK_ENV, str(mark))
    run = BenchRun(BenchPlan("_hang_test", ["cpu"], sizes=[1, 2, 3], repeats=2, point_timeout_s=600))
    seen: list = []
    procs: list = []

    def consume() -> None:
        for e in run.events():
            seen.append(e)
            if isinstance(e, BenchPoint) and run.worker_pid is not None:
                procs.append(psutil.Process(run.worker_pid))

    th = threading.Thread(target=consume)
    th.start()
    wait_until(mark.exists, None, 60, "the worker hung in the size-2 point")
    run.cancel()
    th.join(120)  # the point hangs for 600 s: ending well before that means the cancel stopped it
    assert not th.is_alive()
    assert [e.size for e in seen if isinstance(e, BenchPoint)] == [1]  # no row for the cancelled point
    assert procs and not procs[0].is_running()


def test_two_gpu_workload_runs_once_on_the_first_gpu_with_the_second_as_partner():
    specs = plan_points(BenchPlan("two_gpus", ["cpu", "cuda:1", "cuda:0"], sizes=[64]))
    assert [(s.device, s.partner) for s in specs] == [("cpu", None)] + [("cuda:1", "cuda:0")] * 3
    assert plan_points(BenchPlan("two_gpus", ["cuda:0"], sizes=[64]))[0].partner is None


@pytest.mark.slow
def test_low_priority_worker_runs_below_the_parent():
    import os

    run = BenchRun(BenchPlan("_crash_test", ["cpu"], sizes=[1], repeats=1, low_priority=True))
    events = run.events()
    next(events)  # Progress(0): the worker is started with the first point
    point = next(events)
    assert point.error is None
    child = psutil.Process(run.worker_pid)
    if os.name == "posix":
        assert child.nice() > psutil.Process().nice()
    events.close()
    assert not child.is_running()


@pytest.mark.slow
def test_out_of_memory_is_an_error_row_and_the_same_worker_goes_on():
    run = BenchRun(BenchPlan("_oom_test", ["cpu"], sizes=[1, 2, 3], repeats=2))
    points = run.run_all()
    assert points[1].error.startswith("out of memory") and "\n" not in points[1].error
    assert points[0].error is None and points[2].error is None
    assert run.workers_started == 1
