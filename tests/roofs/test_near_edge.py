"""A working set near a cache's edge is measured against the levels on both sides of it, and a
share above 100% of a roof measured while busy is never given as a figure."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from explorer.bench.judge import judge
from explorer.bench.results import BenchPoint, roof_share_words, roof_words
from explorer.roofs.model import Roof
from explorer.roofs.placement import (
    NEAR_EDGE,
    home_level,
    level_boundaries,
    neighbour_level,
    place,
    share_words,
)
from tests.roofs.levels import KIB, MIB, levels

#: the brute force's factors between 1 and NEAR_EDGE
STEPS = 1000


def _roof(busy: bool = False, **gbps: float) -> Roof:
    return Roof(
        "cpu",
        "Test CPU",
        [replace(c, disturbed=busy) for c in levels(**gbps)],
    )


def _reference(roof: Roof, ws: float, threads: int | None) -> tuple[str, float] | None:
    """By brute force: grow and shrink the working set by a factor stepping from 1 to NEAR_EDGE;
    the first factor at which it would live in another level names that level (the level next to
    its own on that side) and how far the edge is. (Which level a working set lives in is
    ``home_level``'s, tested on its own; here read from its edges once, for speed.)"""
    bounds = level_boundaries(roof, threads)

    def lives(size: float) -> int:
        return next(i for i, (_, edge) in enumerate(bounds) if size <= edge)

    own = lives(ws)
    for k in range(1, STEPS + 1):
        f = 1 + (NEAR_EDGE - 1) * k / STEPS
        if f < NEAR_EDGE and lives(ws / f) != own:  # the faster level's edge: strictly within twice
            return bounds[own - 1][0].level, f
        if lives(ws * f) != own:
            return bounds[own + 1][0].level, f
    return None


def test_the_level_across_the_nearest_edge_matches_a_brute_force_search():
    rng = random.Random(20261128)
    roof = _roof()
    checked = near = 0
    for _ in range(2500):
        ws = math.exp(rng.uniform(math.log(1 * KIB), math.log(400 * MIB)))
        threads = rng.choice([None, 1, 2])
        home = home_level(roof, ws, threads)
        assert home is not None
        got = neighbour_level(roof, home, ws, threads)
        want = _reference(roof, ws, threads)
        if _undecidable(roof, ws, threads):
            continue  # at the grid's resolution from the limit, or two edges as near: not decidable here
        checked += 1
        assert (got.level if got else None) == (want[0] if want else None), (ws, threads, home.level)
        near += got is not None
    assert checked > 2000 and 300 < near < checked - 300  # both kinds of case were met often


def _undecidable(roof: Roof, ws: float, threads: int | None) -> bool:
    """An edge within the grid's step of the limit (twice), or the two nearest edges as near."""
    ratios = sorted(max(ws / e, e / ws) for _, e in level_boundaries(roof, threads) if math.isfinite(e))
    step = 2 * (NEAR_EDGE - 1) / STEPS
    at_limit = any(abs(r - NEAR_EDGE) < step for r in ratios)
    return at_limit or (len(ratios) > 1 and ratios[1] - ratios[0] < step)


@pytest.mark.parametrize(
    ("ws", "home", "near"),
    [
        (64 * KIB, "L1", "L2"),  # exactly the L1s' size: it fits, and is at the edge of spilling
        (33 * KIB, "L1", "L2"),  # just over half of it
        (32 * KIB, "L1", None),  # half of it: not within twice
        (65 * KIB, "L2", "L1"),  # just past L1's edge
        (127 * KIB, "L2", "L1"),
        (128 * KIB, "L2", None),
        (64 * KIB + 2 * MIB + 1, "L3", "L2"),
        (2 * (64 * KIB + 2 * MIB + 32 * MIB), "DRAM", None),
    ],
)
def test_the_edges_of_the_smallest_cases(ws, home, near):
    roof = _roof()
    h = home_level(roof, ws)
    assert h is not None and h.level == home
    got = neighbour_level(roof, h, ws)
    assert (got.level if got else None) == near


def test_a_point_just_past_l2_shows_its_share_of_both_levels():
    roof = _roof()
    ws = 3 * MIB  # past the 2 MiB of L2 (and 64 KiB of L1), in L3, within twice L2's edge
    seconds = 1.0
    moved = 150e9  # 150 GB/s: 82% of L3's 184, 67% of L2's 225
    where = place(0.0, moved, seconds, roof, ws)
    assert where.memory_level == "L3" and where.neighbour is not None and where.neighbour.level == "L2"
    assert where.neighbour_share == pytest.approx(150 / 225)
    point = judge(_point(seconds, moved), 0.0, moved, ws, roof)
    assert point.near_level == "L2" and point.near_level_share == pytest.approx(150 / 225, abs=5e-5)
    assert roof_words(point) == "fits in L3, near L2's edge: 82% of L3, 67% of L2"
    assert roof_share_words(point) == "82% of its L3 roof, 67% of L2's roof across L2's edge"
    far = judge(_point(seconds, moved), 0.0, moved, 10 * MIB, roof)  # deep inside L3
    assert far.near_level == "" and far.near_level_share is None
    assert "L2" not in roof_words(far)


def _point(seconds: float, moved: float) -> BenchPoint:
    return BenchPoint(
        workload="memory_levels",
        variant="cpu read",
        device="cpu",
        size=1,
        size_label="3 MiB",
        median_s=seconds,
        throughput=moved / seconds / 1e9,
        throughput_unit="GB/s",
        threads=2,
    )


@pytest.mark.parametrize(
    ("share", "busy", "shown"),
    [
        (2.58, True, ">100% (roof measured while busy)"),
        (1.0001, True, ">100% (roof measured while busy)"),
        (1.0, True, "100%"),
        (0.813, True, "81.3%"),
        (2.58, False, "258%"),
    ],
)
def test_a_share_over_a_busy_roof_is_no_figure(share, busy, shown):
    assert share_words(share, busy) == shown


def test_a_vector_add_over_a_dram_roof_measured_while_busy():
    roof = _roof(busy=True, DRAM=12.0)
    moved, seconds = 31e9, 1.0  # 31 GB/s against 12: 258%
    point = judge(_point(seconds, moved), 0.0, moved, 400 * MIB, roof)
    assert point.memory_level == "DRAM" and point.roof_busy
    assert point.roof_share == pytest.approx(31 / 12, abs=5e-5)
    assert roof_share_words(point) == ">100% of its DRAM roof (roof measured while busy)"
    assert "258" not in roof_words(point) + roof_share_words(point)
    quiet = judge(_point(seconds, moved), 0.0, moved, 400 * MIB, _roof(DRAM=12.0))
    assert not quiet.roof_busy and roof_share_words(quiet) == "258% of its DRAM roof"
