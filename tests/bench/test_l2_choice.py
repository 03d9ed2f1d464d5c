"""A cold or a warm L2, said with every GPU memory point: in its record, its timing method, the CLI's
line, and, beside a warm point above the DRAM roof only, why it can be there."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from explorer.bench import peaks
from explorer.bench import wl_numba as W
from explorer.bench.lines import format_point
from explorer.bench.results import BenchPoint
from explorer.bench.timing import Timing

DRAM_GBPS = 4800.0  # an H200's HBM3e


@pytest.fixture
def dram_roof(monkeypatch):
    roof = SimpleNamespace(main_memory=lambda: SimpleNamespace(value=DRAM_GBPS))
    monkeypatch.setattr(peaks, "worker_roof", lambda device: roof)


def _timing(seconds: float) -> Timing:
    return Timing(seconds, 0.0, seconds, 5, 1, "perf_counter + sync", [seconds] * 5)


def test_cold_points_say_so_and_how_much_was_written(dram_roof):
    flush = SimpleNamespace(
        nbytes=120 * 2**20, words="L2 flushed before each sample (a 120 MiB write, twice the L2)"
    )
    extra: dict[str, float | str] = {}
    timing = _timing(1e-6)  # far above the DRAM roof: cold, there is nothing to explain
    W.l2_record(extra, timing, flush, "cuda:0", 16e6)
    assert extra == {"l2": "cold", "l2_flush_bytes": float(120 * 2**20)}
    assert (
        timing.method == "perf_counter + sync; L2 flushed before each sample (a 120 MiB write, twice the L2)"
    )


@pytest.mark.parametrize("seconds,above", [(16e6 / 9000e9, True), (16e6 / 4000e9, False)])
def test_a_warm_point_explains_itself_only_above_the_dram_roof(dram_roof, seconds, above):
    extra: dict[str, float | str] = {}
    timing = _timing(seconds)
    W.l2_record(extra, timing, None, "cuda:0", 16e6)  # a 16 MB vector add
    assert extra["l2"] == "warm" and timing.method.endswith("; L2 warm (not flushed between samples)")
    if above:
        note = str(extra["l2_note"])
        assert "A 16 MB vector add warm can exceed the DRAM roof; cold" in note and "it cannot" in note
        assert note.endswith("(the DRAM roof here: 4,800 GB/s)")
    else:
        assert "l2_note" not in extra


def _point(**extra: float | str) -> BenchPoint:
    return BenchPoint(
        workload="vector_add",
        variant="cuda:0 numba kernel",
        device="cuda:0",
        size=1_333_333,
        size_label="N=1,333,333",
        variant_key="numba_kernel",
        median_s=2e-6,
        spread_s=1e-8,
        min_s=2e-6,
        repeats=5,
        throughput=8000.0,
        throughput_unit="GB/s",
        extra=dict(extra),
    )


def test_the_cli_line_says_cold_or_warm_and_why_a_warm_point_is_above_dram():
    cold = format_point(_point(l2="cold"))
    assert "  L2 cold" in cold and "WHY ABOVE DRAM" not in cold
    warm = format_point(_point(l2="warm", l2_note=W.WARM_ABOVE_DRAM))
    assert "  L2 warm" in warm
    assert warm.endswith(f"WHY ABOVE DRAM: {W.WARM_ABOVE_DRAM}")
    # a CPU point, or one of a workload without the choice, says nothing about an L2
    assert "L2" not in format_point(_point())
