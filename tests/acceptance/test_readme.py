"""The report folder's README lists every FAIL and MISS: each check not passed with its failing
figures, the gpu_tests step's failing tests, and the failures of an extra pytest log kept there
(the H100 run's own log is the fixture)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.acceptance.judge import count_figure, share_figure
from explorer.acceptance.readme import (
    README_FILE,
    pytest_log_failures,
    readme_text,
    report_from_dict,
    write_readme,
)
from explorer.acceptance.records import CheckResult, Report
from explorer.acceptance.runner import REPORT_JSON

REPO = Path(__file__).resolve().parents[2]
H100_EXTRA = REPO / "benchmarks/results/h100-2026-11-26/run2-pytest-extra-gpu.log"


def _report() -> Report:
    checks = [
        CheckResult("environment", "pass", "NVIDIA H100, driver 580.159.04 (CUDA 13.0)"),
        CheckResult(
            "sgemm",
            "fail",
            "187,448 GFLOP/s at n=1024; FAILED: above the FP32 peak at boost",
            [share_figure("sgemm n=1024", 187_448.0, "GFLOP/s", 66_908.0, "the FP32 peak", bound=66_908.0)],
        ),
        CheckResult(
            "memory_bandwidth",
            "miss",
            "vector add: 2,000 GB/s (60%)",
            [share_figure("vector add", 2000.0, "GB/s", 3352.0, "the DRAM roof")],
        ),
        CheckResult(
            "gpu_tests",
            "fail",
            "12 passed, 2 failed",
            [count_figure("gpu tests passed", 12, 14, "all", "tests run", False)],
            {
                "failures": [
                    "FAILED tests/gpu/test_a.py::test_one - AssertionError",
                    "ERROR tests/gpu/test_b.py::test_two",
                ]
            },
        ),
        CheckResult("pcie", "timeout", "stopped at its deadline of 120 s"),
        CheckResult("remote", "not run", "left out"),
    ]
    return Report(
        "2026-11-29T02:00:00+00:00", "gpu-host", "cuda:0", "NVIDIA H100 80GB HBM3", 480.0, checks, 300.0
    )


def _problems_section(text: str) -> str:
    return text.split("## Every FAIL and MISS", 1)[1].split("## Every check", 1)[0]


def test_every_fail_and_miss_is_listed_with_the_failing_tests():
    section = _problems_section(readme_text(_report()))
    for words in (
        "**FAIL** `sgemm`",
        "faster than the hardware can go",  # its impossible figure's line
        "**MISS** `memory_bandwidth`",
        "vector add: 2,000 GB/s",
        "**FAIL** `gpu_tests`",
        "FAILED tests/gpu/test_a.py::test_one - AssertionError",
        "ERROR tests/gpu/test_b.py::test_two",
        "**TIMEOUT** `pcie`",
    ):
        assert words in section, words
    for passed in ("`environment`", "`remote`"):
        assert passed not in section


def test_the_h100_extra_logs_two_failures_are_listed():
    failures = pytest_log_failures(H100_EXTRA.read_text())
    assert failures == [
        "FAILED test_on_a_gpu_l2_and_dram_are_measured_with_l2_faster_and_its_knee_near_the_l2_size "
        "(tests/bench/test_gpu_roofs.py:61: TypeError)",
        "FAILED test_spin_blocks_makespan_is_within_10_percent_of_the_simulation[1] "
        "(tests/launch/test_measured_gpu.py:39: AssertionError)",
    ]


def test_pytests_short_summary_lines_are_taken_where_printed_and_a_count_is_never_lost():
    log = "F.\n=== short test summary info ===\nFAILED tests/x.py::test_y - assert 1 == 2\n1 failed, 1 passed in 0.5s\n"
    assert pytest_log_failures(log) == ["FAILED tests/x.py::test_y - assert 1 == 2"]
    assert pytest_log_failures("FF\n2 failed in 0.1s\n") == [
        "2 more failed (pytest's count: 2; the log shows 0)"
    ]
    assert pytest_log_failures("..\n2 passed in 0.1s\n") == []


def test_the_readme_in_a_folder_lists_its_extra_logs_failures(tmp_path):
    shutil.copy(H100_EXTRA, tmp_path / H100_EXTRA.name)
    report = Report(
        "2026-11-29T02:00:00+00:00", "h", "cuda:0", "GPU", 480.0, [CheckResult("sgemm", "pass", "ok")]
    )
    text = write_readme(tmp_path, report).read_text()
    section = _problems_section(text)
    assert section.count(f"**FAIL** in `{H100_EXTRA.name}`") == 2
    assert "2 failed, 7 passed, 15 deselected" in text


@pytest.mark.slow
def test_the_command_writes_the_readme_again_from_a_report_folder(tmp_path):
    (tmp_path / REPORT_JSON).write_text(json.dumps(_report().to_dict(), default=str))
    shutil.copy(H100_EXTRA, tmp_path / H100_EXTRA.name)
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/gpu_acceptance.py"), "--readme", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    text = (tmp_path / README_FILE).read_text()
    assert "**FAIL** `gpu_tests`" in text and f"**FAIL** in `{H100_EXTRA.name}`" in text
    assert report_from_dict(json.loads((tmp_path / REPORT_JSON).read_text())).checks[1].figures[0].impossible
    bad = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/gpu_acceptance.py"), "--readme", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
