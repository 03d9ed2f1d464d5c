"""A GPU shared by several users: runs queue behind a per-GPU lock held on that machine, and a
point measured while another process used the GPU (NVML's list, faked here) is marked disturbed."""

from __future__ import annotations

import fcntl
import os
import threading

import pytest

from explorer.agent import gpushare
from explorer.bench import execute
from explorer.bench.execute import PointSpec, run_point
from explorer.bench.results import BenchPoint
from explorer.bench.runner import BenchPlan, BenchRun
from tests.devices.fake_nvml import FakeGpu, FakeProcess, make_fake_nvml


@pytest.fixture
def fake_nvml(monkeypatch):
    fake = make_fake_nvml()
    monkeypatch.setattr("explorer.devices.nvml.import_nvml", lambda: fake)
    monkeypatch.setattr(execute, "_nvml_index_of", {})
    return fake


def _hold(path):
    """Another run's lock: a separate open file holding the flock, as another process would."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_a_second_run_waits_for_the_gpu_and_says_how_long(tmp_path):
    other = _hold(tmp_path / "gpu-x.lock")
    threading.Timer(0.5, os.close, (other,)).start()
    waits: list[float] = []
    try:
        waited = gpushare.hold_gpu_lock("gpu-x", waits.append, directory=tmp_path, poll_s=0.05)
        assert waited >= 0.45 and len(waits) >= 5 and waits == sorted(waits)
        # held now: a third run waits behind this one
        with pytest.raises(BlockingIOError):
            _hold(tmp_path / "gpu-x.lock")
    finally:
        gpushare.release_gpu_locks()
    os.close(_hold(tmp_path / "gpu-x.lock"))  # and given back


def test_the_lock_folder_is_made_for_every_user(tmp_path):
    folder = tmp_path / "locks"
    try:
        gpushare.hold_gpu_lock("gpu-y", lambda s: None, directory=folder)
    finally:
        gpushare.release_gpu_locks()
    assert folder.stat().st_mode & 0o7777 == 0o1777
    assert (folder / "gpu-y.lock").stat().st_mode & 0o777 == 0o666


def test_a_benchmark_run_queues_for_a_gpu_another_run_holds(tmp_path, monkeypatch):
    """Through the agent protocol: the worker waits for the lock; the run is told each second."""
    monkeypatch.setenv(gpushare.LOCK_DIR_ENV, str(tmp_path))
    key, _ = gpushare.gpu_identity("cuda:0")  # this machine's own answer (no NVML: cuda-0)
    other = _hold(tmp_path / f"{key}.lock")
    timer = threading.Timer(2.5, os.close, (other,))
    timer.start()
    run = BenchRun(BenchPlan(workload="_crash_test", devices=["cuda:0"], sizes=[1], repeats=1))
    messages: list[str] = []
    run.on_waiting = messages.append
    points = [e for e in run.events() if isinstance(e, BenchPoint)]
    timer.join()
    assert len(points) == 1
    assert len(messages) >= 2, messages
    assert messages[0] == "waiting: another run is using this GPU (0s)"
    assert messages[-1].startswith("waiting: another run is using this GPU (") and messages[-1] != messages[0]


def test_the_lock_is_the_gpus_uuid_whatever_cuda_calls_it(fake_nvml):
    uuid1 = fake_nvml.gpus[1].uuid
    key, index = gpushare.gpu_identity("cuda:0", env={"CUDA_VISIBLE_DEVICES": "1"})
    assert index == 1 and key == "gpu-" + gpushare._safe(uuid1)
    assert gpushare.gpu_identity("cuda:1", env={"CUDA_VISIBLE_DEVICES": "1"}) == ("cuda-1", None)


def test_other_processes_on_the_gpu_are_named_but_not_this_one(fake_nvml):
    assert gpushare.other_gpu_processes(0) == ["python (pid 4242)"]
    assert gpushare.other_gpu_processes(0, own_pid=4242) == []
    assert gpushare.other_gpu_processes(1) == []
    assert gpushare.other_gpu_processes(None) == []


def test_a_point_measured_while_another_process_used_the_gpu_is_marked(fake_nvml):
    fake_nvml.gpus[0].processes = [FakeProcess(5151, "train.py", 2 * 1024**3)]
    p, _ = run_point(PointSpec(0, "_crash_test", "cuda:0", "cuda:0", "plain", 1, repeats=3, budget_s=0.1))
    assert p.error is None and p.noisy
    assert "other processes used this GPU while it was measured: train.py (pid 5151)" in p.noise_reason


def test_a_quiet_gpu_leaves_the_point_unmarked_by_it(monkeypatch):
    fake = make_fake_nvml([FakeGpu(processes=[])])
    monkeypatch.setattr("explorer.devices.nvml.import_nvml", lambda: fake)
    monkeypatch.setattr(execute, "_nvml_index_of", {})
    p, _ = run_point(PointSpec(0, "_crash_test", "cuda:0", "cuda:0", "plain", 1, repeats=3, budget_s=0.1))
    assert p.error is None and "this GPU" not in p.noise_reason


def test_the_cli_says_it_waits_for_a_gpu_on_the_remote(sshd, tmp_path):
    """``bench --host``: the lock is taken on the remote; the wait is said on stderr, points on stdout."""
    import json
    import subprocess
    import sys

    from tests.remote.servers import ALIAS, agent_python

    other = _hold(tmp_path / "cuda-0.lock")  # the remote is this machine, without NVML: cuda-0
    timer = threading.Timer(1.5, os.close, (other,))
    timer.start()
    env = {**os.environ, "DEVICE_EXPLORER_SSH_CONFIG": str(sshd.config)}
    r = subprocess.run(
        [sys.executable, "-m", "explorer", "bench", "_crash_test", "--sizes", "1", "--device", "cuda:0",
         "--repeats", "1", "--json", "--host", ALIAS, "--remote-python", agent_python(),
         "--via", f"env {gpushare.LOCK_DIR_ENV}={tmp_path}"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    timer.join()
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == "waiting: another run is using this GPU (0s)"
    (point,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert point["host"] == ALIAS and point["device"] == "cuda:0"
