"""The agent on a remote machine: the same ``AgentProcess`` around ``ssh DEST [PREFIX] PYTHON -m explorer agent``.

Only the argv and the words of the errors differ from a local agent: ``RemoteAgentProcess``
turns what ssh, the remote shell and srun wrote on stderr into one line
(``explorer.remote.faults.explain``) whenever the child ends, and waits longer for the hello
(connect + login + Python; with a launcher, the job's time in the queue).

Timeouts (all seconds, see ``explorer.remote.target``): connect ``CONNECT_TIMEOUT_S`` (ssh's
ConnectTimeout), first answer ``Remote.hello_timeout_s`` (60, or 300 with a launcher that may
queue), keep-alive ``SERVER_ALIVE_INTERVAL_S`` x ``SERVER_ALIVE_COUNT_MAX`` (a dead link is
noticed within ~15 s), per request the caller's ``timeout_s`` (a benchmark point: its budget plus
a margin, ``explorer.bench.runner.point_deadline_s``; a device listing ``LIST_TIMEOUT_S``). The
other way, it beats every ``BEAT_EVERY_S`` (``explorer.agent.child``): the agent there and its
launcher guard end (and cancel the job) after the admin's ``heartbeat_s`` without one.

The hello is checked beyond the version: the build (``explorer.agent.build``), and, with a
launcher, that the guard announced itself before the agent (an account's ForceCommand runs the
agent on the login node instead): each mismatch is one line (``AgentMismatch``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from explorer import __version__
from explorer.agent.build import build_id
from explorer.agent.child import BEAT_EVERY_S, AgentGone, AgentMismatch, AgentProcess, AgentTimeout
from explorer.agent.protocol import PACKAGE, PROTOCOL_VERSION, AgentError, Hello
from explorer.devices.discovery import Discovery
from explorer.devices.live import LiveReading
from explorer.remote.faults import (
    explain,
    install_hint,
    launcher_ignored,
    slurm_queued,
    version_mismatch,
)
from explorer.remote.records import discovery_from_dict, live_from_dict
from explorer.remote.slurm import JobState
from explorer.remote.target import Remote

#: Discovering a machine's devices starts Python there and asks NVML and the CUDA driver (a hung
#: driver costs its own deadline): seconds on a busy server, and an ssh login before them.
LIST_TIMEOUT_S = 90.0
LIVE_TIMEOUT_S = 10.0


class RemoteGone(AgentGone):
    """The remote agent (or its ssh) ended; ``str()`` and ``how`` are the same one line of words.

    ``reachable``: the remote was reached all the same (the agent had said hello, or the local
    ssh client was killed by a signal, not refused by ssh): connecting again may well work, so a
    run tries again at its next point instead of giving the remote up."""

    def __init__(self, message: str, how: str, *, reachable: bool = False) -> None:
        super().__init__(message, how)
        self.reachable = reachable


class RemoteTimeout(AgentTimeout):
    """The remote agent did not say hello or answer in time (a Slurm job still queued says so)."""


class JobEnded(RemoteGone):
    """The Slurm job the agent runs in ended by Slurm's doing (its time limit, a cancel, a failed
    node), or can never start (a reason Slurm never clears): starting it again would end the same
    way, so a run stops asking and names why. ``job`` is the job's last state."""

    def __init__(self, message: str, job: JobState) -> None:
        super().__init__(message, message)
        self.job = job


class RemoteAgentProcess(AgentProcess):
    """An agent on ``remote``, reached with the system's ssh. Start it with ``start()`` (or use
    ``open_agent``); requests, cancel and close are ``AgentProcess``'s.

    With a launcher the agent runs behind the launcher guard (``explorer.remote.jobguard``) in a
    job named ``job_name``: ``job`` is its last state as Slurm reported it, ``on_job`` is told of
    each change (on the thread waiting for the hello or an answer), and a job Slurm will never
    start stops the agent at once (``JobEnded``)."""

    def __init__(
        self,
        remote: Remote,
        *,
        label: str | None = None,
        on_job: Callable[[JobState], None] | None = None,
    ) -> None:
        self.remote = remote
        self.job_name = f"device-explorer-{secrets.token_hex(5)}" if remote.prefix else None
        super().__init__(
            remote.ssh_argv(self.job_name),
            label=label or f"the agent on {remote.host}",
            install_hint=install_hint(remote, __version__),
        )
        self.job: JobState | None = None
        self.on_job = on_job
        self.on_unsolicited = self._launcher_said
        #: the launcher guard announced itself (with a launcher, before the agent's hello)
        self.guard_seen = False
        # the agent there (and its guard) end when these stop: a frozen laptop lets go of its job
        self.beat_every_s = BEAT_EVERY_S

    def _launcher_said(self, data: dict[str, Any]) -> None:
        guard = data.get("guard")
        if isinstance(guard, dict) and guard.get("job_name") == self.job_name:
            self.guard_seen = True
            return
        state = JobState.from_event(data)
        if state is None:
            return
        self.job = state
        if self.on_job is not None:
            self.on_job(state)
        if state.never_runs:
            raise JobEnded(state.never_runs_words(self.remote.host), state)

    def _check_hello(self, hello: Hello) -> None:
        if hello.package == PACKAGE:
            ours = build_id()
            other_build = bool(ours and hello.build and hello.build != ours)
            if hello.protocol != PROTOCOL_VERSION or hello.version != __version__ or other_build:
                theirs = hello.build if hello.protocol == PROTOCOL_VERSION else ""
                self._fail(AgentMismatch(version_mismatch(self.remote, hello.version, theirs)))
        super()._check_hello(hello)
        if self.remote.prefix and not self.guard_seen:
            # the account ran something other than the guard and the launcher it was asked for
            self._fail(AgentMismatch(launcher_ignored(self.remote, hello.started)))

    def start(self, hello_timeout_s: float | None = None) -> Hello:
        """ssh there, start the agent and check its hello; AgentError (one line in words) otherwise."""
        timeout = self.remote.hello_timeout_s if hello_timeout_s is None else hello_timeout_s
        try:
            return super().start(timeout)
        except RemoteGone:
            raise
        except AgentTimeout:
            job = self.job
            if job is not None and not job.final:
                raise RemoteTimeout(
                    f"{job.message}; gave up after {timeout:g} s and cancelled the job"
                ) from None
            queued = slurm_queued(self.stderr_text())
            if queued:
                raise RemoteTimeout(f"{queued}; gave up after {timeout:g} s") from None
            raise RemoteTimeout(
                f"{self.remote.host} did not start the agent within {timeout:g} s "
                f"({self.remote.remote_command_line()})"
            ) from None

    def _gone(self, when: str, noise: Sequence[str] = ()) -> AgentGone:
        gone = super()._gone(when, noise)
        if self.cancelled:
            return gone
        job = self.job
        if job is not None and job.ended_badly:
            return JobEnded(job.ended_words(self.remote.host) + job.ended_hint, job)
        code = self._peek_exit()
        # ssh's last words arrive on stderr as it exits: let the reader take them in first
        for thread in self._threads:
            if thread.name == "agent-stderr":
                thread.join(1.0)
        stderr = self.stderr_text()
        if not stderr.strip() and noise:
            stderr = "\n".join(noise)
        words = explain(self.remote, stderr, code, starting=self.hello is None)
        reachable = self.hello is not None or (code is not None and code < 0)
        return RemoteGone(words, words, reachable=reachable)


def open_agent(remote: Remote, *, label: str | None = None) -> RemoteAgentProcess:
    """A started agent on ``remote`` (hello checked: same protocol and package version).

    Raises ``AgentError`` with one line: ``RemoteGone`` (ssh failed or the agent ended: host
    unreachable, wrong key, host key unknown or changed, package missing, Slurm refused),
    ``RemoteTimeout`` (no hello in time; a queued Slurm job says so), ``AgentMismatch`` (another
    version there: the line says what to install). Close it with ``close()`` (or ``with``).
    """
    agent = RemoteAgentProcess(remote, label=label)
    try:
        agent.start()
    except BaseException:
        agent.close(grace_s=0)
        raise
    return agent


@dataclass
class RemoteDevices:
    """A remote machine's devices, as the Devices panel and ``devices --host`` show them.

    ``discovery`` holds the same records a local probe makes (rebuilt and checked); ``hostname``
    is what the machine calls itself; ``why_no_gpu`` the remote's own words when it has none;
    ``seconds`` how long the listing took, ssh included.
    """

    remote: Remote
    discovery: Discovery
    hostname: str
    why_no_gpu: str | None
    seconds: float

    def to_dict(self, discovery: Discovery | None = None) -> dict[str, Any]:
        """The JSON of ``devices --json --host`` and of the Devices panel's export: the listing
        (``discovery``, default this one's) with every device marked with its ``host``, and
        where it is and how it is reached."""
        return remote_to_dict(self.remote, discovery or self.discovery, self.hostname, self.why_no_gpu)


def remote_to_dict(
    remote: Remote,
    discovery: Discovery | None,
    hostname: str | None = None,
    why_no_gpu: str | None = None,
    *,
    error: str = "",
) -> dict[str, Any]:
    """A remote machine as JSON: its devices (each with ``host``) when it answered, or ``error``
    (one line: why it cannot be reached) and no devices when it did not."""
    data: dict[str, Any] = discovery.to_dict() if discovery is not None else {"devices": []}
    for device in data["devices"]:
        device["host"] = remote.host
    data.update(
        host=remote.host,
        destination=remote.destination,
        via=list(remote.prefix),
        python=remote.python,
        hostname=hostname,
        why_no_gpu=why_no_gpu,
        reachable=discovery is not None,
        error=error or None,
    )
    return data


def list_devices(
    remote: Remote, *, catalog: bool = False, agent: AgentProcess | None = None
) -> RemoteDevices:
    """Ask ``remote`` for its devices (a fresh agent, or ``agent`` if one is open). AgentError on failure."""
    started = time.monotonic()
    own = agent is None
    worker = open_agent(remote) if agent is None else agent
    try:
        answer = worker.request("devices.list", {"catalog": catalog}, timeout_s=LIST_TIMEOUT_S)
    finally:
        if own:
            worker.close()
    discovery = discovery_from_dict(answer.get("discovery"))
    why = answer.get("why_no_gpu")
    hostname = answer.get("hostname")
    return RemoteDevices(
        remote=remote,
        discovery=discovery,
        hostname=hostname[:200] if isinstance(hostname, str) else remote.host,
        why_no_gpu=why[:2000] if isinstance(why, str) else None,
        seconds=time.monotonic() - started,
    )


def read_live(agent: AgentProcess, nvml_indices: Sequence[int]) -> list[LiveReading]:
    """One live sample of each remote GPU (by NVML index) from an open agent: cheap, poll it each
    second. An NVML that cannot be used there gives every GPU a failed reading with the reason."""
    answer = agent.request("devices.live", {"nvml_indices": list(nvml_indices)}, timeout_s=LIVE_TIMEOUT_S)
    error = answer.get("error")
    if isinstance(error, str):
        now = time.time()
        return [LiveReading.failed(now, error[:500]) for _ in nvml_indices]
    readings = answer.get("readings")
    if not isinstance(readings, list) or len(readings) != len(nvml_indices):
        raise AgentError(
            f"{agent.label} sent {len(readings) if isinstance(readings, list) else 'no'} readings"
        )
    return [live_from_dict(r) for r in readings]
