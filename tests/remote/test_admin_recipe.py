"""The README's recipe for a lab's admin, run as written (with this test's paths): the GPU queue's
folder, policy and login environment, and the sshd lines (keep-alives, an account whose logins
can only run the agent) on a real sshd. Through such an account the agent answers what the app
asks and nothing else: no module a workload does not need is imported, no file is written where a
request says."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.agent.child import AgentFailed
from explorer.gpuqueue.tickets import POLICY_FILE, folder_problem, queue_dir, read_policy
from explorer.remote import open_agent, parse_remote
from tests.remote.servers import ALIAS, LoopbackSshd, agent_python

pytestmark = pytest.mark.slow  # every test here starts a process

README = Path(__file__).resolve().parents[2] / "README.md"


def block(name: str) -> str:
    """The fenced block between ``<!-- name -->`` and ``<!-- /name -->`` in the README."""
    text = README.read_text()
    inner = text[text.index(f"<!-- {name} -->") : text.index(f"<!-- /{name} -->")]
    (code,) = re.findall(r"```\n(.*?)```", inner, flags=re.S)
    return "\n".join(line.strip() for line in code.splitlines())


def test_the_readmes_queue_recipe_makes_a_line_no_student_can_break(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("the recipe makes a folder root owns: run as root (as CI does)")
    folder = tmp_path / "var-lib" / "gpu-queue"
    environment = tmp_path / "environment"
    script = (
        block("admin-queue")
        .replace("sudo ", "")
        .replace("/var/lib/device-explorer/gpu-queue", str(folder))
        .replace("/etc/environment", str(environment))
    )
    subprocess.run(["bash", "-euc", script], check=True, capture_output=True, timeout=60)
    st = folder.stat()
    assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o1777 and folder_problem(folder) is None
    policy = read_policy(folder)
    assert (policy.stall_s, policy.turn_s, policy.grace_s, policy.source) == (
        30,
        600,
        120,
        str(folder / POLICY_FILE),
    )
    login_env = dict(line.split("=", 1) for line in environment.read_text().splitlines())
    assert queue_dir(login_env) == folder


@pytest.fixture(scope="module")
def forced_sshd(tmp_path_factory):
    """A real sshd with the README's lines, the account (root here) in the forced group."""
    missing = LoopbackSshd.missing()
    if missing:
        pytest.skip(missing)
    lines = block("admin-sshd").replace("/opt/dx/bin/python", agent_python()).replace("dx-agent-only", "root")
    with LoopbackSshd(tmp_path_factory.mktemp("forced"), extra_config=lines.splitlines()) as server:
        yield server


def test_the_readmes_sshd_lines_serve_the_app_through_a_forced_command(forced_sshd):
    env = {**os.environ, "DEVICE_EXPLORER_SSH_CONFIG": str(forced_sshd.config)}
    # the client asks for its own command; the account runs the forced agent instead, and it works
    r = subprocess.run(
        [sys.executable, "-m", "explorer", "devices", "--json", "--host", ALIAS, "--remote-python", "whatever"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["reachable"] is True
    # a shell is not to be had through it
    shell = subprocess.run(
        ["ssh", "-F", str(forced_sshd.config), "-o", "BatchMode=yes", ALIAS, "id"],
        input='{"type":"bye"}\n', capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert shell.stdout.startswith('{"type":"hello"') and "uid=" not in shell.stdout


def test_raw_requests_through_a_forced_account_import_nothing_and_write_nowhere(forced_sshd, tmp_path):
    agent = open_agent(parse_remote(ALIAS, None, agent_python(), ssh_config=forced_sshd.config))
    planted = tmp_path / "written-by-a-request.npz"
    try:
        with pytest.raises(AgentFailed, match=r"preload 'antigravity' is not a module a workload needs"):
            agent.request("bench.prepare", {"preload": ["antigravity"]}, timeout_s=60)
        assert agent.request("bench.prepare", {"preload": ["numpy"]}, timeout_s=120)["loaded"] == ["numpy"]
        with pytest.raises(AgentFailed, match=r"is not a result file the app made"):
            agent.request(
                "realrun.run",
                {"grid": [1, 1, 1], "block": [32, 1, 1], "n": 32, "out": str(planted), "emulate": True},
                timeout_s=120,
            )
        assert not planted.exists()
        # what the app asks of a remote (the result inline) still works
        answer = agent.request(
            "realrun.run", {"grid": [1, 1, 1], "block": [32, 1, 1], "n": 32, "inline": True, "emulate": True},
            timeout_s=300,
        )  # fmt: skip
        assert "result" in answer
    finally:
        agent.close()
