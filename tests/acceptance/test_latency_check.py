"""The latency-ladder check's judgement, with ladders as fixtures: levels ordered L1 < L2 < DRAM
and each (and shared memory) within +-30% of the published Hopper range; the check itself runs on
the GPU machine."""

from __future__ import annotations

from explorer.acceptance.judge import ladder_figures, status_of
from explorer.acceptance.registry import CHECKS
from explorer.roofs.latency import LatencyLadder, LatencyRung


def _ladder(l1: float, l2: float, dram: float, shared: float | None = 30.0) -> LatencyLadder:
    cycles = (l1, l1, l1 * 1.02, l2, l2, l2 * 1.03, dram, dram * 1.01)
    rungs = tuple(LatencyRung(4096 << k, c, c / 1.98) for k, c in enumerate(cycles))
    return LatencyLadder("NVIDIA H200", 1.0, rungs, shared, 1980.0, "pointer chase", 20000)


def test_a_hopper_like_ladder_passes():
    ok, figures = ladder_figures(_ladder(35, 250, 700))
    assert ok and status_of(ok, figures) == "pass"
    assert [f.name for f in figures] == ["shared latency", "L1 latency", "L2 latency", "DRAM latency"]
    assert [round(f.value) for f in figures] == [30, 35, 250, 704]  # DRAM: the median of 700 and 707
    assert all(f.met for f in figures) and "ns at 1980 MHz" in figures[3].note


def test_a_level_past_thirty_percent_of_the_published_range_is_a_miss():
    _ok, figures = ladder_figures(_ladder(35, 250, 830 * 1.35))
    assert [f.met for f in figures] == [True, True, True, False]
    assert status_of(True, figures) == "miss"
    _ok, figures = ladder_figures(_ladder(33 * 0.69, 250, 700))
    assert figures[1].met is False


def test_levels_out_of_order_or_missing_fail():
    # a "DRAM" faster than L2: the split still finds three runs, but they are not ordered
    ok, figures = ladder_figures(_ladder(35, 900, 300))
    assert not ok and status_of(ok, figures) == "fail"
    short = LatencyLadder("NVIDIA H200", 1.0, (LatencyRung(4096, 35, 17),), None, 1980.0, "m", 10)
    ok, figures = ladder_figures(short)
    assert not ok and all(f.value is None and f.met is None for f in figures)


def test_the_check_is_registered_after_the_roofs():
    names = [c.name for c in CHECKS]
    assert names.index("latency_ladder") == names.index("roofs") + 1
