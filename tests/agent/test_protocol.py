"""The agent protocol and the one child-process runner, against real processes.

The agent is the real ``python -m explorer agent``; where a test needs a child that misbehaves in a
way the agent never would (another version, garbage on stdout, a grandchild), the child is a few
lines of Python run as a real process. Nothing of the OS is mocked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from explorer import __version__
from explorer.agent.child import (
    AgentCancelled,
    AgentFailed,
    AgentGone,
    AgentMismatch,
    AgentProcess,
    AgentTimeout,
    local_agent,
    local_agent_argv,
)
from explorer.agent.protocol import (
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
    Bye,
    Error,
    Hello,
    ProtocolError,
    Request,
    Result,
    decode,
    encode,
)
from explorer.bench.wl_selftest import HANG_MARK_ENV
from tests.processes import CHILD_EXIT_S, gone, wait_until

HELLO = {
    "type": "hello",
    "protocol": PROTOCOL_VERSION,
    "package": "device-explorer",
    "version": __version__,
    "python": "3",
    "pid": 1,
    "platform": "linux",
}
POINT = {
    "index": 0,
    "workload": "_hang_test",
    "device": "cpu",
    "variant": "cpu",
    "variant_key": "plain",
    "size": 2,
    "repeats": 1,
    "budget_s": 0.1,
    "cpu_threads": None,
    "partner": None,
}


def _script(body: str, hello: dict | None = HELLO) -> list[str]:
    """A child that says ``hello`` (unless None) and then runs ``body`` (Python, with sys and json)."""
    greet = f"print(json.dumps({hello!r}), flush=True)\n" if hello is not None else ""
    return [sys.executable, "-c", "import json, sys, time, os, subprocess\n" + greet + body]


# --- messages -----------------------------------------------------------------------------------


def test_every_message_survives_a_round_trip():
    for message in (
        Hello(1, "device-explorer", "0.1.0", "3.11.7", 42, "linux"),
        Request(3, "bench.point", {"size": 2}),
        Result(3, {"point": {"median_s": 0.5}}),
        Error(3, "failed", "ValueError: no"),
    ):
        line = encode(message)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert decode(line) == message


@pytest.mark.parametrize(
    "line,needle",
    [
        (b"hello\n", "not a JSON message"),
        (b"\xff\xfe\n", "not a JSON message"),
        (b"[1, 2]\n", "not a JSON object"),
        (b'{"type": "shout"}\n', "unknown message type"),
        (b'{"type": "result", "id": true, "data": {}}\n', "'id'"),
        (b'{"type": "result", "id": -1, "data": {}}\n', "out-of-range id"),
        (b'{"type": "result", "id": 1, "data": []}\n', "'data'"),
        (b'{"type": "error", "id": 1, "kind": "oops", "message": "x"}\n', "unknown kind"),
        (b'{"type": "hello", "protocol": "1"}\n', "'protocol'"),
        (b"[" * 200_000 + b"\n", "not a JSON message"),
        (b'{"type": "bye", "pad": "' + b"x" * MAX_LINE_BYTES + b'"}\n', "longer than the limit"),
    ],
)
def test_a_bad_line_is_one_line_protocol_error(line, needle):
    with pytest.raises(ProtocolError) as err:
        decode(line)
    assert needle in str(err.value) and "\n" not in str(err.value)


# --- the real agent -----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_local_agent_says_hello_and_answers_in_order():
    with local_agent() as agent:
        hello = agent.start()
        assert (hello.protocol, hello.version, hello.pid) == (PROTOCOL_VERSION, __version__, agent.pid)
        assert agent.request("ping", timeout_s=30)["pid"] == agent.pid
        with pytest.raises(AgentFailed) as err:
            agent.request("no.such.method", timeout_s=30)
        assert err.value.kind == "unknown-method" and "ping" in str(err.value)
        with pytest.raises(AgentFailed, match="not a benchmark point"):
            agent.request("bench.point", {"nonsense": 1}, timeout_s=30)
        assert agent.request("ping", timeout_s=30)["pid"] == agent.pid  # still serving after errors
        pid = agent.pid
    assert gone(pid)


def test_argv_is_a_list_never_a_shell_string():
    with pytest.raises(TypeError):
        AgentProcess("python -m explorer agent")  # type: ignore[arg-type]
    argv, _env = local_agent_argv()
    assert argv == [sys.executable, "-m", "explorer", "agent"]


def test_in_the_bundle_the_agent_is_the_app_itself_with_agent(monkeypatch):
    """The bundle's executable has no -m: it is started with the hidden sub-command."""
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    argv, _env = local_agent_argv()
    assert argv == [sys.executable, "agent"]


@pytest.mark.slow
def test_stray_prints_in_the_agent_reach_stderr_not_the_protocol():
    """A workload or library printing to stdout (Python's print or fd 1 itself) must not corrupt
    the stream: the agent's method here prints both ways before it answers."""
    argv, env = local_agent_argv()
    code = (
        "import os, sys\n"
        "from explorer.agent import serve\n"
        "def noisy(params, emit):\n"
        "    print('stray print')\n"
        "    os.write(1, b'raw write to fd 1\\n')\n"
        "    return {'ok': True}\n"
        "sys.exit(serve.serve({'ping': noisy}))\n"
    )
    with AgentProcess([sys.executable, "-c", code], env=env) as agent:
        agent.start()
        assert agent.request("ping", timeout_s=30) == {"ok": True}
        wait_until(lambda: "raw write to fd 1" in agent.stderr_text(), None, 60, "the raw write on stderr")
        assert "stray print" in agent.stderr_text() and "raw write to fd 1" in agent.stderr_text()


@pytest.mark.slow
def test_a_child_dying_mid_request_is_agent_gone_with_how_it_died():
    with local_agent() as agent:
        agent.start()
        with pytest.raises(AgentGone) as err:
            agent.request("bench.point", {**POINT, "workload": "_crash_test"}, timeout_s=60)
        assert err.value.how == "crashed (SIGSEGV)" and "during bench.point" in str(err.value)
        with pytest.raises(AgentGone):  # a dead agent stays dead
            agent.request("ping", timeout_s=5)


@pytest.mark.slow
def test_a_child_hanging_past_the_timeout_is_killed():
    with local_agent() as agent:
        agent.start()
        pid = agent.pid
        t0 = time.monotonic()
        with pytest.raises(AgentTimeout, match="within 1 s"):
            agent.request("bench.point", POINT, timeout_s=1.0)
        # the point never returns: only the timeout can end the request, and half a minute is a
        # bound no loaded machine reaches for a 1 s timeout
        assert time.monotonic() - t0 < 30
        assert gone(pid)


@pytest.mark.slow
def test_the_agent_exits_at_end_of_stdin_even_mid_request(tmp_path):
    """What ends a remote agent when ssh drops: its stdin closes while it computes."""
    argv, env = local_agent_argv()
    hanging = tmp_path / "hanging"
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**env, HANG_MARK_ENV: str(hanging)}
    )
    try:
        assert json.loads(proc.stdout.readline())["type"] == "hello"
        proc.stdin.write(encode(Request(1, "bench.point", POINT)))
        proc.stdin.flush()
        wait_until(hanging.exists, proc, 60, "the agent hung in the point")
        proc.stdin.close()
        assert proc.wait(CHILD_EXIT_S) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_the_agent_exits_cleanly_on_bye_while_its_stdin_is_still_open():
    """Under srun or ssh the end of stdin comes after the bye: the agent must still exit with 0.
    (It aborted with "Fatal Python error: _enter_buffered_busy" on stdin's lock, held by its
    reader thread, and Slurm recorded the job as failed.)"""
    argv, env = local_agent_argv()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert json.loads(proc.stdout.readline())["type"] == "hello"
        proc.stdin.write(encode(Bye()))
        proc.stdin.flush()  # and not closed
        assert proc.wait(CHILD_EXIT_S) == 0, proc.stderr.read().decode(errors="replace")[-300:]
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_agent_dies_with_its_parent_even_when_its_stdin_stays_open():
    """The parent is SIGKILLed while the agent's stdin is held open elsewhere (here, by this test):
    only the parent-death signal can end the agent."""
    read_fd, write_fd = os.pipe()
    argv, env = local_agent_argv()
    middle = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"p = subprocess.Popen({argv!r}, stdin={read_fd}, stdout=subprocess.PIPE)\n"
            "hello = p.stdout.readline()\n"  # said once the parent-death signal is set up
            "print(p.pid, hello.decode().strip(), flush=True)\n"
            "time.sleep(120)\n",
        ],
        stdout=subprocess.PIPE,
        pass_fds=(read_fd,),
        env=env,
    )
    os.close(read_fd)
    try:
        pid, hello = middle.stdout.readline().decode().split(" ", 1)
        agent_pid = int(pid)
        assert json.loads(hello)["type"] == "hello"
        middle.send_signal(signal.SIGKILL)
        middle.wait(CHILD_EXIT_S)
        assert gone(agent_pid)
    finally:
        os.close(write_fd)
        middle.kill()
        middle.wait()


# --- children that misbehave --------------------------------------------------------------------


@pytest.mark.slow
def test_another_protocol_version_is_refused_with_what_to_install():
    agent = AgentProcess(_script("time.sleep(60)", hello={**HELLO, "protocol": PROTOCOL_VERSION + 1}))
    with pytest.raises(AgentMismatch) as err:
        agent.start()
    assert f"pip install device-explorer=={__version__}" in str(err.value)
    assert f"protocol {PROTOCOL_VERSION + 1}" in str(err.value)
    assert gone(agent.pid)
    agent.close()


@pytest.mark.slow
def test_another_package_version_is_refused():
    agent = AgentProcess(_script("time.sleep(60)", hello={**HELLO, "version": "0.0.1"}))
    with pytest.raises(AgentMismatch, match="runs device-explorer 0.0.1"):
        agent.start()
    agent.close()


@pytest.mark.slow
def test_a_garbage_line_after_hello_is_a_protocol_error_and_the_child_is_stopped():
    agent = AgentProcess(
        _script("sys.stdin.readline(); print('Segmentation fault?', flush=True); time.sleep(60)")
    )
    agent.start()
    with pytest.raises(ProtocolError, match="not a JSON message: 'Segmentation fault\\?'"):
        agent.request("ping", timeout_s=10)
    assert gone(agent.pid)
    agent.close()


@pytest.mark.slow
def test_an_answer_to_another_request_is_a_protocol_error():
    agent = AgentProcess(
        _script(
            'sys.stdin.readline(); print(json.dumps({"type":"result","id":7,"data":{}}), flush=True); time.sleep(60)'
        )
    )
    agent.start()
    with pytest.raises(ProtocolError, match="result for request 7"):
        agent.request("ping", timeout_s=10)
    agent.close()


@pytest.mark.slow
def test_noise_before_hello_is_tolerated():
    agent = AgentProcess(
        [
            sys.executable,
            "-c",
            f"import json, sys\nprint('Welcome to gpu-lab')\nprint(json.dumps({HELLO!r}))\n"
            'sys.stdin.readline(); print(json.dumps({"type":"result","id":1,"data":{"ok":1}}), flush=True)',
        ]
    )
    with agent:
        agent.start()
        assert agent.request("ping", timeout_s=10) == {"ok": 1}


@pytest.mark.slow
def test_no_hello_in_time_is_a_timeout():
    agent = AgentProcess(_script("time.sleep(60)", hello=None))
    t0 = time.monotonic()
    with pytest.raises(AgentTimeout, match="did not start within 0.5 s"):
        agent.start(hello_timeout_s=0.5)
    assert time.monotonic() - t0 < 30  # not the child's 60 s sleep: a loaded machine may take seconds
    assert gone(agent.pid)
    agent.close()


@pytest.mark.slow
def test_a_child_that_fails_to_start_is_named_with_its_last_stderr_line():
    agent = AgentProcess(
        _script("sys.exit('no module named explorer')", hello=None), label="the agent on gpu-lab"
    )
    with pytest.raises(AgentGone) as err:
        agent.start()
    assert (
        str(err.value) == "the agent on gpu-lab exited with code 1 while starting: no module named explorer"
    )
    agent.close()


@pytest.mark.slow
def test_a_missing_program_is_one_line():
    agent = AgentProcess(["/nonexistent/python3", "-m", "explorer", "agent"])
    with pytest.raises(AgentGone, match="could not start the worker"):
        agent.start()


@pytest.mark.slow
def test_cancel_from_another_thread_kills_the_whole_group_at_once():
    agent = AgentProcess(
        _script(
            "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(g.pid, file=sys.stderr, flush=True)\n"
            "sys.stdin.readline(); print('asked', file=sys.stderr, flush=True); time.sleep(60)"
        )
    )
    agent.start()
    wait_until(lambda: bool(agent.stderr_last_line()), None, 60, "the agent named its grandchild")
    grandchild = int(agent.stderr_last_line())
    cancelled: list[float] = []

    def cancel_once_asked() -> None:  # the request is in the agent's hands: cancel it from here
        wait_until(lambda: agent.stderr_last_line() == "asked", None, 60, "the agent read the request")
        cancelled.append(time.monotonic())
        agent.cancel()

    threading.Thread(target=cancel_once_asked, daemon=True).start()
    with pytest.raises(AgentCancelled):
        agent.request("ping", timeout_s=120)
    # the agent sleeps 60 s: ended well within that, the cancel killed it rather than waited
    assert cancelled and time.monotonic() - cancelled[0] < 30
    assert gone(agent.pid) and gone(grandchild)
    agent.close()


@pytest.mark.slow
def test_the_real_run_method_checks_its_params_before_running():
    with local_agent() as agent:
        agent.start()
        with pytest.raises(AgentFailed, match="grid must have 3 numbers; got 2"):
            agent.request("realrun.run", {"grid": [1, 1], "block": [1, 1, 1], "out": "x"}, timeout_s=30)
        with pytest.raises(AgentFailed, match="block must be a list of whole numbers"):
            agent.request("realrun.run", {"grid": [1, 1, 1], "block": ["1", 1, 1], "out": "x"}, timeout_s=30)
        with pytest.raises(AgentFailed, match="out must name a file"):
            agent.request("realrun.run", {"grid": [1, 1, 1], "block": [1, 1, 1]}, timeout_s=30)
