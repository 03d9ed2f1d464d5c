"""The laptop's heartbeat, build identity, point deadlines and reconnecting, over the real sshd.

A laptop that freezes (its ssh client stopped with SIGSTOP, as a closed lid or a dead Wi-Fi leave
it: the TCP connection stays up and silent) no longer holds its remote agent: the agent hears no
beat for the admin's ``heartbeat_s`` (6 s here, through the policy file) and ends, giving its GPU
turn back. Every wait is on the process or the files themselves, with a generous outer bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from explorer.agent.build import build_id
from explorer.agent.child import AgentMismatch
from explorer.agent.protocol import PROTOCOL_VERSION
from explorer.bench.runner import BenchPlan, BenchRun
from explorer.gpuqueue.tickets import POLICY_FILE
from explorer.remote import RemoteGone, open_agent, parse_remote
from tests.processes import alive
from tests.remote.servers import ALIAS, LoopbackSshd, agent_python
from tests.remote.test_resume import _remote_agents, _sleeping_in_a_point

WITHIN_S = 120.0
HEARTBEAT_S = 6


def wait_for(ready, what: str, within_s: float = WITHIN_S):
    deadline = time.monotonic() + within_s
    while True:
        value = ready()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {within_s:g} s")
        time.sleep(0.05)


def python_with_policy(folder: Path, heartbeat_s: float = HEARTBEAT_S) -> str:
    """The remote Python with a GPU-queue folder whose admin policy sets ``heartbeat_s``."""
    queue = folder / "queue"
    queue.mkdir(mode=0o755, parents=True)
    (queue / POLICY_FILE).write_text(json.dumps({"heartbeat_s": heartbeat_s}))
    wrapper = folder / "python-with-policy"
    wrapper.write_text(f'#!/bin/sh\nDEVICE_EXPLORER_LOCK_DIR={queue} exec {agent_python()} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def _remote(sshd, python: str, via: str | None = None, config: Path | None = None):
    return parse_remote(ALIAS, via, python, ssh_config=config or sshd.config)


@pytest.mark.skipif(os.geteuid() != 0, reason="the policy file is read only when root owns it")
def test_a_frozen_laptop_lets_go_of_its_agent_and_its_gpu_turn(sshd, tmp_path):
    python = python_with_policy(tmp_path)
    queue = tmp_path / "queue"
    plan = BenchPlan(
        workload="_hang_test", devices=["cuda:0"], sizes=[2], repeats=1, remote=_remote(sshd, python)
    )
    run = BenchRun(plan)
    thread = threading.Thread(target=run.run_all, daemon=True)
    thread.start()
    ssh_pid = None
    try:
        agent = wait_for(
            lambda: next((a for a in _remote_agents(sshd) if _sleeping_in_a_point(a.pid)), None),
            "the remote agent to sit in the point that never returns",
        )
        assert list(queue.glob("device-explorer-gpu.*.ticket"))  # it holds cuda:0's turn
        ssh_pid = run.worker_pid
        assert ssh_pid is not None
        os.kill(ssh_pid, signal.SIGSTOP)  # the laptop freezes: nothing it sends arrives any more
        frozen = time.monotonic()
        wait_for(lambda: not alive(agent.pid), "the agent of a frozen laptop to end")
        took = time.monotonic() - frozen
        assert took >= HEARTBEAT_S - 2.5  # the bound, less the beats' own spacing
        wait_for(lambda: not list(queue.glob("device-explorer-gpu.*")), "its place in the GPU queue to go")
        print(f"freeze to agent gone: {took:.1f} s (heartbeat_s {HEARTBEAT_S})")
    finally:
        if ssh_pid is not None:
            os.kill(ssh_pid, signal.SIGCONT)
        run.cancel()
        thread.join(60)
    assert not thread.is_alive()


def test_a_client_killed_while_its_worker_starts_connects_again_at_the_next_point(sshd, tmp_path):
    """The first start sits in the remote login (a Python that waits once); the ssh client is
    killed there: that point says so, and the next one connects again and is measured."""
    flag = tmp_path / "first-start"
    slow = tmp_path / "python-slow-once"
    slow.write_text(
        f'#!/bin/sh\nif [ ! -e {flag} ]; then echo $$ > {flag}; exec sleep 600; fi\nexec {agent_python()} "$@"\n'
    )
    slow.chmod(0o755)
    plan = BenchPlan(
        workload="_crash_test", devices=["cpu"], sizes=[1, 3], repeats=1, remote=_remote(sshd, str(slow))
    )
    run = BenchRun(plan)
    killed: list[int] = []

    def kill_the_first_client() -> None:
        ssh = wait_for(lambda: flag.exists() and run.worker_pid, "the first start to reach the remote")
        os.kill(ssh, signal.SIGKILL)
        killed.append(ssh)

    killer = threading.Thread(target=kill_the_first_client, daemon=True)
    killer.start()
    try:
        points = run.run_all()
    finally:
        killer.join(5)
        waiting = flag.read_text().strip() if flag.exists() else ""
        if waiting.isdigit() and int(waiting) > 1:  # the remote login that waits outlives the client
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(waiting), signal.SIGKILL)
    assert killed
    assert [p.size for p in points] == [1, 3]
    assert points[0].error is not None
    assert points[0].error.startswith(f"the ssh client for {ALIAS} was killed (signal 9)"), points[0].error
    assert points[0].error.endswith("; the next point connects again")
    assert points[1].error is None and points[1].host == ALIAS
    assert run.workers_started == 2


def test_a_point_the_remote_never_answers_is_an_error_row_after_its_budget_and_a_margin(
    sshd, tmp_path, monkeypatch
):
    from explorer.bench import runner
    from tests.remote.test_hostile_agent import _python_for

    monkeypatch.setattr(runner, "REMOTE_POINT_MARGIN_S", 4.0)
    plan = BenchPlan(
        workload="matmul", devices=["cpu"], sizes=[16, 32], repeats=1, time_budget_s=1.0,
        remote=_remote(sshd, _python_for("silent", tmp_path)),
    )  # fmt: skip
    run = BenchRun(plan)
    points = run.run_all()
    assert [p.size for p in points] == [16, 32]
    assert points[0].error == (
        f"{ALIAS} did not answer this point within 5 s (its budget of 1 s and a margin); its agent was "
        "stopped and the next point connects again"
    )
    assert points[1].error and points[1].error.endswith(
        "(its budget of 1 s and a margin); its agent was stopped"
    )
    assert run.workers_started == 2


def _fake_python(folder: Path, hello: dict, name: str = "stand-in-python") -> str:
    fake = folder / name
    fake.write_text(f"#!/bin/sh\necho '{json.dumps(hello)}'\ncat >/dev/null\n")
    fake.chmod(0o755)
    return str(fake)


def test_another_build_of_the_same_version_is_refused_with_both_ways_out(sshd, tmp_path):
    from explorer import __version__

    ours = build_id()
    theirs = "f" * 16 if ours != "f" * 16 else "e" * 16
    hello = {"type": "hello", "protocol": PROTOCOL_VERSION, "package": "device-explorer",
             "version": __version__, "python": "3.11", "pid": 1, "platform": "linux", "build": theirs,
             "started": {"argv": ["python3"], "forced": False, "guard": None}, "heartbeat_s": 20}  # fmt: skip
    fake = _fake_python(tmp_path, hello)
    with pytest.raises(AgentMismatch) as info:
        open_agent(_remote(sshd, fake))
    said = str(info.value)
    assert "\n" not in said
    assert said.startswith(
        f"{ALIAS} runs device-explorer {__version__} build {theirs} and this app is {__version__} build {ours}: "
        "the two must be the same build"
    ), said
    assert "install the server's build here" in said and f"ask whoever keeps {fake} on {ALIAS}" in said
    # the same build is accepted
    fine = _fake_python(tmp_path, {**hello, "build": ours}, "same-build-python")
    agent = open_agent(_remote(sshd, fine))
    agent.close(grace_s=0)


def test_a_python_that_cannot_be_run_gives_the_shell_s_reason(sshd, tmp_path):
    """A venv's Python nobody may execute (a venv made from a Python under a private home reads
    the same to the students): the shell's own "Permission denied", never "ended with code 126"."""
    unrunnable = tmp_path / "opt-dx" / "bin" / "python"
    unrunnable.parent.mkdir(parents=True)
    unrunnable.write_text("#!/bin/sh\n")
    unrunnable.chmod(0o644)  # no execute bit for anyone: refused even to root
    with pytest.raises(RemoteGone) as info:
        open_agent(_remote(sshd, str(unrunnable)))
    said = str(info.value)
    assert said.startswith(f"{ALIAS} cannot run {unrunnable} (Permission denied: {unrunnable}): "), said
    assert "every account can run" in said and "126" not in said and "\n" not in said


@pytest.mark.slow
def test_via_on_an_account_whose_force_command_ignores_it_is_refused(tmp_path):
    missing = LoopbackSshd.missing()
    if missing:
        pytest.skip(missing)
    forced = f"{agent_python()} -m explorer agent"
    with LoopbackSshd(tmp_path / "sshd", [f"ForceCommand {forced}"]) as sshd:
        remote = _remote(sshd, agent_python(), via="srun --time=2")
        with pytest.raises(AgentMismatch) as info:
            open_agent(remote)
        said = str(info.value)
        assert said.startswith(
            f"--via 'srun --time=2' cannot be used here: this account's ForceCommand on {ALIAS} runs the agent itself ("
        ), said
        assert "would run on the login node instead of in a job; leave --via out" in said and "\n" not in said
        # without --via the same account works
        agent = open_agent(_remote(sshd, agent_python()))
        try:
            assert agent.request("ping", timeout_s=30)["pid"] == agent.hello.pid
        finally:
            agent.close()


def test_the_remote_agent_reports_its_build_and_how_it_was_started(sshd):
    agent = open_agent(_remote(sshd, agent_python()))
    try:
        hello = agent.hello
        assert hello is not None and hello.build == build_id() and hello.heartbeat_s >= 6
        assert hello.started["forced"] is False and hello.started["guard"] is None
        assert hello.started["argv"][-3:] == ["-m", "explorer", "agent"] and sys.executable
    finally:
        agent.close()


def test_an_older_commit_of_the_same_version_is_refused_not_accepted_silently(sshd, tmp_path):
    """A server on a commit from before builds were named speaks protocol 1 and says the same
    version: it was accepted, and its points came back without their newer fields."""
    from explorer import __version__

    hello = {"type": "hello", "protocol": 1, "package": "device-explorer", "version": __version__,
             "python": "3.11", "pid": 1, "platform": "linux"}  # fmt: skip
    with pytest.raises(AgentMismatch) as info:
        open_agent(_remote(sshd, _fake_python(tmp_path, hello)))
    said = str(info.value)
    assert said.startswith(
        f"{ALIAS} runs device-explorer {__version__} from another commit (it names no build) and this app "
        f"is {__version__} build {build_id()}: the two must be the same build"
    ), said
