"""The acceptance's decisions with plain numbers: a figure against its target, occupancy cases,
the memory models' ratios, the device fields against their references, pytest's summary."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.acceptance.checks_devices import (
    QT_ONLY_CHECKS,
    device_rows,
    judge_self_test,
    live_rows,
    parse_smi_csv,
)
from explorer.acceptance.checks_launch import sm_map_figures
from explorer.acceptance.checks_lessons import pytest_counts
from explorer.acceptance.judge import (
    OccupancyCase,
    above_figure,
    divergence_figure,
    occupancy_figure,
    share_figure,
    status_of,
    transpose_figure,
    under_figure,
    within_figure,
)

positive = st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)


@given(value=positive, limit=positive)
def test_under_is_met_exactly_below_the_limit(value, limit):
    f = under_figure("kernel time", value, "ms", limit, "the limit")
    assert f.met == (value < limit) and f.ratio == value / limit and f.target == "< the limit"
    assert under_figure("kernel time", None, "ms", limit, "the limit").met is None


@given(value=positive, reference=positive, at_least=st.floats(0.01, 1.0))
def test_a_share_is_met_exactly_when_value_over_reference_reaches_the_target(value, reference, at_least):
    f = share_figure("x", value, "GB/s", reference, "the roof", at_least)
    assert f.ratio == value / reference
    assert f.met == (value / reference >= at_least)


@given(value=positive, model=positive, tolerance=st.floats(0.0, 1.0))
def test_within_is_met_exactly_inside_the_tolerance_band(value, model, tolerance):
    f = within_figure("x", value, "GB/s", model, "the model", tolerance)
    assert f.met == (abs(value / model - 1) <= tolerance)


@pytest.mark.parametrize("missing", [None, math.nan, math.inf])
def test_a_figure_without_a_value_or_reference_has_no_verdict_and_says_why(missing):
    for f in (
        share_figure("x", missing, "GB/s", 100.0, "the roof"),
        share_figure("x", 50.0, "GB/s", missing, "the roof"),
        within_figure("x", 50.0, "GB/s", missing, "the model", 0.3),
        above_figure("x", missing, "GB/s", 1.0, "pageable"),
    ):
        assert f.met is None and f.note
    assert status_of(True, [share_figure("x", None, "GB/s", 1.0, "r")]) == "pass"


def test_status_is_fail_for_a_wrong_answer_miss_for_a_missed_target_else_pass():
    met, missed = share_figure("a", 9.0, "", 10.0, "r"), share_figure("b", 1.0, "", 10.0, "r")
    assert status_of(True, [met]) == "pass"
    assert status_of(True, [met, missed]) == "miss"
    assert status_of(False, [met]) == "fail"


def test_occupancy_is_met_only_when_every_case_agrees_and_enough_were_compared():
    same = [OccupancyCase(256, 0, 32, 0, 0, 8, 8)] * 300
    assert occupancy_figure(same, 300).met is True
    assert occupancy_figure(same[:10], 300).met is False  # too few compared: said, not passed
    off = [*same[:299], OccupancyCase(1000, 64, 64, 0, 200_000, 1, 0)]
    f = occupancy_figure(off, 300)
    assert f.met is False and f.value == 299 and f.unit == "of 300"


def test_the_memory_models_ratios():
    # divergence: twice as slow is the model; 1.4x to 2.6x is inside +-30%
    assert divergence_figure(2.0, 1.0, 2.0).met is True
    assert divergence_figure(1.05, 1.0, 2.0).met is False  # the compiler merged the paths: a finding
    assert divergence_figure(None, 1.0, 2.0).met is None
    assert (
        transpose_figure(3.0, 1.0, 32).met is True and "32 wavefronts" in transpose_figure(3.0, 1.0, 32).note
    )
    assert transpose_figure(1.0, 1.2, 32).met is False


def _app() -> dict:
    return {
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-abc",
        "pci_bus_id": "00000000:19:00.0",
        "compute_capability": "9.0",
        "memory_total_bytes": 85_520_809_984,
        "sm_count": 132,
        "memory_bus_width_bits": 5120,
        "clock_sm_max_mhz": 1980,
        "clock_memory_max_mhz": 2619,
        "pcie_generation_max": 5,
        "pcie_width_max": 16,
        "driver_version": "580.159.04",
        "limits": {"max_threads_per_block": 1024, "regs_per_sm": 65536},
        "live": {"power_limit_w": 700.0, "unavailable": {}},
    }


def test_device_rows_agree_field_by_field_and_name_the_one_that_differs():
    smi_text = (
        "0, GPU-abc, NVIDIA H100 80GB HBM3, 00000000:19:00.0, 9.0, 81559, 1980, 2619, 5, 16, 5, 16, "
        "700.00, 580.159.04, 345, 2619, Enabled, P0\n"
    )
    (smi,) = parse_smi_csv(smi_text)
    nvml = {
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": "GPU-abc",
        "compute_capability": "9.0",
        "memory_total_bytes": 85_520_809_984,
    }
    torch_props = {"name": "NVIDIA H100 80GB HBM3", "multi_processor_count": 132}
    driver = {
        "COMPUTE_CAPABILITY_MAJOR": 9,
        "COMPUTE_CAPABILITY_MINOR": 0,
        "MULTIPROCESSOR_COUNT": 132,
        "GLOBAL_MEMORY_BUS_WIDTH": 5120,
        "MAX_THREADS_PER_BLOCK": 1024,
        "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536,
        "MAX_BLOCKS_PER_MULTIPROCESSOR": 32,
        "RESERVED_SHARED_MEMORY_PER_BLOCK": 1024,
    }
    table = {
        "max_threads_per_block": 1024,
        "regs_per_sm": 65536,
        "max_blocks_per_sm": 32,
        "reserved_smem_per_block_bytes": 1024,
    }
    rows = device_rows(_app(), nvml, smi, torch_props, driver, table)
    assert not [r for r in rows if r.wrong], [r for r in rows if r.wrong]
    # a limit the record leaves empty is a gap the page shows as n/a, not a wrong value
    assert [(r.field, r.reference) for r in rows if r.gap] == [("limits.max_blocks_per_sm", 32)]
    sources = {r.source for r in rows}
    assert sources == {"NVML", "nvidia-smi", "torch", "CUDA driver"}
    assert len(rows) >= 20
    wrong = dict(driver, MULTIPROCESSOR_COUNT=114)  # the record says 132, the driver another GPU's count
    bad = [r for r in device_rows(_app(), nvml, smi, torch_props, wrong, table) if r.wrong]
    assert [(r.field, r.source) for r in bad] == [("sm_count", "CUDA driver")]


def test_nvidia_smi_gaps_are_left_out_not_counted_as_mismatches():
    (smi,) = parse_smi_csv(
        "0, GPU-abc, H100, [N/A], [N/A], 81559, [N/A], [N/A], 5, 16, 1, 16, [N/A], 580.1, 0, 0, Disabled, P8"
    )
    assert smi["compute_cap"] is None and smi["clocks.max.sm"] is None
    rows = device_rows({"name": "H100", "memory_total_bytes": 81559 * 2**20}, {}, smi, {}, {}, None)
    assert {r.field for r in rows} == {
        "name",
        "uuid",
        "memory_total_bytes",
        "pcie_generation_max",
        "pcie_width_max",
        "driver_version",
    }
    assert {r.field for r in rows if r.gap} == {
        "uuid",
        "pcie_generation_max",
        "pcie_width_max",
        "driver_version",
    }
    assert parse_smi_csv("garbage line\n") == []


def test_live_rows_ask_a_hopper_gpu_for_sm_activity_and_others_for_a_reason():
    live = {
        "utilization_gpu_pct": 3.0,
        "memory_used_bytes": 1,
        "pcie_rx_bytes_per_s": None,
        "pcie_tx_bytes_per_s": 10.0,
        "sm_activity_pct": None,
        "sm_occupancy_pct": None,
        "unavailable": {
            "pcie_rx_bytes_per_s": "not supported",
            "sm_activity_pct": "needs Hopper",
            "sm_occupancy_pct": "needs Hopper",
        },
    }
    assert all(r.equal for r in live_rows({"live": live}, (8, 0)))
    hopper = [r for r in live_rows({"live": live}, (9, 0)) if not r.equal]
    assert [r.field for r in hopper] == ["live.sm_activity_pct", "live.sm_occupancy_pct"]


def test_self_test_failures_of_qt_alone_do_not_count():
    report = {
        "checks": [
            {"name": "import PySide6", "status": "fail", "detail": "No module named PySide6"},
            {"name": "window", "status": "fail", "detail": "no Qt"},
            {"name": "gpu workload", "status": "pass", "detail": "ok"},
            {"name": "benchmark engine", "status": "fail", "detail": "worker died"},
        ]
    }
    counted, qt_only = judge_self_test(report)
    assert [c["name"] for c in counted] == ["benchmark engine"]
    assert {c["name"] for c in qt_only} <= QT_ONLY_CHECKS and len(qt_only) == 2


def test_the_sm_map_is_judged_against_the_models_busy_sms():
    sms = 4
    model = [b % sms for b in range(8)]
    figures = sm_map_figures([0, 1, 2, 3, 3, 2, 1, 0], sms, model)
    assert figures[0].met is True and figures[0].value == 4
    assert figures[2].value == 4  # blocks 0-3 where round-robin puts them, 4-7 not
    assert sm_map_figures([0, 0, 0, 0, 0, 0, 0, 0], sms, model)[0].met is False


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("...\n31 passed, 2 skipped in 71.20s (0:01:11)\n", {"passed": 31, "skipped": 2}),
        ("F.\n=== 1 failed, 30 passed, 1 error in 3.1s ===", {"failed": 1, "passed": 30, "errors": 1}),
        ("no tests ran in 0.01s", {}),
    ],
)
def test_pytest_summary_counts(text, counts):
    assert pytest_counts(text) == counts
