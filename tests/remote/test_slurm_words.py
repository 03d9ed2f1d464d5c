"""Slurm's states and reasons in words, and what the launcher guard reads from Slurm's tools and the
launcher's arguments (plain values; the guard against a real Slurm is test_slurm.py)."""

from __future__ import annotations

import pytest

from explorer.remote.jobguard import job_name_in, launcher_env
from explorer.remote.slurm import JobState, parse_scontrol, parse_squeue


@pytest.mark.parametrize(
    "reason, never",
    [
        ("Resources", False),
        ("Priority", False),
        ("JobHeldAdmin", False),
        ("QOSMaxJobsPerUserLimit", False),  # clears when the user's other jobs end
        ("QOSGrpGRES", False),
        ("PartitionTimeLimit", True),
        ("InvalidQOS", True),
        ("InvalidAccount", True),
        ("QOSMaxGRESPerJob", True),
        ("AssocMaxNodesPerJobLimit", True),
        ("QOSMaxWallDurationPerJobLimit", True),
        ("QOSMinGRES", True),
    ],
)
def test_only_reasons_slurm_never_clears_end_the_wait(reason, never):
    assert JobState("12", "PENDING", reason).never_runs is never
    assert not JobState("12", "RUNNING", reason).never_runs


def test_states_in_words():
    pending = JobState("41", "PENDING", "Resources", "10:00", "teach")
    assert pending.message == (
        "Slurm job 41 in partition teach is PENDING (Resources: waiting for a node with what it asks for "
        "to become free)"
    )
    assert pending.short == "Slurm job 41: PENDING (Resources)"
    assert JobState("41", "RUNNING", "None").message == "Slurm job 41 is RUNNING"
    too_long = JobState("7", "PENDING", "PartitionTimeLimit", "20:00", "teach")
    assert too_long.never_runs_words("gpu-lab") == (
        "Slurm will never start job 7 on gpu-lab: PartitionTimeLimit (its --time is above the partition's "
        "time limit; the job asked for --time=20:00); the job was cancelled; change the launcher's options"
    )
    ended = JobState("7", "TIMEOUT", "TimeLimit", "00:01:00", final=True)
    assert (
        ended.ended_badly
        and ended.ended_words("gpu-lab") == "Slurm job 7 on gpu-lab reached its time limit of 00:01:00"
    )
    assert not JobState("7", "COMPLETED", final=True).ended_badly  # the agent's own end is no news


def test_what_slurms_tools_print_is_read_and_nothing_else():
    assert parse_squeue("12|PENDING|Priority|10:00|teach") == JobState(
        "12", "PENDING", "Priority", "10:00", "teach"
    )
    assert parse_squeue("squeue: error: Invalid user") is None
    line = "JobId=12 JobName=device-explorer-ab UserId=alice(1000) JobState=TIMEOUT Reason=TimeLimit TimeLimit=00:01:00 Partition=teach"
    assert parse_scontrol(line) == JobState("12", "TIMEOUT", "TimeLimit", "00:01:00", "teach", final=True)
    assert parse_scontrol("slurm_load_jobs error: Invalid job id specified") is None


@pytest.mark.parametrize(
    "data",
    [
        {"launcher": {"job": "12; rm", "state": "PENDING"}},
        {"launcher": {"job": "12", "state": "PENDING\x1b[2J"}},
        {"launcher": {"job": "12", "state": "PENDING", "reason": "x" * 500}},
        {"launcher": {"job": 12, "state": "PENDING"}},
        {"launcher": "PENDING"},
        {"waiting_s": 3},
    ],
)
def test_an_event_that_is_not_a_job_state_is_ignored(data):
    assert JobState.from_event(data) is None


def test_the_launchers_own_job_name_and_environment_are_kept():
    assert job_name_in(["srun", "-J", "mine", "python"]) == "mine"
    assert job_name_in(["srun", "--job-name=mine"]) == "mine"
    assert job_name_in(["srun", "-Jmine"]) == "mine"
    assert job_name_in(["srun", "--gres=gpu:1"]) is None
    env, rest = launcher_env(["env", "SLURM_CONF=/etc/x.conf", "srun", "-N1"])
    assert env["SLURM_CONF"] == "/etc/x.conf" and rest == ["srun", "-N1"]
