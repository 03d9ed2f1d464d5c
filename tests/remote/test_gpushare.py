"""A GPU shared by several runs: they take turns in a per-GPU line kept on that machine (the other
runs are real processes, driven by their own lines), and a point measured while another process
used the GPU (NVML's list, faked here) is marked disturbed. Between two real users:
test_gpu_queue_users.py; the decision itself: tests/agent/test_gpuqueue.py."""

from __future__ import annotations

import os
import re

import pytest

from explorer.bench import execute
from explorer.bench.execute import PointSpec, run_point
from explorer.bench.results import BenchPoint
from explorer.bench.runner import BenchPlan, BenchRun
from explorer.bench.workloads import get_workload
from explorer.gpuqueue import share as gpushare
from tests.devices.fake_nvml import FakeGpu, FakeProcess, make_fake_nvml
from tests.remote.queueing import QueueRun, shared_folder, user_name


@pytest.fixture
def fake_nvml(monkeypatch):
    fake = make_fake_nvml()
    monkeypatch.setattr("explorer.devices.nvml.import_nvml", lambda: fake)
    monkeypatch.setattr(execute, "_nvml_index_of", {})
    return fake


def _holder(folder, key: str, workload: str = "train") -> QueueRun:
    """Another run that holds GPU ``key``'s turn (a process of its own, measuring)."""
    run = QueueRun(folder, key, workload)
    run.ask("take", "held")
    run.ask("busy", "busy")
    return run


@pytest.mark.slow
def test_a_second_run_waits_for_the_gpu_and_is_told_who_holds_it(tmp_path):
    holder = _holder(tmp_path, "gpu-x")
    waits: list[gpushare.QueueWait] = []

    def on_wait(wait: gpushare.QueueWait) -> None:
        waits.append(wait)
        if len(waits) == 3:  # the third look: the other run is done and leaves the line
            holder.ask("idle", "idle")
            holder.ask("leave", "left")

    try:
        waited = gpushare.hold_gpu_lock("gpu-x", on_wait, directory=tmp_path, poll_s=0.05, workload="matmul")
        assert waited > 0 and len(waits) >= 3
        me = user_name()
        assert waits[0].holder == me and waits[0].ahead == 1 and not waits[0].stalled
        assert re.fullmatch(
            rf"waiting for cuda:0: {me} holds it \(train\)|waiting for cuda:0: {me} has held it since "
            r"\d\d:\d\d:\d\d \(train, \d+ s\); your own earlier run on this GPU goes first \(waited \d+ s\)",
            waits[0].message,
        ), waits[0].message
        # held now: asking again before the next point answers at once
        assert gpushare.hold_gpu_lock("gpu-x", on_wait, directory=tmp_path) == 0.0
        third = QueueRun(tmp_path, "gpu-x", "copy")
        third.send("take")
        assert third.expect("wait")["holder"] == me  # this process holds it for the third run
        third.close()
    finally:
        gpushare.release_gpu_locks()
        holder.close()
    assert not [n for n in os.listdir(tmp_path) if f".{os.getpid()}." in n]  # this run's place given back


@pytest.mark.slow
def test_a_place_in_the_line_is_private_and_a_crashed_run_leaves_no_turn_behind(tmp_path):
    crashed = _holder(tmp_path, "gpu-y")
    tickets = [tmp_path / n for n in os.listdir(tmp_path) if n.endswith(".ticket")]
    assert len(tickets) == 1 and tickets[0].stat().st_mode & 0o777 == 0o644  # never 0666
    crashed.close()  # SIGKILL: its files stay (nobody else may delete them), its lock does not
    try:
        assert gpushare.hold_gpu_lock("gpu-y", lambda w: pytest.fail(w.message), directory=tmp_path) < 1
        # the same user's next run swept the dead place away
        assert not tickets[0].exists()
    finally:
        gpushare.release_gpu_locks()


@pytest.mark.slow
def test_a_client_that_stops_asking_loses_its_turn_after_the_stall_bound(tmp_path):
    """A run that holds the GPU but measures nothing (its client suspended with Ctrl-Z, a laptop
    frozen between two points, or someone just holding the turn) hands it over after ``stall_s``."""
    policy = {"stall_s": 2, "turn_s": 600}
    with shared_folder(policy) as folder:
        idle = QueueRun(folder, "gpu-z", "matmul")
        idle.ask("take", "held")  # holds, then asks for nothing more
        waits: list[gpushare.QueueWait] = []
        try:
            waited = gpushare.hold_gpu_lock("gpu-z", waits.append, directory=folder, poll_s=0.1)
            assert any(w.stalled for w in waits) and waited < 120  # the 2 s stall bound, not the 600 s turn
            # the idle run, asking again, finds its turn gone and waits behind this one
            idle.send("take")
            assert idle.expect("wait")["ahead"] == 1
        finally:
            gpushare.release_gpu_locks()
            idle.close()


@pytest.mark.slow
def test_a_turn_ends_after_the_admins_turn_limit_when_others_wait(tmp_path):
    """A run that keeps measuring (or fakes its heartbeat) hands the GPU over after ``turn_s`` +
    ``grace_s`` as the waiting run saw it begin; asking again, it goes to the back of the line."""
    with shared_folder({"stall_s": 30, "turn_s": 10, "grace_s": 0}) as folder:
        hog = _holder(folder, "gpu-t", "hog")
        try:
            waited = gpushare.hold_gpu_lock("gpu-t", lambda w: None, directory=folder, poll_s=0.2)
            assert 10 <= waited < 10 + 15
            hog.ask("idle", "idle")
            hog.send("take")
            assert hog.expect("wait")["ahead"] == 1
        finally:
            gpushare.release_gpu_locks()
            hog.close()


@pytest.mark.slow
def test_a_benchmark_run_queues_for_a_gpu_another_run_holds(tmp_path, monkeypatch):
    """Through the agent protocol: the worker waits for its turn; the run is told who holds it."""
    monkeypatch.setenv(gpushare.LOCK_DIR_ENV, str(tmp_path))
    key, _ = gpushare.gpu_identity("cuda:0")  # this machine's own answer (no NVML: cuda-0)
    holder = _holder(tmp_path, key, "train")
    run = BenchRun(BenchPlan(workload="_crash_test", devices=["cuda:0"], sizes=[1, 3], repeats=1))
    waits: list = []

    def on_waiting(wait) -> None:
        waits.append(wait)
        if len(waits) == 2:
            holder.ask("idle", "idle")
            holder.ask("leave", "left")

    run.on_waiting = on_waiting
    try:
        points = [e for e in run.events() if isinstance(e, BenchPoint)]
    finally:
        holder.close()
    assert [p.ok for p in points] == [True, True]
    assert len(waits) >= 2 and all(isinstance(w, gpushare.QueueWait) for w in waits)
    assert waits[0].holder == user_name() and "(train" in waits[0].message


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
    p, _ = run_point(
        PointSpec(0, "_crash_test", "cuda:0", "cuda:0", "plain", 1, repeats=3, budget_s=0.1),
        get_workload("_crash_test"),
    )
    assert p.error is None and p.noisy
    assert "other processes used this GPU while it was measured: train.py (pid 5151)" in p.noise_reason


def test_a_quiet_gpu_leaves_the_point_unmarked_by_it(monkeypatch):
    fake = make_fake_nvml([FakeGpu(processes=[])])
    monkeypatch.setattr("explorer.devices.nvml.import_nvml", lambda: fake)
    monkeypatch.setattr(execute, "_nvml_index_of", {})
    p, _ = run_point(
        PointSpec(0, "_crash_test", "cuda:0", "cuda:0", "plain", 1, repeats=3, budget_s=0.1),
        get_workload("_crash_test"),
    )
    assert p.error is None and "this GPU" not in p.noise_reason


def test_the_cli_says_it_waits_for_a_gpu_on_the_remote(sshd, tmp_path):
    """``bench --host``: the turn is taken on the remote; the wait is said on stderr, naming who
    holds the GPU, the points on stdout. The holder leaves when the CLI has said it waits (its own
    line), never on a timer."""
    import json
    import subprocess
    import sys

    from tests.remote.servers import ALIAS, agent_python

    holder = _holder(tmp_path, "cuda-0", "train")  # the remote is this machine, without NVML: cuda-0
    env = {**os.environ, "DEVICE_EXPLORER_SSH_CONFIG": str(sshd.config)}
    cli = subprocess.Popen(
        [sys.executable, "-m", "explorer", "bench", "_crash_test", "--sizes", "1", "--device", "cuda:0",
         "--repeats", "1", "--json", "--host", ALIAS, "--remote-python", agent_python(),
         "--via", f"env {gpushare.LOCK_DIR_ENV}={tmp_path}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        first = cli.stderr.readline()
        holder.ask("idle", "idle")
        holder.ask("leave", "left")
        out, rest = cli.communicate(timeout=120)
    finally:
        cli.kill()
        holder.close()
    assert cli.returncode == 0, first + rest
    assert first.startswith(f"waiting for cuda:0: {user_name()} ") and "(train" in first, first
    (point,) = [json.loads(line) for line in out.splitlines()]
    assert point["host"] == ALIAS and point["device"] == "cuda:0"
