"""The acceptance runner: each check in a child process of its own, so a crash, a hang or an
exception costs that check only; --only/--skip and the time budget; the report on disk and as
text. Real child processes, stand-in checks (tests/acceptance/stubs.py): no GPU needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.acceptance.context import CheckContext, Sizes
from explorer.acceptance.readme import README_FILE
from explorer.acceptance.registry import CHECKS, CheckSpec
from explorer.acceptance.runner import LOG_FILE, REPORT_JSON, REPORT_TEXT, CheckSelection, run_acceptance
from explorer.errors import UserError
from tests.acceptance import stubs

REPO = Path(__file__).resolve().parents[2]


def _ctx(tmp_path: Path) -> CheckContext:
    return CheckContext(device="cuda:0", out_dir=tmp_path / "acc", repo=REPO, sizes=Sizes.tiny())


def _spec(name: str, fn, expected_s: float = 1.0, deadline_s: float = 120.0) -> CheckSpec:
    return CheckSpec(name, f"stand-in: {name}", fn, expected_s, deadline_s)


@pytest.mark.slow
def test_every_way_a_check_can_end_is_reported_and_the_others_still_run(tmp_path):
    specs = [
        _spec("crash", stubs.crashes),
        _spec("raise", stubs.raises),
        _spec("skip", stubs.cannot_run),
        _spec("nonsense", stubs.returns_nonsense),
        _spec("good", stubs.passes),
        _spec("low", stubs.misses),
    ]
    said: list[str] = []
    report = run_acceptance(specs, _ctx(tmp_path), budget_s=600, gpu="Stand-in GPU", say=said.append)
    by = {c.name: c for c in report.checks}
    assert by["crash"].status == "error" and "crashed (SIGSEGV)" in by["crash"].summary
    assert "about to crash" in by["crash"].summary  # its last words say where it was
    assert by["raise"].status == "error" and by["raise"].summary == "RuntimeError: the driver said no"
    assert by["skip"].status == "skip" and by["skip"].summary == "this machine has no such thing"
    assert by["nonsense"].status == "error" and "not a CheckResult" in by["nonsense"].summary
    assert by["good"].status == "pass" and by["good"].figures[0].ratio == pytest.approx(0.8)
    assert by["low"].status == "miss" and by["low"].figures[0].met is False
    assert not report.ok  # an error is a failure of the run; a miss is only a finding
    assert all(c.duration_s > 0 for c in report.checks)
    # the checks ran in processes of their own, not in the runner's
    import os

    assert by["good"].details["pid"] != os.getpid()
    assert any(line.startswith("PASS") and "good" in line for line in said)


@pytest.mark.slow
def test_a_check_that_hangs_is_stopped_at_its_deadline_and_says_where_it_was(tmp_path):
    specs = [_spec("hang", stubs.hangs, deadline_s=5.0), _spec("after", stubs.passes)]
    report = run_acceptance(specs, _ctx(tmp_path), budget_s=600, gpu="Stand-in GPU", say=lambda _: None)
    hang, after = report.checks
    assert hang.status == "timeout" and "5 s deadline" in hang.summary
    assert "waiting for a kernel that never returns" in hang.summary
    assert after.status == "pass"


@pytest.mark.slow
def test_only_skip_and_the_budget_leave_checks_out_with_the_reason(tmp_path):
    specs = [
        _spec("first", stubs.passes),
        _spec("second", stubs.passes),
        _spec("heavy", stubs.passes, expected_s=10_000),
    ]
    report = run_acceptance(
        specs, _ctx(tmp_path), selection=CheckSelection(skip=("second",)), budget_s=600, say=lambda _: None
    )
    statuses = {c.name: (c.status, c.summary) for c in report.checks}
    assert statuses["first"][0] == "pass"
    assert statuses["second"] == ("not run", "left out by --skip")
    assert statuses["heavy"][0] == "not run" and "run it alone with --only heavy" in statuses["heavy"][1]
    report = run_acceptance(
        specs, _ctx(tmp_path), selection=CheckSelection(only=("second",)), budget_s=600, say=lambda _: None
    )
    assert [c.status for c in report.checks] == ["not run", "pass", "not run"]
    with pytest.raises(UserError, match="no check named nope"):
        run_acceptance(specs, _ctx(tmp_path), selection=CheckSelection(only=("nope",)), say=lambda _: None)


@pytest.mark.slow
def test_the_report_is_written_as_json_text_and_a_log_and_nothing_else(tmp_path):
    specs = [_spec("good", stubs.passes), _spec("file", stubs.writes_a_file), _spec("skip", stubs.cannot_run)]
    ctx = _ctx(tmp_path)
    report = run_acceptance(
        specs, ctx, budget_s=600, gpu="Stand-in GPU", command="gpu_acceptance.py", say=lambda _: None
    )
    files = sorted(p.name for p in ctx.out_dir.iterdir())
    assert files == sorted([REPORT_JSON, REPORT_TEXT, LOG_FILE, README_FILE, "from-the-check.txt"])
    data = json.loads((ctx.out_dir / REPORT_JSON).read_text())
    assert data["format"] == "device-explorer-gpu-acceptance" and data["ok"] is True
    assert [c["status"] for c in data["checks"]] == ["pass", "pass", "skip"]
    assert data["checks"][0]["figures"][0]["target"] == ">= 70% of a stand-in peak"
    text = (ctx.out_dir / REPORT_TEXT).read_text()
    assert text == report.summary_text()
    assert (
        "PASS     good" in text
        and "a stand-in figure: 80 GB/s; vs a stand-in peak 100 = 80%; target >= 70% of a stand-in peak met"
        in text
    )
    assert "3 checks: 2 pass, 1 skip; no failures" in text
    readme = (ctx.out_dir / README_FILE).read_text()
    assert "None: every check that ran passed" in readme and "| SKIP | `skip` |" in readme
    log = (ctx.out_dir / LOG_FILE).read_text()
    assert "===== good (exit 0" in log and "measuring something that does not need a GPU" in log


def test_every_registered_check_names_a_function_the_child_can_find():
    import importlib

    assert len({c.name for c in CHECKS}) == len(CHECKS)
    for spec in CHECKS:
        module, _, func = spec.target.partition(":")
        assert getattr(importlib.import_module(module), func) is spec.run
        assert 0 < spec.expected_s < spec.deadline_s <= 600
