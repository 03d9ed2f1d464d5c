"""Find the plateaus of a working-set sweep and name each by the cache sizes the OS reports.

A bandwidth sweep over growing working sets is a staircase: flat while the data fits in a cache
level, falling when it no longer does, flat again one level out. The LBNL Empirical Roofline
Toolkit finds the steps with a histogram of the rates and names them in the order it finds them,
so a sweep that starts above the L1 size calls its first plateau (really L2) "L1". Here the steps
are found from the curve alone and then each is named by *where it lies*: a plateau spanning
80 KiB to 1.6 MiB lies between the 64 KiB of L1 and the 2 MiB of L2, so it is L2, however many
plateaus came before it; one beyond the last-level cache is DRAM.

How the steps are found (pure arithmetic, no measuring, so it is tested on synthetic curves):

1. ``y = ln(GB/s)`` at each size. The noise ``sigma`` is estimated from the sizes' first
   differences (median absolute deviation: a few steps do not move it).
2. The exact best split of ``y`` into constant pieces: least squares plus a penalty per piece
   (``PENALTY_K x sigma^2 x ln n``, a BIC-like rule), by dynamic programming over every split
   (``optimal_segments``; a brute force over all splits checks it in the tests). A falling
   stretch between two levels becomes several short pieces; a plateau one long piece.
3. A piece of at least ``MIN_POINTS`` sizes whose ends differ by no more than ``FLAT_LIMIT`` is a
   plateau. Neighbouring plateaus closer than ``MERGE_LIMIT`` (one stretch split by a disturbed
   size or two) are joined, with the short pieces between them.
4. Each plateau's rate is the median of its sizes' rates (robust to one disturbed size).
5. Naming: the cache sizes cut the working-set axis into intervals, L1 = (0, L1], L2 = (L1, L2],
   ..., DRAM = (last-level cache, infinity). A plateau takes the level whose interval it overlaps
   most (in log size); two plateaus in one level: the one overlapping more keeps the name, the
   other is left unnamed.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: a plateau has at least this many sizes
MIN_POINTS = 4
#: the penalty for one more piece, in units of sigma^2 x ln(n)
PENALTY_K = 4.0
#: the least noise assumed (1%): a perfectly smooth synthetic curve must not split at every size
MIN_SIGMA = 0.01
#: a plateau's fitted rate changes by at most this factor (in ln) from its first size to its last
FLAT_LIMIT = 0.15
#: two plateaus whose rates differ by less than this (in ln), or three sigma, are one
MERGE_LIMIT = 0.06


@dataclass(frozen=True)
class CacheSize:
    """One cache level as the sweep's threads see it: ``bytes`` is one cache's size times
    ``instances``, the number of separate caches of that level the threads ran on (each core's
    own L2: 2 on two cores; one shared L3: 1)."""

    level: str  # "L1", "L2", "L3"
    bytes: int
    instances: int = 1


@dataclass(frozen=True)
class Plateau:
    """One flat stretch of the sweep, named by the cache level it lies in ("" where none fits)."""

    level: str
    gbps: float
    ws_lo_bytes: int
    ws_hi_bytes: int
    points: int
    cache_bytes: int | None = None
    instances: int | None = None


def noise_sigma(y: Sequence[float]) -> float:
    """The noise of ``y`` (natural log of the rates): the median absolute deviation of its first
    differences, scaled to a standard deviation (1.4826) and to one sample (divided by sqrt 2)."""
    diffs = [b - a for a, b in zip(y, y[1:], strict=False)]
    if len(diffs) < 2:
        return MIN_SIGMA
    mid = statistics.median(diffs)
    mad = statistics.median(abs(d - mid) for d in diffs)
    return max(MIN_SIGMA, 1.4826 * mad / math.sqrt(2.0))


def optimal_segments(y: Sequence[float], penalty: float) -> list[tuple[int, int]]:
    """The split of ``y`` into pieces ``[start, end)`` that minimises the sum of squared deviations
    from each piece's mean plus ``penalty`` per piece. Exact, by dynamic programming (O(n^2))."""
    n = len(y)
    if n == 0:
        return []
    sums = [0.0]
    squares = [0.0]
    for v in y:
        sums.append(sums[-1] + v)
        squares.append(squares[-1] + v * v)

    def cost(i: int, j: int) -> float:
        s = sums[j] - sums[i]
        return max(0.0, (squares[j] - squares[i]) - s * s / (j - i))

    best = [0.0] + [math.inf] * n
    start = [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            total = best[i] + cost(i, j) + penalty
            if total < best[j] - 1e-15:
                best[j], start[j] = total, i
    out: list[tuple[int, int]] = []
    j = n
    while j > 0:
        out.append((start[j], j))
        j = start[j]
    return out[::-1]


def segments_cost(y: Sequence[float], pieces: Sequence[tuple[int, int]], penalty: float) -> float:
    """What ``optimal_segments`` minimises, for any split (the tests' brute force uses it)."""
    total = 0.0
    for i, j in pieces:
        part = y[i:j]
        mean = sum(part) / len(part)
        total += sum((v - mean) ** 2 for v in part) + penalty
    return total


def _slope_change(x: Sequence[float], y: Sequence[float]) -> float:
    """How much the least-squares line through (x, y) rises or falls from the first x to the last."""
    if len(x) < 2 or x[-1] == x[0]:
        return 0.0
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxx = sum((a - mx) ** 2 for a in x)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return abs(sxy / sxx * (x[-1] - x[0])) if sxx > 0 else 0.0


def find_plateaus(
    ws_bytes: Sequence[float], gbps: Sequence[float], caches: Sequence[CacheSize]
) -> list[Plateau]:
    """The plateaus of a sweep (working sets ascending, one best rate each), nearest the cores
    first, each named by ``caches`` (see the module's docstring). Rates that are not positive
    are left out (a size that failed)."""
    pairs = sorted((w, g) for w, g in zip(ws_bytes, gbps, strict=True) if w > 0 and g > 0)
    if len(pairs) < MIN_POINTS:
        return []
    x = [math.log(w) for w, _ in pairs]
    y = [math.log(g) for _, g in pairs]
    sigma = noise_sigma(y)
    pieces = optimal_segments(y, PENALTY_K * sigma * sigma * math.log(len(y)))
    flat = [
        (i, j)
        for i, j in pieces
        if j - i >= MIN_POINTS and _slope_change(x[i:j], y[i:j]) <= max(FLAT_LIMIT, 3 * sigma)
    ]
    merged: list[tuple[int, int]] = []
    for i, j in flat:
        if merged:
            pi, pj = merged[-1]
            close = abs(statistics.median(y[pi:pj]) - statistics.median(y[i:j])) < max(MERGE_LIMIT, 3 * sigma)
            if close:
                merged[-1] = (pi, j)
                continue
        merged.append((i, j))
    found = [
        Plateau(
            level="",
            gbps=math.exp(statistics.median(y[i:j])),
            ws_lo_bytes=int(round(pairs[i][0])),
            ws_hi_bytes=int(round(pairs[j - 1][0])),
            points=j - i,
        )
        for i, j in merged
    ]
    return name_plateaus(found, caches)


def level_intervals(caches: Sequence[CacheSize]) -> list[tuple[str, float, float, CacheSize | None]]:
    """(level, lowest, highest working set, its cache) of each level on the working-set axis:
    L1 = (0, L1], L2 = (L1, L2], ..., DRAM = (last-level cache, infinity). Empty without caches."""
    ordered = sorted((c for c in caches if c.bytes > 0), key=lambda c: c.bytes)
    out: list[tuple[str, float, float, CacheSize | None]] = []
    low = 0.0
    for cache in ordered:
        out.append((cache.level, low, float(cache.bytes), cache))
        low = float(cache.bytes)
    if ordered:
        out.append(("DRAM", low, math.inf, None))
    return out


def _overlap(lo: float, hi: float, a: float, b: float) -> float:
    """How much of the working sets [lo, hi] lies in (a, b], in log size (0 for none)."""
    if lo >= hi:  # a single size: inside or not
        return 1e-9 if a < lo <= b else 0.0
    left, right = max(lo, a), min(hi, b)
    return math.log(right / left) if right > left else 0.0


def name_plateaus(plateaus: Sequence[Plateau], caches: Sequence[CacheSize]) -> list[Plateau]:
    """Each plateau named by the cache interval it overlaps most; a level claimed twice goes to
    the plateau that overlaps it more, the other keeps no name."""
    intervals = level_intervals(caches)
    claims: dict[str, tuple[float, int]] = {}
    chosen: list[tuple[str, CacheSize | None]] = []
    for index, p in enumerate(plateaus):
        best: tuple[float, str, CacheSize | None] = (0.0, "", None)
        for level, a, b, cache in intervals:
            share = _overlap(p.ws_lo_bytes, p.ws_hi_bytes, a, b)
            if share > best[0]:
                best = (share, level, cache)
        chosen.append((best[1], best[2]))
        if best[1] and (best[1] not in claims or best[0] > claims[best[1]][0]):
            claims[best[1]] = (best[0], index)
    out = []
    for index, (p, (level, cache)) in enumerate(zip(plateaus, chosen, strict=True)):
        if level and claims[level][1] == index:
            out.append(
                Plateau(
                    level=level,
                    gbps=p.gbps,
                    ws_lo_bytes=p.ws_lo_bytes,
                    ws_hi_bytes=p.ws_hi_bytes,
                    points=p.points,
                    cache_bytes=cache.bytes if cache else None,
                    instances=cache.instances if cache else None,
                )
            )
        else:
            out.append(Plateau("", p.gbps, p.ws_lo_bytes, p.ws_hi_bytes, p.points))
    return out


# --- DRAM: only working sets well past the last-level cache ----------------------------------------

#: DRAM's figure counts only working sets at least this many times the last-level cache: just past
#: it, much of the data is still served from the cache (an inclusive L3, other tenants' lines, a
#: cache's adaptive replacement keeps part of a stream), and a "DRAM" roof there is faster than DRAM
DRAM_LLC_FACTOR = 4.0
#: ... over at least this many sizes
DRAM_MIN_SIZES = 3
#: ... flat: the fastest kernel's rates over them within this factor of each other
DRAM_FLAT_FACTOR = 1.15
#: a DRAM figure may exceed the app's own read-only and triad streams by their noise, no more
STREAM_TOLERANCE = 1.05


@dataclass(frozen=True)
class DramFigure:
    """DRAM's bandwidth from the sizes well past the last-level cache: the fastest kernel's median
    over them, which sizes, whether the curve was flat there and each kernel's median."""

    gbps: float
    kernel: str
    ws_lo_bytes: int
    ws_hi_bytes: int
    points: int
    flat: bool
    #: the fastest kernel's highest over lowest rate across the sizes used (1.0 = perfectly flat)
    spread: float
    per_kernel: dict[str, float]
    sizes_bytes: tuple[int, ...] = ()

    @property
    def words(self) -> str:
        """ "flat over 4 sizes (spread 3%)" or "not flat over 4 sizes (spread 22%): the largest 3 sizes" """
        if self.flat:
            return f"flat over {self.points} sizes (spread {self.spread - 1:.0%})"
        return f"not flat past 4x the last-level cache (spread {self.spread - 1:.0%}): the largest {self.points} sizes"


def dram_figure(
    ws_bytes: Sequence[int],
    curves: Mapping[str, Sequence[float]],
    llc_bytes: float,
    *,
    factor: float = DRAM_LLC_FACTOR,
    min_sizes: int = DRAM_MIN_SIZES,
    flat_factor: float = DRAM_FLAT_FACTOR,
) -> DramFigure | str:
    """DRAM's figure from a sweep (``curves``: each kernel's GB/s at each of ``ws_bytes``): only the
    sizes of at least ``factor`` x ``llc_bytes``, at least ``min_sizes`` of them; the fastest
    kernel's median there. Where that kernel's rates there are not flat (highest over lowest above
    ``flat_factor``), only the largest ``min_sizes`` sizes are taken (the least cache left in them),
    and the figure says so. A reason in words (a ``str``) where there are too few such sizes."""
    edge = factor * llc_bytes
    far = [
        i
        for i, w in enumerate(ws_bytes)
        if w >= edge and all(len(c) == len(ws_bytes) for c in curves.values())
    ]
    far = [i for i in far if all(curves[k][i] > 0 for k in curves)]
    if len(far) < min_sizes:
        return (
            f"DRAM not measured: {len(far)} of the sweep's working sets reach {factor:g}x the last-level cache "
            f"({edge / 2**20:,.0f} MiB), {min_sizes} are needed (too little free memory?)"
        )

    def medians(indices: Sequence[int]) -> dict[str, float]:
        return {k: statistics.median(c[i] for i in indices) for k, c in curves.items()}

    per_kernel = medians(far)
    best = max(per_kernel, key=lambda k: per_kernel[k])
    rates = [curves[best][i] for i in far]
    spread = max(rates) / min(rates)
    flat = spread <= flat_factor
    used = far if flat else far[-min_sizes:]
    if not flat:
        per_kernel = medians(used)
        best = max(per_kernel, key=lambda k: per_kernel[k])
    return DramFigure(
        gbps=per_kernel[best],
        kernel=best,
        ws_lo_bytes=int(ws_bytes[used[0]]),
        ws_hi_bytes=int(ws_bytes[used[-1]]),
        points=len(used),
        flat=flat,
        spread=spread,
        per_kernel=per_kernel,
        sizes_bytes=tuple(int(ws_bytes[i]) for i in used),
    )


def above_streams(gbps: float, streams: Mapping[str, float], tolerance: float = STREAM_TOLERANCE) -> str:
    """Why a DRAM figure of ``gbps`` is impossible ("" where it is not): it is faster than the
    fastest of the app's own long read-only and triad streams over DRAM (``streams``, GB/s) by
    more than their noise. No roof is faster than the memory it stands for."""
    known = {k: v for k, v in streams.items() if v > 0}
    if not known:
        return ""
    fastest = max(known, key=lambda k: known[k])
    if gbps <= known[fastest] * tolerance:
        return ""
    return (
        f"the sweep's DRAM figure {gbps:,.1f} GB/s is {gbps / known[fastest]:.2f}x the app's own {fastest} "
        f"stream over DRAM ({known[fastest]:,.1f} GB/s): faster than the memory, so refused"
    )
