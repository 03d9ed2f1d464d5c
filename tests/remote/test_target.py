"""The remote as the user names it: what is refused before ssh ever runs, and the argv ssh gets."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.errors import UserError
from explorer.remote.target import Remote, destination_problem, parse_remote, split_destination


@pytest.mark.parametrize(
    "dest, user, host, port",
    [
        ("gpu-lab", None, "gpu-lab", None),
        ("alice@gpu.example.edu", "alice", "gpu.example.edu", None),
        ("host:2222", None, "host", 2222),
        ("bob@10.0.0.7:22", "bob", "10.0.0.7", 22),
        ("[fe80::1]:2200", None, "[fe80::1]", 2200),
        ("first.last@lab_gpu", "first.last", "lab_gpu", None),
    ],
)
def test_destinations_people_write_are_accepted(dest, user, host, port):
    assert destination_problem(dest) is None
    assert split_destination(dest) == (user, host, port)


@pytest.mark.parametrize(
    "dest, words",
    [
        ("-oProxyCommand=touch /tmp/x", "starts with '-'"),
        ("-p", "starts with '-'"),
        ("gpu lab", "space or a control character"),
        ("gpu\nlab", "space or a control character"),
        ("gpu-lab\x00", "space or a control character"),
        ("alice@-oProxyCommand=x", "not an ssh destination"),
        ("gpu;rm -rf ~", "space or a control character"),
        ("gpu;id", "not an ssh destination"),
        ("$(id)", "not an ssh destination"),
        ("host:70000", "port 70000"),
        ("", "empty"),
    ],
)
def test_hostile_destinations_are_refused_in_one_line(dest, words):
    problem = destination_problem(dest)
    assert problem is not None and words in problem and "\n" not in problem
    with pytest.raises(UserError):
        parse_remote(dest)


@given(st.text(max_size=40))
def test_no_accepted_destination_can_be_read_by_ssh_as_an_option(text):
    if destination_problem(text) is None:
        argv = parse_remote(text).ssh_argv()
        dest_at = argv.index("--") + 1
        assert not argv[dest_at].startswith("-")
        assert all(c.isalnum() or c in "@.-_:[]%+" for c in text)


@pytest.mark.slow
def test_argv_is_batch_mode_and_the_remote_command_is_quoted_arguments():
    remote = parse_remote("alice@gpu:2222", "srun --gres=gpu:1 --job-name='my run'", "~/dx env/bin/python")
    argv = remote.ssh_argv()
    assert argv[0] == "ssh"
    for option in ("BatchMode=yes", "ConnectTimeout=10", "ServerAliveInterval=5"):
        assert option in argv
    assert argv[argv.index("-p") + 1] == "2222"
    assert argv[-3:-1] == ["--", "alice@gpu"]
    # the remote shell splits the command back into exactly the arguments meant, ~/ expanded there:
    # the launcher guard (same Python, on the login node) runs the launcher, which runs the agent
    guard = ["~/dx env/bin/python", "-m", "explorer", "launcher-guard", "--"]
    launcher = ["srun", "--gres=gpu:1", "--job-name=my run"]
    agent = ["~/dx env/bin/python", "-m", "explorer", "agent"]
    assert remote.remote_command() == [*guard, *launcher, *agent]
    words = shlex.split(argv[-1])
    assert words[5:8] == launcher
    expanded = subprocess.run(
        ["sh", "-c", f"printf '%s\\n' {remote.ssh_argv(job_name='dx-1 2')[-1]}"],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": "/h"},
    ).stdout.splitlines()
    home = "/h/dx env/bin/python"
    assert expanded == [home, *guard[1:4], "--job-name", "dx-1 2", "--", *launcher, home, *agent[1:]]


@pytest.mark.slow
def test_a_prefix_with_shell_syntax_stays_arguments():
    remote = parse_remote("gpu", "srun; touch /tmp/dx-pwned", None)
    line = remote.remote_command_line()
    out = subprocess.run(["sh", "-c", f"printf '%s\\n' {line}"], capture_output=True, text=True).stdout
    assert out.splitlines()[5:8] == ["srun;", "touch", "/tmp/dx-pwned"]  # printed, never run


@pytest.mark.parametrize("prefix", ["-N1 srun", "srun 'unclosed", "srun\n-N1"])
def test_bad_launchers_are_refused(prefix):
    with pytest.raises(UserError):
        parse_remote("gpu", prefix)


def test_ipv6_destination_reaches_ssh_without_brackets():
    remote = Remote("[::1]:2200")
    argv = remote.ssh_argv()
    assert argv[-2] == "::1" and argv[argv.index("-p") + 1] == "2200"


@pytest.mark.slow
def test_cli_refuses_a_dash_destination_before_ssh_runs(tmp_path):
    """A fake ``ssh`` first on PATH records any call: none may happen."""
    marker = tmp_path / "ssh-ran"
    fake = tmp_path / "ssh"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 255\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    for argv in (
        ["bench", "matmul", "--sizes", "64", "--host", "-oProxyCommand=touch /tmp/dx-pwned"],
        ["devices", "--host", "-oProxyCommand=touch /tmp/dx-pwned"],
        ["self-test", "--host=-F/dev/null"],
    ):
        r = subprocess.run([sys.executable, "-m", "explorer", *argv], capture_output=True, text=True, env=env)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("device-explorer: error: remote machine") and r.stderr.count("\n") == 1
        assert "Traceback" not in r.stderr
    assert not marker.exists()


@pytest.mark.slow
def test_via_without_host_is_refused():
    r = subprocess.run(
        [sys.executable, "-m", "explorer", "devices", "--via", "srun"], capture_output=True, text=True
    )
    assert r.returncode == 2 and "--via 'srun' needs --host" in r.stderr
