"""The parent's heartbeat and the build id in the hello, against the real agent process.

An agent whose parent beats takes a silence of the admin's ``heartbeat_s`` for a parent that froze
and ends (after its exit hooks: a GPU turn is given back); one whose parent never beats (a local
worker) is never timed out. The build id is a hash of the package's source files: the same
files give the same id wherever they are, one changed byte gives another, and a start after the
first reads the cached id instead of hashing again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.agent import build
from explorer.agent.child import AgentProcess, AgentSilent, local_agent_argv
from explorer.agent.protocol import PROTOCOL_VERSION, Beat, Hello, decode, encode
from explorer.agent.serve import SILENT_WORDS
from explorer.gpuqueue.tickets import POLICY_FILE, read_policy
from tests.processes import gone


def test_a_beat_and_the_new_hello_fields_survive_a_round_trip():
    hello = Hello(
        PROTOCOL_VERSION, "device-explorer", "0.1.0", "3.11", 7, "linux",
        build="0123456789abcdef", started={"argv": ["python"], "forced": True, "guard": None},
        heartbeat_s=20.0,
    )  # fmt: skip
    assert decode(encode(hello)) == hello
    assert decode(encode(Beat())) == Beat()
    assert encode(Beat()) == b'{"type":"beat"}\n'


def test_an_older_agent_s_hello_still_reads_so_the_version_check_can_name_it():
    old = b'{"type":"hello","protocol":1,"package":"device-explorer","version":"0.1.0","python":"3","pid":1,"platform":"linux"}\n'
    hello = decode(old)
    assert isinstance(hello, Hello) and hello.protocol == 1
    assert (hello.build, hello.started, hello.heartbeat_s) == ("", {}, 0.0)
    odd = old.replace(b'"linux"', b'"linux","build":5,"started":[1],"heartbeat_s":1e999')
    hello = decode(odd)
    assert isinstance(hello, Hello) and (hello.build, hello.started, hello.heartbeat_s) == ("", {}, 0.0)


def test_the_heartbeat_bound_is_the_admin_s_and_checked(tmp_path):
    (tmp_path / POLICY_FILE).write_text('{"heartbeat_s": 8}')
    os.chmod(tmp_path / POLICY_FILE, 0o644)
    policy = read_policy(tmp_path)
    if os.geteuid() == 0:
        assert policy.heartbeat_s == 8.0 and policy.note == ""
    else:  # only a file root owns is read
        assert policy.heartbeat_s == 20.0 and "root" in policy.note
    (tmp_path / POLICY_FILE).write_text('{"heartbeat_s": 2}')
    if os.geteuid() == 0:
        policy = read_policy(tmp_path)
        assert policy.heartbeat_s == 20.0
        assert "heartbeat_s is 2; it must be a number of seconds from 6 to 3600" in policy.note


# --- the build id -------------------------------------------------------------------------------


def _package(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("A = 1\n")
    (root / "sub" / "mod.py").write_text("B = 2\n")
    (root / "sub" / "__pycache__").mkdir()
    (root / "sub" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0" * 10)
    (root / "data.json").write_text("{}")
    return root


def test_the_same_sources_give_the_same_id_anywhere_and_a_change_another(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    one = _package(tmp_path / "one" / "explorer")
    two = tmp_path / "two" / "explorer"
    shutil.copytree(one, two)
    os.utime(two / "__init__.py", (1, 1))  # a copy's times differ: the id does not
    first = build._computed(one)
    assert len(first) == 16 and int(first, 16) >= 0
    assert build._computed(two) == first
    (two / "sub" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"x")  # caches are no source
    (two / "data.json").write_text("[1]")
    assert build._computed(two) == first
    (two / "sub" / "mod.py").write_text("B = 3\n")
    assert build._computed(two) != first
    (two / "sub" / "mod.py").write_text("B = 2\n")
    (two / "sub" / "extra.py").write_text("")
    assert build._computed(two) != first
    # the path inside the package counts: the same bytes under another name are another build
    (two / "sub" / "extra.py").unlink()
    (two / "sub" / "mod.py").rename(two / "sub" / "mod2.py")
    assert build._computed(two) != first


def test_a_later_start_reads_the_cached_id_without_hashing(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    root = _package(tmp_path / "explorer")
    first = build._computed(root)
    assert list((tmp_path / "home").glob("build-id-*"))

    def no_hashing(*args):
        raise AssertionError("hashed again though nothing changed")

    monkeypatch.setattr(build, "hash_sources", no_hashing)
    assert build._computed(root) == first
    (root / "__init__.py").write_text("A = 2\n")  # changed: the cache no longer fits
    monkeypatch.undo()
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    assert build._computed(root) not in ("", first)


def test_this_package_has_an_id():
    assert len(build.build_id()) == 16


# --- the heartbeat, with the real agent ----------------------------------------------------------


def _agent_with_heartbeat(tmp_path: Path, heartbeat_s: float) -> AgentProcess:
    """A local agent whose GPU-queue folder holds the admin's policy with ``heartbeat_s``."""
    folder = tmp_path / "queue"
    folder.mkdir(mode=0o755, parents=True)
    (folder / POLICY_FILE).write_text(json.dumps({"heartbeat_s": heartbeat_s}))
    argv, env = local_agent_argv()
    env["DEVICE_EXPLORER_LOCK_DIR"] = str(folder)
    return AgentProcess(argv, env=env)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the policy file is read only when root owns it")
def test_an_agent_whose_parent_stops_beating_ends_and_one_never_beaten_lives_on(tmp_path):
    agent = _agent_with_heartbeat(tmp_path, 6)
    agent.beat_every_s = 1.0
    try:
        hello = agent.start()
        assert hello.heartbeat_s == 6.0 and hello.build == build.build_id()
        time.sleep(8)  # longer than the bound, beats coming: the agent stays
        assert agent.request("ping", timeout_s=30)["pid"] == agent.pid
        agent._closing.set()  # the beats stop, the pipe stays open: a parent that froze
        stopped = time.monotonic()
        assert gone(agent.pid, within_s=120), "the agent outlived its silent parent"
        waited = time.monotonic() - stopped
        assert waited >= 6 - 1.0  # not before the bound (one beat's slack)
        said = SILENT_WORDS.format(s=6)
        deadline = time.monotonic() + 30  # its last words reach us on the stderr reader's thread
        while said not in agent.stderr_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said in agent.stderr_text()
    finally:
        agent.close(grace_s=0)

    quiet = _agent_with_heartbeat(tmp_path / "b", 6)  # a local parent: no beats, nothing armed
    try:
        quiet.start()
        time.sleep(8)
        assert quiet.request("ping", timeout_s=30)["pid"] == quiet.pid
    finally:
        quiet.close()


@pytest.mark.slow
def test_a_request_whose_agent_goes_silent_ends_at_the_silence_bound(tmp_path):
    script = (
        "import json, sys, time\n"
        f"print(json.dumps({{'type': 'hello', 'protocol': {PROTOCOL_VERSION}, 'package': 'device-explorer',"
        " 'version': __import__('explorer').__version__, 'python': '3', 'pid': 1, 'platform': 'linux'}), flush=True)\n"
        "line = json.loads(sys.stdin.readline())\n"
        "for _ in range(3):\n"
        "    print(json.dumps({'type': 'event', 'id': line['id'], 'data': {'n': 1}}), flush=True)\n"
        "    time.sleep(0.3)\n"
        "time.sleep(600)\n"
    )
    agent = AgentProcess([sys.executable, "-c", script], env={**os.environ})
    events: list[dict] = []
    try:
        agent.start()
        with pytest.raises(AgentSilent, match="went silent during gpu.lock for 3 s"):
            agent.request("gpu.lock", timeout_s=600, on_event=events.append, idle_timeout_s=3)
        assert len(events) == 3  # the events kept it waiting; the silence after them ended it
        assert gone(agent.pid, within_s=60)
    finally:
        agent.close(grace_s=0)


@pytest.mark.slow
def test_the_agent_reports_how_it_was_started(tmp_path):
    argv, env = local_agent_argv()
    env["SSH_ORIGINAL_COMMAND"] = "python3 -m explorer launcher-guard -- srun python3 -m explorer agent"
    env.pop("DEVICE_EXPLORER_GUARD_JOB", None)
    with AgentProcess(argv, env=env) as agent:
        hello = agent.start()
    assert hello.started["forced"] is True and hello.started["guard"] is None
    assert hello.started["argv"][-3:] == ["-m", "explorer", "agent"]
    proc = subprocess.run(
        [*argv], input=b"", capture_output=True, env={**env, "DEVICE_EXPLORER_GUARD_JOB": "device-explorer-x"},
        timeout=60,
    )  # fmt: skip
    said = decode(proc.stdout.splitlines()[0] + b"\n")
    assert isinstance(said, Hello) and said.started["guard"] == "device-explorer-x"
    assert said.started["forced"] is True
