"""A Slurm job the app submitted, as Slurm itself reports it: its state and reason, in words.

The launcher guard on the login node (``explorer.remote.jobguard``) reads the job's state and
reason with ``squeue`` while the job waits, and its end with ``scontrol`` when ``srun`` returns,
and sends each change to the client as an event (``JobState.to_event``). The client shows the
words (``JobState.message``) as they change, gives up at once on a reason Slurm never clears by
itself (``never_runs``: the job asks for more than its partition, QOS or account allows), and
names an end that was not the agent's own (``ended_words``: the time limit, a cancel, a node
failure), never starting the job again for the points left.

Qt-free and stdlib-only: it runs on the login node too. Reasons and states are Slurm's own
(``squeue --help``, "JOB REASON CODES" and "JOB STATE CODES" in squeue(1), Slurm 20-23).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Reasons a pending job keeps until someone changes the job or the cluster's limits: waiting for
#: them is pointless, so the app says so at once (and the job is cancelled).
NEVER_CLEARS: dict[str, str] = {
    "PartitionTimeLimit": "its --time is above the partition's time limit",
    "PartitionNodeLimit": "it asks for more nodes than the partition allows",
    "InvalidQOS": "the QOS it names does not exist, or your account may not use it",
    "InvalidAccount": "the account it names does not exist, or you may not use it",
    "BadConstraints": "no node has the features it asks for (--constraint)",
    "DependencyNeverSatisfied": "the job it depends on failed",
    "AssocMaxWallDurationPerJobLimit": "its --time is above your account's time limit per job",
    "QOSMaxWallDurationPerJobLimit": "its --time is above its QOS's time limit per job",
}
#: per-job limits of a QOS or an account (``QOSMaxGRESPerJob``, ``AssocMaxNodesPerJob``...): the
#: job itself is over them, so they never clear; per-user and group limits clear as jobs finish
_PER_JOB_LIMIT = re.compile(r"^(QOS|Assoc)(Max|Min)\w*PerJob\w*$|^QOSMin\w+$")

#: What a pending job's common reasons mean, in words for a student.
REASON_WORDS: dict[str, str] = {
    "Resources": "waiting for a node with what it asks for to become free",
    "Priority": "jobs of higher priority go first",
    "None": "the scheduler has not looked at it yet",
    "ReqNodeNotAvail": "a node it needs is down, drained or reserved",
    "PartitionDown": "the partition is down",
    "PartitionInactive": "the partition is not running jobs",
    "JobHeldUser": "it is held (scontrol release lets it run)",
    "JobHeldAdmin": "an administrator holds it",
    "BeginTime": "it may not start before its --begin time",
    "Dependency": "it waits for another job to finish",
    "QOSMaxJobsPerUserLimit": "you already run as many jobs as your QOS allows",
    "AssocMaxJobsLimit": "your account already runs as many jobs as it may",
    "QOSGrpGRES": "your group uses all the GPUs its QOS allows",
    "Reservation": "it waits for its reservation to start",
    "Licenses": "waiting for a license",
    "NodeDown": "a node it needs is down",
}

#: How a job that did not end by itself ended (its final state), in words.
ENDED_WORDS: dict[str, str] = {
    "TIMEOUT": "reached its time limit",
    "CANCELLED": "was cancelled (scancel, or an administrator)",
    "PREEMPTED": "was preempted by a job of higher priority",
    "NODE_FAIL": "ended because its node failed",
    "BOOT_FAIL": "ended because its node failed to boot",
    "OUT_OF_MEMORY": "ran out of memory (its --mem)",
    "DEADLINE": "reached its --deadline",
    "FAILED": "failed",
}
#: states in which a job is still waiting or running
ACTIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "RESIZING", "REQUEUED"})

_WORD = re.compile(r"[A-Za-z0-9_:.,()/+-]{0,200}")


@dataclass(frozen=True)
class JobState:
    """One reading of a job: its id, Slurm's state (``PENDING``, ``RUNNING``, ``TIMEOUT``...) and
    reason (``Resources``, ``PartitionTimeLimit``...), its time limit and partition as Slurm prints
    them, and ``final`` once the job has ended."""

    job: str
    state: str
    reason: str = ""
    time_limit: str = ""
    partition: str = ""
    final: bool = False

    @property
    def never_runs(self) -> bool:
        """The job waits for a reason Slurm never clears by itself."""
        return self.state == "PENDING" and (
            self.reason in NEVER_CLEARS or bool(_PER_JOB_LIMIT.match(self.reason))
        )

    @property
    def ended_badly(self) -> bool:
        """The job ended, and not because its agent finished (its time limit, a cancel...)."""
        return self.final and self.state in ENDED_WORDS

    @property
    def message(self) -> str:
        """The state in words, e.g. "Slurm job 12 is PENDING (Resources: waiting for a node with what
        it asks for to become free)"."""
        head = f"Slurm job {self.job}" + (f" in partition {self.partition}" if self.partition else "")
        if self.ended_badly:
            return self.ended_words("") + self.ended_hint
        reason = self.reason if self.reason and self.reason != "None" or self.state == "PENDING" else ""
        if reason:
            meaning = NEVER_CLEARS.get(reason) or REASON_WORDS.get(reason)
            if meaning is None and self.never_runs:
                meaning = "it asks for more than a limit of its QOS or account allows"
            reason = f" ({reason}: {meaning})" if meaning else f" ({reason})"
        return f"{head} is {self.state}{reason}"

    @property
    def short(self) -> str:
        """The state in a few words, for a progress bar: "Slurm job 12: PENDING (Resources)"."""
        reason = f" ({self.reason})" if self.reason and self.reason != "None" else ""
        return f"Slurm job {self.job}: {self.state}{reason}"

    def never_runs_words(self, host: str) -> str:
        """Why the app gave up on this pending job at once."""
        why = NEVER_CLEARS.get(self.reason) or "it asks for more than a limit of its QOS or account allows"
        limit = f"; the job asked for --time={self.time_limit}" if "time" in why and self.time_limit else ""
        return (
            f"Slurm will never start job {self.job} on {host}: {self.reason} ({why}{limit}); "
            "the job was cancelled; change the launcher's options"
        )

    def ended_words(self, host: str) -> str:
        """How the job ended ("Slurm job 12 on gpu-lab reached its time limit of 00:01:00")."""
        what = ENDED_WORDS.get(self.state, f"ended ({self.state})")
        limit = f" of {self.time_limit}" if self.state == "TIMEOUT" and self.time_limit else ""
        where = f" on {host}" if host else ""
        return f"Slurm job {self.job}{where} {what}{limit}"

    @property
    def ended_hint(self) -> str:
        """What lets the rest run, after ``ended_words`` ("" when nothing the student sets would)."""
        return "; a longer --time in the launcher lets the rest run" if self.state == "TIMEOUT" else ""

    def to_event(self) -> dict[str, Any]:
        return {
            "launcher": {
                "job": self.job,
                "state": self.state,
                "reason": self.reason,
                "time_limit": self.time_limit,
                "partition": self.partition,
                "final": self.final,
            }
        }

    @classmethod
    def from_event(cls, data: Mapping[str, Any]) -> JobState | None:
        """The state a guard's event reports; None when the event is not one (or not valid)."""
        body = data.get("launcher")
        if not isinstance(body, dict):
            return None
        values: dict[str, str] = {}
        for name in ("job", "state", "reason", "time_limit", "partition"):
            value = body.get(name, "")
            if not isinstance(value, str) or not _WORD.fullmatch(value):
                return None
            values[name] = value
        if not values["job"].isdigit() or not values["state"].replace("_", "").isalpha():
            return None
        return cls(**values, final=body.get("final") is True)


def parse_squeue(line: str) -> JobState | None:
    """One line of ``squeue -h -o '%i|%T|%r|%l|%P'``; None when it is not one."""
    parts = line.strip().split("|")
    if len(parts) != 5 or not parts[0].isdigit():
        return None
    job, state, reason, limit, partition = (p.strip() for p in parts)
    return JobState(job, state, reason, limit, partition)


def parse_scontrol(text: str) -> JobState | None:
    """``scontrol show job -o ID``'s one line; None when it names no job."""
    fields = dict(re.findall(r"(\w+)=(\S*)", text))
    job, state = fields.get("JobId", ""), fields.get("JobState", "")
    if not job.isdigit() or not state:
        return None
    return JobState(
        job,
        state,
        fields.get("Reason", ""),
        fields.get("TimeLimit", ""),
        fields.get("Partition", ""),
        final=state not in ACTIVE,
    )
