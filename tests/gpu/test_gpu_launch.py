"""The launch visualizer's real run on the GPU, the remote paths through a loopback sshd, the
lessons' GPU recording and the acceptance script itself."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]


def test_the_real_run_writes_every_element_once_and_records_the_sm_of_each_block(gpu):
    from explorer.launch_runs.realrun import run_here

    blocks = 4 * gpu.sm_count
    result = run_here((blocks, 1, 1), (256, 1, 1), blocks * 256 - 3)
    assert result.backend == "gpu" and result.mismatches(256) == 0
    assert result.untouched == 0 and result.written_twice == 0 and result.sum_correct
    assert result.sm_of_block is not None, result.sm_note
    assert result.sm_of_block.shape == (blocks,) and result.sm_of_block.dtype == np.int32
    assert 0 <= int(result.sm_of_block.min()) and int(result.sm_of_block.max()) < gpu.sm_count
    assert result.sms_used() > gpu.sm_count // 2  # blocks are spread over the SMs, not piled on one
    assert "(read from %smid)" in result.summary()


def test_a_2d_image_launch_in_the_agent_child_matches_the_visualizer(gpu):
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch_runs.realrun import run_real

    config = LaunchConfig(Dim3(8, 4), Dim3(16, 16), extent=Dim3(120, 60))
    result = run_real(config, device_index=gpu.index, timeout_s=180)
    assert result.backend == "gpu" and result.device_name == gpu.name
    assert result.mismatches(256) == 0 and result.untouched == 0 and result.written_twice == 0
    assert result.sm_of_block is not None and result.sm_of_block.size == 32


@pytest.fixture(scope="module")
def loopback(tmp_path_factory):
    from tests.remote.servers import ALIAS, LoopbackSshd, agent_python

    missing = LoopbackSshd.missing()
    if missing:
        pytest.skip(missing)
    from explorer.remote import parse_remote

    home = tmp_path_factory.mktemp("home")
    with LoopbackSshd(tmp_path_factory.mktemp("sshd")) as sshd:
        yield parse_remote(
            ALIAS,
            f"env PYTHONPATH={REPO} DEVICE_EXPLORER_HOME={home}",
            agent_python(),
            ssh_config=sshd.config,
        )


def test_the_gpu_over_ssh_lists_measures_and_runs_as_here(gpu, loopback):
    from explorer.bench.runner import BenchPlan, BenchRun
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch_runs.realrun import run_real
    from explorer.remote import list_devices

    there = next(d for d in list_devices(loopback).discovery.devices if d.key == gpu.key)
    assert there.uuid == gpu.uuid
    (p,) = BenchRun(
        BenchPlan("matmul", [gpu.key], sizes=[1024], time_budget_s=0.3, remote=loopback)
    ).run_all()
    assert p.error is None and p.host == loopback.host
    config = LaunchConfig(Dim3(4), Dim3(64), n=250)
    run = run_real(config, remote=loopback, device_index=gpu.index, timeout_s=180)
    assert run.backend == "gpu" and run.mismatches(64) == 0 and run.sm_of_block is not None


def test_a_lesson_step_is_recorded_from_this_gpu(gpu, tmp_path):
    from explorer.acceptance.checks_lessons import device_words, measure_target
    from explorer.lessons.builtin import builtin_paths
    from explorer.lessons.files import load_lesson
    from explorer.lessons.recording import make_recorded, recording_targets, write_recording

    for path in builtin_paths():
        shutil.copy(path, tmp_path / path.name)
    target = next(
        t for t in recording_targets(sorted(tmp_path.glob("*.json"))) if t.lesson == "04-timing-trap"
    )
    small = dataclasses.replace(target, sizes=(256,))
    points = measure_target(small, 0.2)
    write_recording(small, make_recorded(points, device_words(points), "2026-01-01", "test"))
    recorded = load_lesson(small.path).steps[small.step].state.recorded
    assert recorded is not None and gpu.name in recorded.device
    assert all(p.error is None for p in recorded.points)


def test_the_acceptance_script_runs_and_reports_on_this_gpu(gpu, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "benchmarks/gpu_acceptance.py",
            "--out",
            str(tmp_path / "acc"),
            "--only",
            "environment,devices",
            "--budget",
            "120",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads((tmp_path / "acc" / "gpu-acceptance.json").read_text())
    by = {c["name"]: c for c in report["checks"]}
    assert by["environment"]["status"] == "pass", by["environment"]["summary"]
    assert by["devices"]["status"] in ("pass", "miss"), by["devices"]["summary"]
    assert gpu.name in proc.stdout and proc.returncode == 0
