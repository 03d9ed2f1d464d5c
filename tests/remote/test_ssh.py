"""A real sshd on 127.0.0.1: this machine, running the installed package, is the remote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from explorer.agent.child import AgentMismatch
from explorer.bench.results import BenchPoint
from explorer.bench.runner import BenchPlan, BenchRun
from explorer.remote import RemoteGone, list_devices, open_agent, parse_remote
from tests.remote.servers import ALIAS, agent_python


def _remote(sshd, **kw):
    return parse_remote(ALIAS, kw.pop("via", None), kw.pop("python", agent_python()), ssh_config=sshd.config)


def _cli(sshd, *argv, timeout=300):
    env = {**os.environ, "DEVICE_EXPLORER_SSH_CONFIG": str(sshd.config)}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *argv], capture_output=True, text=True, env=env, timeout=timeout
    )


def test_devices_are_listed_with_their_host(sshd):
    r = _cli(sshd, "devices", "--json", "--host", ALIAS, "--remote-python", agent_python())
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["host"] == ALIAS and data["destination"] == ALIAS
    cpu = next(d for d in data["devices"] if d["kind"] == "cpu")
    assert cpu["host"] == ALIAS and cpu["logical_cores"] == os.cpu_count()
    # the same "why no GPU" words a local listing gives (this machine has none)
    assert data["why_no_gpu"].startswith("No NVIDIA GPU")
    text = _cli(sshd, "devices", "--host", ALIAS, "--remote-python", agent_python())
    assert text.returncode == 0 and text.stdout.startswith(f"Devices ON {ALIAS}")


def test_listing_rebuilds_the_same_records_a_local_probe_makes(sshd):
    from explorer.devices.discover import discover

    found = list_devices(_remote(sshd))
    local = discover(include_catalog=False, quick=True)
    assert found.discovery.cpu is not None and local.cpu is not None
    assert found.discovery.cpu.name == local.cpu.name
    assert found.discovery.cpu.isa_flags == local.cpu.isa_flags
    assert found.hostname == os.uname().nodename


def test_a_benchmark_is_streamed_back_with_its_host(sshd):
    r = _cli(
        sshd, "bench", "matmul", "--sizes", "32", "64", "--repeats", "3", "--json",
        "--host", ALIAS, "--remote-python", agent_python(),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    points = [json.loads(line) for line in r.stdout.splitlines()]
    assert [p["size"] for p in points] == [32, 64]
    assert all(p["host"] == ALIAS and p["error"] is None and p["median_s"] > 0 for p in points)


@pytest.mark.parametrize("warns", [False, True])
def test_killing_the_remote_agent_mid_run_is_an_error_row_and_the_run_goes_on(sshd, tmp_path, warns):
    """The agent is killed while it measures (the test workload's size 2 never returns: the kill is
    made once the agent sits in it, seen in /proc, never on a timer). With ``warns`` the remote
    Python first writes torch's CUDA warning to stderr, as a CUDA build of torch does on a machine
    without the toolkit: the error row still says the agent was killed, never the warning."""
    from tests.remote.test_resume import kill_agent_mid_point

    python = agent_python()
    if warns:
        wrapper = tmp_path / "python-that-warns"
        wrapper.write_text(
            "#!/bin/sh\necho \"No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\" >&2\n"
            f'exec {python} "$@"\n'
        )
        wrapper.chmod(0o755)
        python = str(wrapper)
    plan = BenchPlan(
        workload="_hang_test",
        devices=["cpu"],
        sizes=[1, 2, 3],
        repeats=3,
        remote=_remote(sshd, python=python),
    )
    run = BenchRun(plan)
    points: list[BenchPoint] = []
    killer = threading.Thread(target=lambda: killed.append(kill_agent_mid_point(sshd)), daemon=True)
    killed: list[int] = []
    for event in run.events():
        if not isinstance(event, BenchPoint):
            continue
        points.append(event)
        if len(points) == 1:
            pid = run.agent_pid
            assert pid is not None and pid != run.worker_pid  # the agent's own pid, not ssh's
            killer.start()
    killer.join(5)
    assert killed
    assert [p.size for p in points] == [1, 2, 3]
    assert points[0].error is None and points[2].error is None  # kept, and the run reconnected
    assert points[1].error is not None and ALIAS in points[1].error
    assert "killed" in points[1].error or "dropped" in points[1].error
    assert (
        "CUDA" not in points[1].error and "Traceback" not in points[1].error and "\n" not in points[1].error
    )
    assert run.workers_started == 2


def test_an_unknown_host_key_is_refused(sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    config = sshd.write_config(tmp_path / "config", empty)
    remote = parse_remote(ALIAS, None, agent_python(), ssh_config=config)
    with pytest.raises(RemoteGone, match="host key is not known here, so ssh refused"):
        open_agent(remote)


def test_a_changed_host_key_is_refused(sshd, tmp_path):
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    kind, key = other.with_suffix(".pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd.port} {kind} {key}\n")
    remote = parse_remote(ALIAS, None, agent_python(), ssh_config=sshd.write_config(tmp_path / "c", known))
    with pytest.raises(RemoteGone, match="host key has CHANGED"):
        open_agent(remote)


def test_a_key_the_server_does_not_accept_is_permission_denied(sshd, tmp_path):
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    config = sshd.write_config(tmp_path / "config", sshd.known_hosts)
    config.write_text(config.read_text().replace(str(sshd.key), str(stranger)))
    r = _cli(sshd, "devices", "--host", ALIAS, "--remote-python", agent_python())
    assert r.returncode == 0  # the fixture's own config still works
    env = {**os.environ, "DEVICE_EXPLORER_SSH_CONFIG": str(config)}
    r = subprocess.run(
        [sys.executable, "-m", "explorer", "devices", "--host", ALIAS, "--remote-python", agent_python()],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "refused the login (permission denied)" in r.stderr


@pytest.mark.slow
def test_nothing_listening_is_said_in_words():
    remote = parse_remote(f"127.0.0.1:{_closed_port()}", None, agent_python(), ssh_config=os.devnull)
    # refused at once: a connection that waited out ssh's ConnectTimeout would be told it
    # "did not answer within 10 s", so the words say which it was, with no clock to break
    with pytest.raises(RemoteGone, match="refused the connection: no ssh server listens"):
        open_agent(remote)


def test_a_remote_without_the_package_says_what_to_install(sshd):
    with pytest.raises(RemoteGone) as info:
        open_agent(_remote(sshd, python="/usr/bin/env"))
    # env runs "-m": not a Python at all; a real Python without the package:
    python_without = "/usr/bin/python3"
    if os.path.exists(python_without):
        with pytest.raises(
            RemoteGone, match=r"has no device-explorer for /usr/bin/python3: install it there"
        ):
            open_agent(_remote(sshd, python=python_without))
    assert "\n" not in str(info.value)


def test_another_version_there_is_named_with_the_install_command(sshd, tmp_path):
    """A stand-in 'python' that says hello as version 0.0.1 of the package."""
    fake = tmp_path / "old-python"
    hello = {"type": "hello", "protocol": 1, "package": "device-explorer", "version": "0.0.1",
             "python": "3.11", "pid": 1, "platform": "linux"}  # fmt: skip
    fake.write_text(f"#!/bin/sh\necho '{json.dumps(hello)}'\ncat >/dev/null\n")
    fake.chmod(0o755)
    from explorer import __version__

    with pytest.raises(AgentMismatch) as info:
        open_agent(_remote(sshd, python=str(fake)))
    said = str(info.value)
    # both ways out: the server's version here, or this version there by whoever keeps that Python
    # (a shared venv is the admin's: the student is not told to pip install into it)
    assert said.startswith(f"{ALIAS} runs device-explorer 0.0.1 and this app is {__version__}: ")
    assert "install the server's version here (pip install device-explorer==0.0.1)" in said
    assert (
        f"ask whoever keeps {fake} on {ALIAS}" in said
        and f"-m pip install device-explorer=={__version__})" in said
    )


def _closed_port() -> int:
    from tests.remote.servers import free_port

    return free_port()


def test_the_self_test_runs_on_the_remote_and_names_it(sshd):
    r = _cli(sshd, "self-test", "--json", "--host", ALIAS, "--remote-python", agent_python())
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["host"] == ALIAS and data["ok"] is True
    names = {c["name"] for c in data["checks"]}
    assert {"devices", "cpu matmul", "benchmark engine"} <= names and "window" not in names


def test_a_remote_runs_roof_comes_back_from_that_machine(sshd):
    """The roofline of a remote run is that machine's: its agent sends the device's roof (its
    reported peak and the ceilings measured and cached there), labelled with the host."""
    plan = BenchPlan(workload="matmul", devices=["cpu"], sizes=[32, 48], repeats=3, remote=_remote(sshd))
    run = BenchRun(plan)
    points = run.run_all()
    assert all(p.ok for p in points), [p.error for p in points]
    roof = run.roofs[(ALIAS, "cpu")]  # one roof per (host, device)
    assert roof.host == ALIAS and roof.device == "cpu" and roof.title.endswith(f" ON {ALIAS}")
    assert roof.top("compute") is not None and roof.top("compute").value > 0
    assert run.workers_started == 1  # asked of the same agent, once


@pytest.mark.parametrize("backend", ["simulator", "emulation"])
def test_run_it_for_real_runs_on_the_remote_and_its_arrays_come_back_in_the_answer(
    sshd, backend, monkeypatch
):
    """The visualizer's real run through the remote's agent: the kernel runs there (this
    machine has no GPU, so under the simulator or as the emulation, as it would on a remote
    without one), and the per-element arrays come back inside the JSON answer, no file."""
    import tempfile

    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch_runs.realrun import run_real

    def no_files(*a, **k):
        raise AssertionError("a remote real run must not pass its result through a local file")

    monkeypatch.setattr(tempfile, "mkstemp", no_files)
    started = []
    launch = LaunchConfig(Dim3(3), Dim3(32), n=90)
    result = run_real(launch, backend=backend, remote=_remote(sshd), on_process=started.append)
    assert started and started[0].hello is not None and started[0].hello.pid != os.getpid()
    assert result.backend == backend and result.n == 90
    assert result.mismatches(32) == 0 and result.untouched == 0 and result.written_twice == 0
    assert result.sum_correct


def test_a_remote_real_run_too_big_to_bring_back_is_refused_before_ssh_runs():
    from explorer.errors import UserError
    from explorer.launch.config import Dim3, LaunchConfig
    from explorer.launch_runs.realrun import REMOTE_MAX_ELEMENTS, run_real

    remote = parse_remote(f"127.0.0.1:{_closed_port()}", None, agent_python(), ssh_config=os.devnull)
    with pytest.raises(UserError, match=f"brings back at most {REMOTE_MAX_ELEMENTS:,} elements"):
        run_real(LaunchConfig(Dim3(1 << 14), Dim3(1024)), backend="emulation", remote=remote)
