"""``device-explorer self-test``: a lab trusts its exit status, so it must fail when something is broken."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.commands import selftest
from explorer.commands.selftest import Check, CheckFailed

ROOT = Path(__file__).resolve().parent.parent


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env.update(extra)
    return env


@pytest.mark.slow
def test_self_test_passes_on_this_machine_and_reports_every_dependency():
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "self-test", "--json"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(proc.stdout)
    failed = [f"{c['name']}: {c['detail']}" for c in report["checks"] if c["status"] == "fail"]
    assert failed == [], failed
    assert proc.returncode == 0 and report["ok"] is True
    names = {c["name"] for c in report["checks"]}
    for module_name, _dist in selftest.DEPENDENCIES:
        assert f"import {module_name.split('.')[0]}" in names
    assert {
        "resources",
        "devices",
        "cpu matmul",
        "compiled code",
        "benchmark engine",
        "cuda simulator",
        "launch real run",
        "window",
    } <= names
    torch_line = next(c for c in report["checks"] if c["name"] == "import torch")
    import torch

    assert torch.__version__ in torch_line["detail"]
    # This machine has no NVIDIA GPU: that is reported, and it is not a failure.
    gpu_lines = [c for c in report["checks"] if c["name"] == "gpu"]
    assert len(gpu_lines) == 1 and gpu_lines[0]["status"] == "info"


def _run_with(monkeypatch, capsys, plan, *, as_json=False):
    monkeypatch.setattr(selftest, "planned_checks", lambda: plan)
    code = selftest.run_self_test(argparse.Namespace(json=as_json))
    return code, capsys.readouterr().out


def test_one_failed_check_makes_the_exit_status_nonzero_and_names_the_reason(monkeypatch, capsys):
    def broken(notes):
        raise CheckFailed("cannot import torch: OSError: libtorch_cpu.so: cannot open shared object file")

    plan = [("fine", lambda notes: "all good"), ("import torch", broken)]
    code, out = _run_with(monkeypatch, capsys, plan)
    assert code == 1
    assert "PASS  fine" in out
    assert "FAIL  import torch" in out and "libtorch_cpu.so" in out
    assert "1 check FAILED" in out


def test_an_unexpected_exception_is_a_fail_line_not_a_traceback(monkeypatch, capsys):
    def crashes(notes):
        raise ZeroDivisionError("division by zero")

    code, out = _run_with(monkeypatch, capsys, [("devices", crashes)], as_json=True)
    report = json.loads(out)
    assert code == 1 and report["ok"] is False
    assert report["checks"] == [
        {
            "name": "devices",
            "status": "fail",
            "detail": "ZeroDivisionError: division by zero",
            "duration_s": report["checks"][0]["duration_s"],
        }
    ]
    assert "Traceback" not in out


def test_info_lines_do_not_fail_the_run(monkeypatch, capsys):
    def with_note(notes):
        notes.append(Check("gpu", "info", "No NVIDIA GPU was found on this machine."))
        return "CPU found"

    code, out = _run_with(monkeypatch, capsys, [("devices", with_note)])
    assert code == 0
    lines = out.splitlines()
    # the check's own line comes before the note it made
    assert lines[1].startswith("PASS  devices") and lines[2].startswith("INFO  gpu")


def test_a_disturbed_or_implausible_benchmark_is_a_warning_with_its_reason(monkeypatch, capsys):
    from explorer.bench.results import BenchPoint

    def point(median_s: float, noisy: bool = False) -> BenchPoint:
        return BenchPoint(
            "matmul",
            "cpu",
            "cpu",
            128,
            "n=128",
            median_s=median_s,
            throughput=2 * 128**3 / median_s / 1e9,
            throughput_unit="GFLOP/s",
            noisy=noisy,
            noise_reason="other programs used 48% of the CPU during this point" if noisy else "",
        )

    assert selftest.benchmark_warnings(point(40e-6), reference_s=30e-6) == []
    [noisy] = selftest.benchmark_warnings(point(40e-6, noisy=True), reference_s=30e-6)
    assert noisy == "the matmul point was disturbed: other programs used 48% of the CPU during this point"
    # 0.3 GFLOP/s for a matmul this process does in 30 us: flagged even though no monitor saw why
    [slow] = selftest.benchmark_warnings(point(2 * 128**3 / 0.3e9), reference_s=30e-6)
    assert "(0.3 GFLOP/s) is 466x the 30 us this process measured" in slow and "implausibly slow" in slow

    def warned(notes):
        notes.append(Check("benchmark engine", "warn", noisy))
        return "matmul n=128 in a worker process"

    code, out = _run_with(monkeypatch, capsys, [("benchmark engine", warned)])
    assert code == 0  # the engine works; its figure is what is in doubt
    lines = out.splitlines()
    assert lines[2].startswith("WARN  benchmark engine") and "48% of the CPU" in lines[2]
    assert lines[-1].startswith("self-test: all checks passed (1 warning: see the WARN lines)")


def test_a_missing_dependency_fails_its_import_check():
    with pytest.raises(CheckFailed, match="cannot import no_such_module_xyz"):
        selftest.check_import("no_such_module_xyz", "no-such-dist")


def test_a_blank_window_render_fails(monkeypatch):
    from PySide6.QtGui import QColor, QImage

    def blank(panel, size):
        image = QImage(size[0], size[1], QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        return image

    monkeypatch.setattr(selftest, "_find_renderer", lambda: blank)
    with pytest.raises(CheckFailed, match="blank"):
        selftest.check_window()


@pytest.mark.slow
def test_simulator_check_runs_the_kernel_in_an_agent_only_with_the_simulator_on(monkeypatch):
    assert "every element right" in selftest.check_cuda_simulator()
    # In a process without the switch the kernel is refused, not run on a GPU by accident.
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    from explorer.commands.simcheck import simulator_kernel_check

    result = simulator_kernel_check()
    assert result["ok"] is False and "NUMBA_ENABLE_CUDASIM=1" in result["error"]


# --- the bundle's way of starting a child process (explorer.frozen, packaging/entry.py) ----------


@pytest.mark.slow
def test_entry_script_serves_the_agent_the_bundle_starts():
    """The bundle's executable with ``agent`` (what local_agent_argv gives when frozen) is an agent."""
    from explorer.agent.child import AgentProcess

    with AgentProcess([sys.executable, str(ROOT / "packaging" / "entry.py"), "agent"], env=_env()) as agent:
        hello = agent.start()
        assert hello.pid == agent.pid
        assert agent.request("ping", timeout_s=30)["pid"] == agent.pid


def test_a_present_gpu_that_torch_cannot_use_is_explained(monkeypatch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("torch can use a GPU here")
    monkeypatch.setattr(selftest, "_found_gpus", 1)
    notes: list[Check] = []
    assert selftest.check_gpu_workload(notes) is None
    assert [n.status for n in notes] == ["info"]
    assert "GPU benchmarks are unavailable" in notes[0].detail
    monkeypatch.setattr(selftest, "_found_gpus", 0)
    notes.clear()
    assert selftest.check_gpu_workload(notes) is None and notes == []
