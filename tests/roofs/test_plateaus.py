"""Plateau finding on synthetic sweeps: every level found within 5% and named by the cache sizes
given, never by the order the plateaus come in; the exact segmentation against a brute force."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.roofs.plateaus import (
    CacheSize,
    find_plateaus,
    optimal_segments,
    segments_cost,
)

KIB, MIB = 1 << 10, 1 << 20


def sweep(values, knees, *, first=4 * KIB, last=None, growth=1.2, noise=0.03, seed=0, width=2.0):
    """A staircase: ``values[k]`` GB/s up to ``knees[k]`` bytes, then a fall over a factor
    ``width`` of working sets to the next value; multiplicative Gaussian noise of ``noise``."""
    rng = random.Random(seed)
    last = last or knees[-1] * 8
    ws, size = [], float(first)
    while size <= last:
        ws.append(int(size))
        size *= growth
    gbps = []
    for w in ws:
        k = sum(1 for c in knees if w > c)
        y = math.log(values[k])
        if k > 0 and w < knees[k - 1] * width:
            t = math.log(w / knees[k - 1]) / math.log(width)
            y = math.log(values[k - 1]) + (math.log(values[k]) - math.log(values[k - 1])) * t
        gbps.append(math.exp(y) * (1 + rng.gauss(0, noise)))
    return ws, gbps


def by_level(plateaus):
    return {p.level: p for p in plateaus if p.level}


FOUR = ([450.0, 225.0, 184.0, 40.0], [64 * KIB, 2 * MIB, 32 * MIB])
CACHES4 = [CacheSize("L1", 64 * KIB, 2), CacheSize("L2", 2 * MIB, 2), CacheSize("L3", 32 * MIB, 1)]


@pytest.mark.parametrize("seed", range(25))
def test_four_plateaus_are_found_within_5_percent_and_named_by_the_caches(seed):
    values, knees = FOUR
    ws, gbps = sweep(values, knees, seed=seed)
    found = by_level(find_plateaus(ws, gbps, CACHES4))
    assert list(found) == ["L1", "L2", "L3", "DRAM"]
    for level, value in zip(found, values, strict=True):
        assert found[level].gbps == pytest.approx(value, rel=0.05), level
    # each plateau lies in its own level: below its cache's size, above the one before
    for (level, p), low, high in zip(found.items(), [0, *knees], [*knees, math.inf], strict=True):
        assert low < p.ws_hi_bytes and p.ws_lo_bytes < high * 1.5, (level, p)
    assert found["L2"].cache_bytes == 2 * MIB and found["L2"].instances == 2
    assert found["DRAM"].cache_bytes is None


@pytest.mark.parametrize("seed", range(25))
def test_three_plateaus_of_a_cpu_without_l3(seed):
    values, knees = [300.0, 120.0, 25.0], [48 * KIB, 4 * MIB]
    caches = [CacheSize("L1", 48 * KIB), CacheSize("L2", 4 * MIB)]
    found = by_level(find_plateaus(*sweep(values, knees, seed=seed), caches))
    assert list(found) == ["L1", "L2", "DRAM"]
    for level, value in zip(found, values, strict=True):
        assert found[level].gbps == pytest.approx(value, rel=0.05)


@pytest.mark.parametrize("seed", range(25))
def test_a_sweep_that_starts_past_l1_calls_its_first_plateau_l2_not_l1(seed):
    """The Empirical Roofline Toolkit's trap: three plateaus found, the first named by its place
    between the caches (L2), not by being first."""
    values, knees = FOUR
    ws, gbps = sweep(values, knees, seed=seed)
    keep = [(w, g) for w, g in zip(ws, gbps, strict=True) if w > 160 * KIB]
    found = by_level(find_plateaus([w for w, _ in keep], [g for _, g in keep], CACHES4))
    assert list(found) == ["L2", "L3", "DRAM"]
    assert found["L2"].gbps == pytest.approx(225.0, rel=0.05)
    assert found["L3"].gbps == pytest.approx(184.0, rel=0.05)


def test_the_same_curve_named_with_other_cache_sizes_gets_other_names():
    """A 3-plateau GPU-like curve (L2 of 40 MiB, then DRAM) named by an L2 size alone."""
    ws, gbps = sweep([5500.0, 2000.0], [40 * MIB], first=2 * MIB, growth=1.3)
    found = by_level(find_plateaus(ws, gbps, [CacheSize("L2", 40 * MIB)]))
    assert list(found) == ["L2", "DRAM"]
    assert found["L2"].gbps == pytest.approx(5500.0, rel=0.05)
    assert found["DRAM"].gbps == pytest.approx(2000.0, rel=0.05)


def test_one_disturbed_size_does_not_split_a_plateau():
    values, knees = FOUR
    ws, gbps = sweep(values, knees, seed=3, noise=0.01)
    middle = next(i for i, w in enumerate(ws) if w > 400 * KIB)
    gbps[middle] *= 0.5  # other programs took the cores for this one size
    found = by_level(find_plateaus(ws, gbps, CACHES4))
    assert found["L2"].gbps == pytest.approx(225.0, rel=0.05)
    assert found["L2"].ws_lo_bytes < ws[middle] < found["L2"].ws_hi_bytes


def test_without_cache_sizes_plateaus_are_found_but_not_named():
    plateaus = find_plateaus(*sweep(*FOUR, seed=1), [])
    assert len(plateaus) == 4 and {p.level for p in plateaus} == {""}


def test_too_few_sizes_or_failed_sizes_give_nothing():
    assert find_plateaus([1, 2, 3], [1.0, 1.0, 1.0], CACHES4) == []
    assert find_plateaus([4096] * 3 + [8192], [0.0, -1.0, 0.0, 5.0], CACHES4) == []


# --- the exact segmentation against a brute force over every split ---------------------------------


def brute_force(y, penalty):
    n = len(y)
    best = math.inf
    for cuts in itertools.chain.from_iterable(itertools.combinations(range(1, n), k) for k in range(n)):
        bounds = [0, *cuts, n]
        pieces = list(itertools.pairwise(bounds))
        best = min(best, segments_cost(y, pieces, penalty))
    return best


@settings(max_examples=2000, deadline=None)
@given(
    y=st.lists(st.floats(min_value=-3, max_value=3, allow_nan=False), min_size=1, max_size=9),
    penalty=st.floats(min_value=0.0, max_value=2.0),
)
def test_optimal_segments_is_the_best_split(y, penalty):
    pieces = optimal_segments(y, penalty)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(y)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
    assert segments_cost(y, pieces, penalty) == pytest.approx(brute_force(y, penalty), abs=1e-9)
