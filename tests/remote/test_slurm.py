"""A real single-node Slurm (munged, slurmctld, slurmd on this machine) reached over the real
sshd: the agent runs inside a Slurm job through the launcher prefix, as on a cluster's login node."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

from explorer.bench.results import BenchPoint
from explorer.bench.runner import BenchPlan, BenchRun
from explorer.remote import parse_remote
from tests.remote.servers import ALIAS, agent_python


def _via(slurm, *srun_args: str) -> str:
    # sshd gives the remote command a clean environment: the test cluster's conf is passed the
    # way a user would pass any setting to a launcher, as part of the prefix
    return " ".join(["env", f"SLURM_CONF={slurm.conf}", "srun", *srun_args])


def test_a_benchmark_runs_inside_a_slurm_job(sshd, slurm):
    via = _via(slurm, "-N1", "-n1", "--time=2")
    env = {**os.environ, "DEVICE_EXPLORER_SSH_CONFIG": str(sshd.config)}
    r = subprocess.run(
        [sys.executable, "-m", "explorer", "bench", "matmul", "--sizes", "32", "--repeats", "3",
         "--json", "--host", ALIAS, "--via", via, "--remote-python", agent_python()],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    points = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(points) == 1 and points[0]["host"] == ALIAS and points[0]["error"] is None
    assert points[0]["median_s"] > 0
    # it ran as a job: the controller knows a job whose command was the agent's Python, and
    # it ran (finished, or just finishing as the agent exits)
    # (slurmctld learns the step ended a moment after srun exits: the state is read until it has)
    deadline = time.monotonic() + 20
    while True:
        done = subprocess.run(
            ["scontrol", "show", "job"], env=slurm.env, capture_output=True, text=True
        ).stdout
        if re.search(r"JobState=(COMPLETED|COMPLETING)", done) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert f"Command={agent_python()}" in done, done
    assert re.search(r"JobState=(COMPLETED|COMPLETING)", done), done


def test_the_agent_sees_the_slurm_job_it_runs_in(sshd, slurm):
    """The agent's environment is the job's: SLURM_JOB_ID is set there (what a cluster's GPU
    allocation, CUDA_VISIBLE_DEVICES, hangs on)."""
    from explorer.remote import open_agent

    remote = parse_remote(
        ALIAS, _via(slurm, "-N1", "-n1", "--time=2"), agent_python(), ssh_config=sshd.config
    )
    agent = open_agent(remote)
    try:
        answer = agent.request("ping", {}, timeout_s=30)
    finally:
        agent.close()
    assert str(answer.get("slurm_job")).isdigit(), answer


def test_slurm_refusing_the_job_is_one_line_per_point(sshd, slurm):
    remote = parse_remote(
        ALIAS, _via(slurm, "-N1", "-n1", "--partition=nosuch"), agent_python(), ssh_config=sshd.config
    )
    run = BenchRun(BenchPlan(workload="matmul", devices=["cpu"], sizes=[32, 48], repeats=1, remote=remote))
    points = [e for e in run.events() if isinstance(e, BenchPoint)]
    assert [p.size for p in points] == [32, 48]
    first = points[0].error or ""
    assert first.startswith("Slurm refused the job") and "partition" in first.lower(), first
    assert "launcher srun" in first and "\n" not in first and "Traceback" not in first
    # the second point is not sent to Slurm again (it would be refused the same way) but says why
    assert points[1].error and "not measured" in points[1].error
    assert run.workers_started == 1


def test_a_job_left_waiting_in_the_queue_is_said_in_one_line(sshd, slurm):
    """The node is taken by another job: srun waits for resources, and the run says so when it
    gives up, instead of "no answer"."""

    import pytest

    from explorer.remote import RemoteTimeout
    from explorer.remote.session import RemoteAgentProcess

    blocker = subprocess.Popen(
        ["srun", "-N1", "-n1", "--exclusive", "--time=2", "sleep", "120"],
        env=slurm.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while (
            "R"
            not in subprocess.run(
                ["squeue", "-h", "-o", "%t"], env=slurm.env, capture_output=True, text=True
            ).stdout.split()
        ):
            assert time.monotonic() < deadline, "the blocking job never started"
            time.sleep(0.2)
        remote = parse_remote(
            ALIAS,
            _via(slurm, "-N1", "-n1", "--exclusive", "--time=2"),
            agent_python(),
            ssh_config=sshd.config,
        )
        agent = RemoteAgentProcess(remote)
        try:
            with pytest.raises(RemoteTimeout) as info:
                agent.start(hello_timeout_s=6)
        finally:
            agent.close(grace_s=0)
        words = str(info.value)
        assert re.fullmatch(r"Slurm job \d+ is queued and waiting for resources; gave up after 6 s", words), (
            words
        )
    finally:
        # neither the blocker nor the queued job outlives the test
        subprocess.run(["scancel", "--user", os.environ.get("USER", "root")], env=slurm.env, timeout=30)
        subprocess.run(["scancel", "--state=PENDING"], env=slurm.env, timeout=30)
        blocker.kill()
        blocker.wait(timeout=30)
