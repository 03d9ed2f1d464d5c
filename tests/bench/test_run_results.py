"""The panel's results model: one run per workload, never two workloads' points together."""

from __future__ import annotations

import pytest

from explorer.bench.results import BenchPoint
from explorer.bench.run_results import RunResults


def point(workload: str, size: int, noisy: bool = False) -> BenchPoint:
    return BenchPoint(workload, "cpu", "cpu", size, f"n={size}", median_s=1e-3, repeats=5, noisy=noisy)


def test_points_go_to_their_own_workload_and_only_the_shown_one_is_listed():
    r = RunResults()
    r.start_run("matmul")
    assert r.add(point("matmul", 64)) and r.add(point("matmul", 128, noisy=True))
    assert [p.size for p in r.points] == [64, 128]
    assert r.noisy_count() == 1
    assert r.show("vector_add") and r.points == []
    assert not r.add(point("matmul", 256))  # a late point of the matmul run is kept, not shown
    assert r.show("matmul") and [p.size for p in r.points] == [64, 128, 256]


def test_a_new_run_replaces_only_its_own_workloads_points():
    r = RunResults()
    r.start_run("matmul")
    r.add(point("matmul", 64))
    r.start_run("vector_add")
    r.add(point("vector_add", 1000))
    r.start_run("matmul")
    assert r.shown == "matmul" and r.points == []
    assert [p.size for p in r.points_of("vector_add")] == [1000]
    assert r.workloads() == ["vector_add"]


def test_a_restored_run_must_be_one_workload():
    r = RunResults()
    r.set_run("matmul", [point("matmul", 64)])
    with pytest.raises(ValueError, match="cannot hold points of vector_add"):
        r.set_run("matmul", [point("matmul", 64), point("vector_add", 10)])
    assert not r.show("") and r.points == []
