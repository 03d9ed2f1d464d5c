"""What the app says about a remote describes that server, not this laptop: which workloads can run
there, whether its self-test passes, and its live readings (from an agent that loads NVML only). The
"GPU server" is the loopback sshd with a remote Python whose NVML sees two GPUs and whose torch is
the CPU build (``servers.fake_gpu_python``), the laptop is this machine, which has no GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from explorer.remote.target import SSH_CONFIG_ENV
from tests.remote.servers import ALIAS, agent_python, fake_gpu_python, ready_remote


def _cli(sshd, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, SSH_CONFIG_ENV: str(sshd.config)}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *argv], capture_output=True, text=True, env=env, timeout=600
    )


def test_bench_lists_what_can_run_on_the_server_not_on_the_laptop(sshd, tmp_path):
    gpu_server = _cli(sshd, "bench", "--json", "--host", ALIAS, "--remote-python", fake_gpu_python(tmp_path))
    assert gpu_server.returncode == 0, gpu_server.stderr
    listed = {w["name"]: w for w in json.loads(gpu_server.stdout)}
    assert listed["two_gpus"]["cannot_run_here"] is None and listed["two_gpus"]["host"] == ALIAS
    # the laptop itself has no GPU: asked here, the same workload is refused, naming this machine
    here = subprocess.run(
        [sys.executable, "-m", "explorer", "bench", "--json"], capture_output=True, text=True, timeout=120
    )
    assert (
        "this machine has none"
        in {w["name"]: w for w in json.loads(here.stdout)}["two_gpus"]["cannot_run_here"]
    )
    # a server without a GPU is named as the one that has none
    plain = _cli(sshd, "bench", "--host", ALIAS, "--remote-python", agent_python())
    assert plain.returncode == 0, plain.stderr
    tail = plain.stdout[
        plain.stdout.index(f"Cannot run ON {ALIAS} (no NVIDIA GPU there: NVML library not found") :
    ]
    assert "two_gpus needs 2 GPUs" in tail and f"; {ALIAS} has none (" in tail and "this machine" not in tail


def test_the_server_self_test_fails_when_nvml_sees_gpus_its_torch_cannot_use(sshd, tmp_path):
    r = _cli(sshd, "self-test", "--host", ALIAS, "--remote-python", fake_gpu_python(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    failed = [line for line in r.stdout.splitlines() if "FAIL" in line]
    assert any(
        "NVML sees 2 NVIDIA GPU(s) but this torch is a CPU-only build" in line
        and "install a CUDA build of torch" in line
        for line in failed
    ), r.stdout
    assert f"self-test on {ALIAS}: 1 check(s) FAILED" in r.stdout and "all checks passed" not in r.stdout
    # the server's GPU queue is checked too: where it is and the bounds that apply
    assert "GPU queue in /tmp: a run that stops making progress loses its turn after 30 s" in r.stdout


def _remote_agents(sshd) -> list[psutil.Process]:
    found = []
    for proc in psutil.Process(sshd.proc.pid).children(recursive=True):
        try:
            if proc.cmdline()[-3:] == ["-m", "explorer", "agent"]:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def test_the_windows_live_readings_come_from_an_agent_without_torch_or_numba(
    sshd, qtbot, tmp_path, monkeypatch
):
    pytest.importorskip("pytestqt")
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    monkeypatch.setenv(SSH_CONFIG_ENV, str(sshd.config))
    context, host = ready_remote(qtbot, python=fake_gpu_python(tmp_path))
    try:
        assert [g.key for g in host.gpus] == ["cuda:0", "cuda:1"]
        qtbot.waitUntil(lambda: host.live.latest("cuda:1") is not None, timeout=60_000)
        (live,) = _remote_agents(sshd)  # the listing's agent is gone; one agent reads live values
        maps = Path(f"/proc/{live.pid}/maps").read_text()
        assert "libtorch" not in maps and "llvmlite" not in maps  # neither torch nor numba loaded there
        mib = live.memory_info().rss / 2**20
        assert mib < 60, f"the live-readings agent holds {mib:.0f} MiB"
        assert host.live.latest("cuda:1").memory_total_bytes == 40 * 1024**3
    finally:
        context.remotes.shutdown()


def test_the_benchmarks_panel_says_what_the_chosen_machine_can_run(sshd, qtbot, tmp_path, monkeypatch):
    pytest.importorskip("pytestqt")
    from explorer.ui.bench_panel import BenchPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    monkeypatch.setenv(SSH_CONFIG_ENV, str(sshd.config))
    context, host = ready_remote(qtbot, python=fake_gpu_python(tmp_path))
    panel = BenchPanel(context)
    qtbot.addWidget(panel)
    try:
        c = panel.controls
        c.set_workload("two_gpus")
        said = c.cannot_run_label.text()
        assert said.startswith("Cannot run here: two_gpus needs 2 GPUs") and "this machine has none" in said
        assert said.endswith(f"; {ALIAS}'s GPUs below can run it.")
        c.remote_boxes()[(host.ident, "cuda:0")].setChecked(True)
        assert c.cannot_run_label.isHidden()  # the server has the two GPUs it needs
        c.remote_boxes()[(host.ident, "cuda:1")].setChecked(True)
        assert c.build_plan() is not None and c.build_plan().remote == host.remote
    finally:
        panel.shutdown()
        context.remotes.shutdown()
