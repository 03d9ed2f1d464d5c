"""The latency ladder's levels: which rungs are L1, L2 and DRAM (checked against a brute force
over thousands of random synthetic ladders, smallest included), the published figures, and the
ladder kept with a GPU's ceilings (a file without one still loads)."""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics

import pytest

from explorer.roofs import store
from explorer.roofs.latency import (
    PUBLISHED,
    LatencyLadder,
    LatencyRung,
    comparison_rows,
    ordered,
    published_applies,
    split_levels,
)
from explorer.roofs.store import MeasuredRoof
from explorer.schema import SchemaError


def brute_force(cycles):
    """Every split into three non-empty runs; each run's error summed directly about its mean."""
    logs = [math.log(c) for c in cycles]
    best = None
    for i, j in itertools.combinations(range(1, len(logs)), 2):
        err = 0.0
        for a, b in ((0, i), (i, j), (j, len(logs))):
            run = logs[a:b]
            mean = sum(run) / len(run)
            err += sum((x - mean) ** 2 for x in run)
        if best is None or err < best[0]:
            best = (err, i, j)
    return best


def run_error(cycles, runs):
    logs = [math.log(c) for c in cycles]
    return sum(sum((x - statistics.fmean(logs[a:b])) ** 2 for x in logs[a:b]) for a, b in runs)


def synthetic(rng: random.Random, noise: float):
    """A ladder of three plateaus (L1 < L2 < DRAM) with multiplicative noise; the true splits."""
    counts = [rng.randint(1, 8) for _ in range(3)]
    l1 = rng.uniform(20, 60)
    l2 = l1 * rng.uniform(3, 10)
    dram = l2 * rng.uniform(2, 5)
    cycles = [
        lv * math.exp(rng.gauss(0, noise))
        for lv, n in zip((l1, l2, dram), counts, strict=True)
        for _ in range(n)
    ]
    return cycles, (counts[0], counts[0] + counts[1]), (l1, l2, dram)


def test_split_matches_the_brute_force_on_thousands_of_random_ladders():
    rng = random.Random(11)
    cases = [[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [3.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    for _ in range(3000):
        kind = rng.random()
        if kind < 0.5:
            cases.append(synthetic(rng, rng.choice((0.0, 0.02, 0.1, 0.5)))[0])
        elif kind < 0.8:
            cases.append([rng.uniform(1, 1000) for _ in range(rng.randint(3, 12))])
        else:  # many ties: a few distinct values
            cases.append([float(rng.choice((10, 100, 700))) for _ in range(rng.randint(3, 9))])
    for cycles in cases:
        runs = split_levels(cycles)
        err, i, j = brute_force(cycles)
        assert runs[0][0] == 0 and runs[-1][1] == len(cycles)
        assert all(a < b for a, b in runs) and runs[0][1] == runs[1][0] and runs[1][1] == runs[2][0]
        assert run_error(cycles, runs) == pytest.approx(err, rel=1e-9, abs=1e-9), (cycles, runs, i, j)


def test_clear_plateaus_are_found_exactly_and_their_medians_are_the_levels():
    rng = random.Random(3)
    for _ in range(2000):
        cycles, (i, j), truth = synthetic(rng, 0.03)
        assert split_levels(cycles) == ((0, i), (i, j), (j, len(cycles)))
        ladder = LatencyLadder(
            "NVIDIA H200",
            1.0,
            tuple(LatencyRung(4096 << k, c, c / 1.98) for k, c in enumerate(cycles)),
            29.0,
            1980.0,
            "test",
            100,
        )
        levels = ladder.levels()
        assert ordered(levels)
        for name, value in zip(("L1", "L2", "DRAM"), truth, strict=True):
            assert levels[name] == pytest.approx(value, rel=0.15)
        assert ladder.level_ns("DRAM") == pytest.approx(levels["DRAM"] / 1.98)


def test_too_few_or_bad_rungs_are_one_line():
    with pytest.raises(ValueError, match="the ladder has 2 rungs; .* at least 3"):
        split_levels([1.0, 2.0])
    with pytest.raises(ValueError, match="a rung took 0.0 cycles"):
        split_levels([1.0, 0.0, 2.0])
    short = LatencyLadder("GPU", 1.0, (LatencyRung(4096, 30.0, 15.0),), None, 2000.0, "m", 10)
    assert short.levels() == {}  # not enough rungs to tell the levels: none claimed


def test_published_figures_and_agreement():
    assert published_applies("NVIDIA H100 80GB HBM3") and published_applies("NVIDIA H200")
    assert not published_applies("NVIDIA GeForce GTX 1650")
    assert PUBLISHED["L1"].agrees(36) and PUBLISHED["DRAM"].agrees(830 * 1.3)
    assert not PUBLISHED["DRAM"].agrees(830 * 1.31) and not PUBLISHED["L2"].agrees(220 * 0.69)
    assert ordered({"L1": 30, "L2": 200, "DRAM": 700}) and not ordered({"L1": 300, "L2": 200})
    ladder = LatencyLadder(
        "NVIDIA H200",
        1.0,
        tuple(LatencyRung(4096 << k, c, c / 2) for k, c in enumerate((35, 36, 250, 260, 700, 720))),
        30.0,
        2000.0,
        "m",
        10,
    )
    rows = comparison_rows(ladder)
    assert rows[0] == ("shared memory", "30", "15", "~30")
    assert (
        rows[1][:2] == ("L1", "36") and rows[1][3] == "33-38" and rows[3] == ("DRAM", "710", "355", "650-830")
    )
    other = LatencyLadder("GTX 1650", 1.0, ladder.rungs, None, 2000.0, "m", 10)
    assert all(r[3] == "-" for r in comparison_rows(other)) and comparison_rows(other)[0][1] == "-"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    store.take_notice()
    return tmp_path / "home"


def _ladder() -> LatencyLadder:
    rungs = tuple(LatencyRung(4096 << k, c, c / 1.98) for k, c in enumerate((34, 35, 240, 250, 700)))
    return LatencyLadder("NVIDIA H200", 1000.0, rungs, 30.0, 1980.0, "pointer chase", 20000)


def test_the_ladder_is_stored_with_the_ceilings_and_old_files_still_load(home):
    roof = MeasuredRoof("cuda:0", "fp", 1000.0, latency=_ladder())
    store.save(roof)
    status, back = store.load("cuda:0", "fp")
    assert status == "stored" and back == roof and back.latency == _ladder()
    # a file written before the ladder: no "latency" key at all
    data = json.loads(store.store_path().read_text())
    del data["roofs"]["cuda:0"]["latency"]
    store.store_path().write_text(json.dumps(data))
    status, back = store.load("cuda:0", "fp")
    assert status == "stored" and back.latency is None and not store.take_notice()


def test_a_damaged_ladder_is_named():
    good = _ladder().to_dict()
    with pytest.raises(SchemaError, match="sm_clock_mhz"):
        LatencyLadder.from_dict({**good, "sm_clock_mhz": 0})
    bad = dict(good, rungs=[{**good["rungs"][0], "cycles": 1e300}])
    with pytest.raises(SchemaError, match="rung 1's cycles"):
        LatencyLadder.from_dict(bad)
    with pytest.raises(SchemaError, match="not an object"):
        LatencyLadder.from_dict([1, 2])


def test_text_from_another_machine_is_cut_and_a_bad_ladder_in_a_roof_is_left_out():
    from explorer.roofs.model import Roof

    data = {**_ladder().to_dict(), "device_name": "x" * 5000, "method": "m" * 5000, "backend": "odd"}
    back = LatencyLadder.from_dict(data)
    assert len(back.device_name) == 200 and len(back.method) == 1000 and back.backend == "gpu"
    roof = Roof("cuda:0", "H200", latency=_ladder())
    assert Roof.from_dict(roof.to_dict()).latency == _ladder()
    damaged = {**roof.to_dict(), "latency": {**_ladder().to_dict(), "rungs": "many"}}
    assert Roof.from_dict(damaged).latency is None  # the roof is drawn from what is valid
