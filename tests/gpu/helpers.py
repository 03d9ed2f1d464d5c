"""Helpers the GPU tests share."""

from __future__ import annotations

from explorer.bench.execute import PointSpec, run_point


def point(
    workload: str,
    key: str,
    size: int,
    device: str = "cuda:0",
    budget_s: float = 0.3,
    repeats: int | None = None,
):
    """One benchmark point measured in this process, as the worker measures it."""
    from explorer.bench.workloads import get_workload

    w = get_workload(workload)
    series = w.variant(key).series_name(device)
    p, fatal = run_point(
        PointSpec(0, workload, device, series, key, size, repeats=repeats, budget_s=budget_s), w
    )
    assert not fatal, p.error
    return p
