"""The DRAM level of the coalescing model: which aligned granules hold a warp's requested bytes, at
32, 64 and 128 bytes, against a byte-by-byte count over thousands of random patterns; where the
granule size comes from; the strided copy's model at the level its data comes from; and the CLI."""

from __future__ import annotations

import json
import random

import pytest

from explorer.bench.wl_memory import copy_model_level
from explorer.cli import main
from explorer.devices.model import CudaGpu, CudaLimits
from explorer.errors import UserError
from explorer.memory.coalescing import (
    DRAM_GRANULARITIES,
    DramGranularity,
    GlobalAccess,
    GlobalGather,
    coalesce,
    dram_granularity,
    granule_efficiency,
    strided_copy_model,
)

# --- a reference that shares no code with the model: walk every byte of every candidate granule --


def ref_granules(starts: list[int], elem: int, granule: int) -> tuple[int, int]:
    """(granules holding a requested byte, distinct bytes requested), byte by byte."""
    touched: set[int] = set()
    for start in starts:
        touched.update(range(start, start + elem))
    candidates = {s // granule for s in starts} | {(s + elem - 1) // granule for s in starts}
    held = 0
    used_total = 0
    for g in candidates:
        used = sum(1 for byte in range(g * granule, (g + 1) * granule) if byte in touched)
        if used:
            held += 1
            used_total += used
    assert used_total == len(touched)  # no requested byte lies outside the granules counted
    return held, len(touched)


def _random_access(rng: random.Random) -> GlobalAccess:
    return GlobalAccess(
        elem_bytes=rng.choice((1, 2, 4, 8, 16)),
        stride=rng.choice((0, 1, rng.randint(0, 40), rng.randint(0, 300))),
        offset=rng.choice((0, rng.randint(0, 64), rng.randint(0, 5000))),
        active_lanes=rng.choice((1, 32, rng.randint(1, 32))),
        warp=rng.choice((0, rng.randint(0, 31))),
    )


def test_dram_granules_match_a_byte_by_byte_count_over_thousands_of_patterns():
    rng = random.Random(36)
    seen_one_lane = seen_uniform = 0
    for _ in range(4000):
        a = _random_access(rng)
        granule = rng.choice(DRAM_GRANULARITIES)
        c = coalesce(a, DramGranularity(granule, "test", estimate=False))
        starts = [
            (a.offset + (a.warp * 32 + lane) * a.stride) * a.elem_bytes for lane in range(a.active_lanes)
        ]
        held, requested = ref_granules(starts, a.elem_bytes, granule)
        case = (a, granule)
        assert len(c.dram_granules) == held, case
        assert c.dram_bytes_fetched == held * granule, case
        assert c.dram_efficiency == pytest.approx(requested / (held * granule)), case
        # the sector level is the same rule at 32 bytes, and DRAM never moves less than L1/L2 fetch
        assert (len(c.sectors), c.bytes_requested) == ref_granules(starts, a.elem_bytes, 32), case
        assert c.bytes_fetched <= c.dram_bytes_fetched, case
        assert 0 < c.dram_efficiency <= c.efficiency <= 1.0, case
        seen_one_lane += a.active_lanes == 1
        seen_uniform += a.stride == 0
    assert seen_one_lane > 100 and seen_uniform > 100  # the smallest cases were drawn


def test_a_traced_kernels_unaligned_lanes_count_each_byte_in_its_own_granule():
    rng = random.Random(5)
    for _ in range(1500):
        active, elem = rng.randint(1, 32), rng.choice((1, 2, 3, 4, 8, 12, 16))
        addresses = tuple(rng.randint(0, 600) for _ in range(active))
        granule = rng.choice(DRAM_GRANULARITIES)
        c = coalesce(
            GlobalGather(addresses, tuple(range(active)), elem), DramGranularity(granule, "t", False)
        )
        held, requested = ref_granules(list(addresses), elem, granule)
        assert (len(c.dram_granules), c.bytes_requested) == (held, requested), (addresses, elem, granule)


def test_the_figures_a_course_quotes_for_4_byte_elements_at_64_bytes():
    expected = {1: 1.0, 2: 0.5, 8: 0.125, 16: 0.0625, 32: 0.0625}
    for stride, efficiency in expected.items():
        c = coalesce(GlobalAccess(elem_bytes=4, stride=stride))  # the default granule: 64 B
        assert c.dram.bytes == 64 and c.dram_efficiency == efficiency, stride
    wide = coalesce(GlobalAccess(elem_bytes=4, stride=16))
    assert (wide.bytes_fetched, wide.dram_bytes_fetched) == (1024, 2048)  # sectors vs granules
    one = coalesce(GlobalAccess(elem_bytes=4, stride=0), DramGranularity(128, "t", False))
    assert (len(one.dram_granules), one.dram_bytes_fetched, one.bytes_requested) == (1, 128, 4)
    # at 32 bytes DRAM moves exactly the sectors
    same = coalesce(GlobalAccess(elem_bytes=8, stride=5, offset=3), DramGranularity(32, "t", False))
    assert same.dram_granules == same.sectors and same.dram_efficiency == same.efficiency


def test_the_long_run_granule_rule_agrees_with_a_warp_for_4_byte_elements():
    for granule in DRAM_GRANULARITIES:
        for stride in range(1, 65):
            c = coalesce(GlobalAccess(elem_bytes=4, stride=stride), DramGranularity(granule, "t", False))
            assert c.dram_efficiency == pytest.approx(granule_efficiency(4, stride, granule)), (
                granule,
                stride,
            )


def test_the_granule_size_says_where_it_comes_from():
    default = dram_granularity()
    assert default.bytes == 64 and default.estimate and "estimate" in default.basis and "8.0" in default.basis
    hopper = dram_granularity(cc=(9, 0), where="H200")
    assert hopper.bytes == 64 and "9.0 (H200)" in hopper.basis and hopper.estimate
    turing = dram_granularity(cc=(7, 5))
    assert turing.bytes == 32 and turing.estimate and "7.5" in turing.basis
    chosen = dram_granularity(128, cc=(7, 5))  # a chosen size wins over the estimate
    assert chosen.bytes == 128 and not chosen.estimate and "estimate" not in chosen.basis
    with pytest.raises(UserError, match="DRAM granularity 48 bytes.*32, 64, 128"):
        dram_granularity(48)


# --- the strided copy's model: DRAM's granules past the L2, sectors within it -----------------------


def _gpu(l2: int | None, cc: tuple[int, int] = (9, 0)) -> CudaGpu:
    return CudaGpu(name="a GPU", compute_capability=cc, limits=CudaLimits(l2_cache_bytes=l2))


def test_the_copy_model_uses_dram_granules_past_the_l2_and_sectors_within_it():
    l2 = 60 << 20
    for stride in range(1, 33):
        past, words = copy_model_level(stride, True, 4.0 * (1 << 24) * (stride + 1), _gpu(l2))
        dram = strided_copy_model(stride, dram=dram_granularity(cc=(9, 0)))
        assert past == dram and past.granule_bytes == 64 and "past the 60 MiB L2" in words
        within, words = copy_model_level(stride, True, float(l2), _gpu(l2))
        assert within == strided_copy_model(stride) and "fits the 60 MiB L2" in words
        assert past.efficiency <= within.efficiency
    # 16 apart, each lane's sector alone in its 64-byte granule: DRAM moves twice the sectors' bytes
    assert copy_model_level(16, True, 1e12, _gpu(l2))[0].read_efficiency == 0.0625
    assert copy_model_level(16, True, 1e12, _gpu(l2, cc=(7, 0)))[0].read_efficiency == 0.125  # 32 B
    unknown, words = copy_model_level(16, True, 1e12, _gpu(None))
    assert unknown == strided_copy_model(16) and "not known" in words
    cpu, words = copy_model_level(16, False, 1e12, _gpu(l2))
    assert cpu.granule_bytes == 64 and "cache lines" in words


# --- the command ---------------------------------------------------------------------------------


def _json(capsys, *argv: str) -> dict:
    assert main(["memory", "--space", "global", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_json_has_the_dram_figures_beside_the_sectors(capsys):
    for stride, efficiency in {1: 1.0, 8: 0.125, 16: 0.0625, 32: 0.0625}.items():
        data = _json(capsys, "--stride", str(stride))
        assert data["dram_granularity_bytes"] == 64 and data["dram_efficiency"] == efficiency
        assert data["dram_bytes_fetched"] == round(128 / efficiency)
        assert data["dram_granularity_basis"].startswith("estimate") and "sectors_per_request" in data
    data = _json(capsys, "--stride", "32", "--dram-granularity", "128")  # a granule a lane
    assert (data["dram_granularity_bytes"], data["dram_bytes_fetched"]) == (128, 4096)
    assert data["dram_granularity_basis"] == "128 B as chosen"
    data = _json(capsys, "--stride", "16", "--cc", "7.5")
    assert data["dram_granularity_bytes"] == 32 and "7.5" in data["dram_granularity_basis"]
    data = _json(capsys, "--stride", "16", "--device", "h100")  # a catalog GPU: 9.0
    assert data["dram_granularity_bytes"] == 64 and "9.0" in data["dram_granularity_basis"]


def test_the_text_names_both_levels(capsys):
    assert main(["memory", "--space", "global", "--stride", "16"]) == 0
    out = capsys.readouterr().out
    assert "L1/L2 fetch 32 sectors (1024 B); DRAM moves 2048 bytes in 64-byte granules" in out
    assert "DRAM granularity: estimate: 64 B" in out


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--space", "global", "--dram-granularity", "48"], "--dram-granularity 48: use 32, 64, 128"),
        (["--space", "global", "--dram-granularity", "256"], "--dram-granularity is 256"),
        (["--space", "global", "--dram-granularity", "x"], "--dram-granularity is 'x'"),
        (["--space", "global", "--cc", "99.1"], "99.1"),
        (["--space", "shared", "--dram-granularity", "64"], "--dram-granularity applies to --space global"),
        (["--space", "shared", "--cc", "8.0"], "--cc applies to --space global"),
    ],
)
def test_bad_granularity_input_is_one_line_exit_2(capsys, argv, named):
    code = main(["memory", *argv])
    err = capsys.readouterr().err
    assert code == 2 and named in err and err.count("\n") == 1 and "Traceback" not in err
