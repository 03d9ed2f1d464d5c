"""Benchmark points made by hand for the tests whose subject is not the timing (a table's layout,
a file's round trip, an export): one builder, so each test states only what it is about."""

from __future__ import annotations

from typing import Any

from explorer.bench.results import BenchPoint


def cpu_matmul_point(n: int, gflops: float, **fields: Any) -> BenchPoint:
    """A CPU matmul point at size ``n`` running at ``gflops`` (its median follows from 2 n^3
    FLOP), with any other ``BenchPoint`` field given."""
    values: dict[str, Any] = {
        "workload": "matmul",
        "variant": "cpu",
        "device": "cpu",
        "size": n,
        "size_label": f"n={n}",
        "median_s": 2 * n**3 / (gflops * 1e9),
        "throughput": gflops,
        "throughput_unit": "GFLOP/s",
    }
    values.update(fields)
    return BenchPoint(**values)
