"""Comparing two launches: the core's rows and ratios, and ``device-explorer launch --compare``.

The comparison must never say anything a single launch would not: each side's numbers are
checked against ``plan_launch`` of that side alone over thousands of random launches, and the
CLI's table against the two single ``launch`` calls it stands for.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.devices.limits import known_ccs
from explorer.devices.model import CatalogGpu
from explorer.launch.compare import CANNOT_RUN, Ratio, compare, ratio
from explorer.launch.config import Dim3, LaunchConfig, LaunchValidationError, parse_launch
from explorer.launch.schedule import plan_launch
from explorer.words import percent
from tests.launch.conftest import GTX, H100
from tests.launch.test_launch_cli import run

pytestmark = pytest.mark.usefixtures("fake_devices")

N_100K = ("--grid", "98", "--block", "1024", "--n", "100000")


# ---------------------------------------------------------------- core


def test_ratio_never_divides_by_zero_and_says_why():
    assert ratio(4, 2) == Ratio(0.5)
    assert ratio(0, 3).value is None and ratio(0, 3).text == "A is 0"
    assert ratio(0, 0).text == "both 0"
    assert ratio(None, 3).text == "A cannot run"
    assert ratio(3, None).text == "B cannot run"
    assert ratio(None, None).text == "neither can run"
    assert Ratio(7.0).text == "7x" and Ratio(1 / 7).text == "0.143x" and Ratio(1.0).text == "1x"


def test_gtx_1650_against_h100_for_n_100000():
    config = parse_launch("98", "1024", "0", "32", "100000")
    c = compare(GTX, config, H100, config)
    assert c.row("blocks").a == c.row("blocks").b == 98
    assert (c.row("waves").a, c.row("waves").b) == (7, 1)
    assert c.row("waves").ratio.text == "0.143x"
    assert c.row("sm_count").ratio.value == pytest.approx(132 / 16)
    assert c.row("tail_fill").a_text == "12.5%"  # 2 of 16 slots in the 7th wave
    assert c.row("occupancy").a == 1.0 and c.row("occupancy").ratio.text == "1x"
    assert c.row("limiter").a == "warps"
    assert c.verdict() == "B needs 1 wave where A needs 7: 264 blocks at once against 16."


def test_a_launch_one_device_refuses_is_a_side_that_says_why():
    # 100 KB of shared memory per block: an H100 takes it (opt-in), a GTX 1650 (64 KB) cannot
    config = parse_launch("64", "128", "100000", "32")
    c = compare(GTX, config, H100, config)
    assert not c.a.valid and "shared memory" in c.a.problem and c.b.valid
    waves = c.row("waves")
    assert waves.a is None and waves.a_text == CANNOT_RUN and waves.b == c.b.plan.waves
    assert waves.ratio.value is None and waves.ratio.text == "A cannot run"
    assert c.row("limiter").ratio.text == "A cannot run"
    assert c.verdict().startswith("A cannot run: ")
    data = c.to_dict()
    assert data["a"]["valid"] is False and data["a"]["error"] == c.a.problem
    assert data["rows"][0]["ratio"] is None


def test_limiter_row_says_same_or_differs():
    same = compare(GTX, parse_launch("4", "256"), GTX, parse_launch("8", "256"))
    assert same.row("limiter").ratio.text == "same"
    regs = compare(GTX, parse_launch("4", "256"), GTX, parse_launch("4", "256", "0", "255"))
    assert regs.row("limiter").b == "registers" and regs.row("limiter").ratio.text == "differs"


def _gpu(draw_cc, sms: int) -> CatalogGpu:
    return CatalogGpu(name=f"GPU {draw_cc}", compute_capability=draw_cc, sm_count=sms)


launches = st.builds(
    LaunchConfig,
    st.builds(Dim3, st.integers(1, 5000), st.integers(1, 3), st.integers(1, 2)),
    st.builds(Dim3, st.integers(1, 1100), st.sampled_from([1, 1, 2, 4])),
    st.sampled_from([0, 0, 1024, 16000, 48 * 1024, 100_000, 300_000]),
    st.integers(1, 260),
    st.one_of(st.none(), st.integers(1, 10**7)),
)
gpus = st.builds(_gpu, st.sampled_from(known_ccs()), st.integers(1, 200))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gpus, launches, gpus, launches)
def test_each_side_equals_its_single_launch(gpu_a, config_a, gpu_b, config_b):
    c = compare(gpu_a, config_a, gpu_b, config_b)
    singles = []
    for gpu, config, s in ((gpu_a, config_a, c.a), (gpu_b, config_b, c.b)):
        try:
            plan = plan_launch(config, gpu)
        except LaunchValidationError as exc:
            assert s.plan is None and s.problem == str(exc)
            plan = None
        else:
            assert s.plan == plan and s.problem == ""
        singles.append(plan)
    pa, pb = singles

    def values(p):
        if p is None:
            return dict.fromkeys(
                (
                    "threads_per_block",
                    "blocks",
                    "sm_count",
                    "blocks_per_sm",
                    "concurrent_blocks",
                    "waves",
                    "tail_fill",
                    "occupancy",
                )
            ) | {"limiter": None}
        return {
            "threads_per_block": p.threads_per_block,
            "blocks": p.total_blocks,
            "sm_count": p.sm_count,
            "blocks_per_sm": p.resident_blocks_per_sm,
            "concurrent_blocks": p.concurrent_blocks,
            "waves": p.waves,
            "tail_fill": p.last_wave_fill,
            "occupancy": p.occupancy.occupancy,
            "limiter": p.occupancy.limiter.replace("_", " "),
        }

    va, vb = values(pa), values(pb)
    assert [r.key for r in c.rows] == list(va)
    for r in c.rows:
        assert (r.a, r.b) == (va[r.key], vb[r.key]), r.key
        if r.key == "limiter":
            continue
        if pa is None or pb is None:
            why = (
                "neither can run"
                if pa is None and pb is None
                else "A cannot run"
                if pa is None
                else "B cannot run"
            )
            assert r.ratio.value is None and r.ratio.text == why
        else:
            assert r.ratio.value == pytest.approx(vb[r.key] / va[r.key])  # A > 0 on a valid launch
    if pa is not None:
        assert c.row("tail_fill").a_text == percent(pa.last_wave_fill)


# ---------------------------------------------------------------- CLI


def test_launch_compare_equals_the_two_single_launches(capsys):
    """GTX 1650 against H100 for N = 100,000, as JSON and as text."""
    singles = {}
    for name in ("1650", "h100"):
        code, out, _ = run(capsys, "launch", "--device", name, *N_100K, "--json")
        assert code == 0
        singles[name] = json.loads(out)
    code, out, err = run(
        capsys, "launch", "--device", "1650", *N_100K, "--compare", "--b-device", "h100", "--json"
    )
    assert code == 0 and err == ""
    data = json.loads(out)
    for side, name in (("a", "1650"), ("b", "h100")):
        assert data[side]["plan"] == singles[name]
    rows = {r["key"]: r for r in data["rows"]}
    for key, single_key in (("blocks", "total_blocks"), ("waves", "waves"), ("tail_fill", "last_wave_fill")):
        assert (rows[key]["a"], rows[key]["b"]) == (singles["1650"][single_key], singles["h100"][single_key])
    occ = (singles["1650"]["occupancy"]["occupancy"], singles["h100"]["occupancy"]["occupancy"])
    assert (rows["occupancy"]["a"], rows["occupancy"]["b"]) == occ
    assert (rows["blocks"]["a"], rows["waves"]["a"], rows["waves"]["b"]) == (98, 7, 1)

    code, text, _ = run(capsys, "launch", "--device", "1650", *N_100K, "--compare", "--b-device", "h100")
    assert code == 0
    table = {line.split("  ")[0].strip(): line.split() for line in text.splitlines()}
    assert table["blocks"][-3:] == ["98", "98", "1x"]
    assert table["waves"][-3:] == ["7", "1", "0.143x"]
    assert table["theoretical occupancy"][-3:] == ["100%", "100%", "1x"]
    assert "B needs 1 wave where A needs 7" in text


def test_b_is_a_copy_of_a_except_what_is_named(capsys):
    code, out, _ = run(
        capsys,
        "launch",
        "--device",
        "1650",
        "--grid",
        "40",
        "--block",
        "256",
        "--compare",
        "--b-regs",
        "64",
        "--json",
    )
    data = json.loads(out)
    a, b = data["a"]["plan"], data["b"]["plan"]
    assert code == 0 and a["device"] == b["device"] == GTX.name
    assert b["config"] == a["config"] | {"regs_per_thread": 64}


def test_compare_mistakes_are_one_line(capsys):
    code, _, err = run(capsys, "launch", "--device", "1650", *N_100K, "--b-device", "h100")
    assert code == 2 and "--b-device describes launch B; add --compare" in err
    code, _, err = run(capsys, "launch", "--device", "1650", *N_100K, "--compare", "--b-block", "abc")
    assert code == 2 and err.count("\n") == 1 and "launch B: " in err
    code, _, err = run(capsys, "launch", "--device", "1650", *N_100K, "--compare", "--thread", "0:0")
    assert code == 2 and "leave out --compare" in err


def test_compare_where_b_cannot_run_prints_why(capsys):
    argv = ("--grid", "64", "--block", "128", "--smem", "100000", "--compare", "--b-device", "1650")
    code, out, _ = run(capsys, "launch", "--device", "h100", *argv)
    assert code == 0
    assert "B cannot run: " in out and "shared memory" in out
    waves = next(line for line in out.splitlines() if line.startswith("waves")).split()
    assert waves[1].isdigit() and waves[2:] == ["cannot", "run", "B", "cannot", "run"]
