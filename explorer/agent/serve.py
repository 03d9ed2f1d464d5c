"""The agent: ``device-explorer agent`` (``python -m explorer agent``), the child end of the pipe.

It answers requests read from stdin with messages on stdout (see ``explorer.agent``), one request at
a time, on its main thread (CUDA contexts and signal handling belong there). Three things make sure
it never outlives whoever started it:

* On Linux it asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``): this holds
  even when the agent is stuck inside a driver call that never returns to Python.
* A thread reads stdin the whole time; end of file means the parent is gone or wants it gone (and
  over ssh, that the connection dropped), so the agent exits at once, even mid-request.
* It ignores SIGINT: the parent starts it in a session of its own, so a terminal's Ctrl-C reaches
  only the parent, which stops the agent itself (no traceback from the agent, ever). SIGTERM and
  SIGHUP keep their default: the agent dies at once.
* Over ssh none of that sees a parent that froze (a laptop whose lid closed, a Wi-Fi that died
  without a reset): the connection stays open and silent. A remote parent therefore sends a
  ``beat`` every few seconds, request or not; once one came, an agent that hears nothing for
  ``heartbeat_s`` (the admin's policy, 20 s by default) says so on stderr and ends, after its
  exit hooks (a GPU turn it held is given back). A local parent sends none: nothing is armed.

Stray output from libraries (a print in a workload, numba or torch warnings written to fd 1) would
corrupt the protocol, so the protocol gets a private copy of fd 1 and fd 1 is pointed at stderr,
which the parent collects for its error messages.
"""

from __future__ import annotations

import ctypes
import os
import platform
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, NoReturn

from explorer import __version__
from explorer.agent.build import build_id
from explorer.agent.protocol import (
    MAX_LINE_BYTES,
    PACKAGE,
    PROTOCOL_VERSION,
    AgentEvent,
    Beat,
    Bye,
    Error,
    Hello,
    Message,
    ProtocolError,
    Request,
    Result,
    decode,
    encode,
)
from explorer.errors import UserError

_PR_SET_PDEATHSIG = 1

#: how a method streams parts of its answer: one ``event`` message per call
Emit = Callable[[dict[str, Any]], None]
#: the one interface a method implements: ``(params, emit) -> answer``. A method raises
#: ``UserError`` (or any exception) to fail the request with one line; the agent goes on serving.
Method = Callable[[dict[str, Any], Emit], dict[str, Any]]
#: the methods an agent serves, by name; the ``agent`` command hands them in
#: (``explorer.commands.agent.METHODS``): the domain work lives above this package, never in it
Methods = Mapping[str, Method]

#: run just before the agent ends, whichever way (end of stdin, bye, a closed stdout): a GPU turn
#: (``explorer.gpuqueue.share``) gives its place in the line back here
EXIT_HOOKS: list[Callable[[], None]] = []


def exit_now(code: int) -> NoReturn:
    """End the process now (``os._exit``), after the exit hooks."""
    for hook in EXIT_HOOKS:
        try:
            hook()
        except Exception:  # nothing may stop the agent from ending
            pass
    os._exit(code)


def die_with_parent() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class _Channel:
    """The protocol's end of stdout: one whole line per write, from the main thread only."""

    def __init__(self) -> None:
        sys.stdout.flush()
        self._out: BinaryIO = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)  # anything else written to fd 1 goes to stderr, where the parent reads it
        sys.stdout = sys.stderr  # and Python's prints too, unbuffered, so they come in order

    def send(self, message: Message) -> None:
        try:
            self._out.write(encode(message))
        except OSError:
            exit_now(0)  # the parent closed its end: nobody is left to answer


class _Heard:
    """When the parent last said anything (a request, a beat), and whether it beats at all."""

    def __init__(self) -> None:
        self.at = time.monotonic()
        self.beats = threading.Event()

    def now(self) -> None:
        self.at = time.monotonic()


#: the words the agent leaves on stderr when its parent's beats stop (the tests wait for them)
SILENT_WORDS = "device-explorer agent: no word from the app for {s:g} s (its heartbeat stopped); ending"


def _watch_heartbeat(heard: _Heard, timeout_s: float) -> None:
    """End the agent once the parent, having beaten once, is silent for ``timeout_s``.

    A gap that this thread itself slept through (the agent was stopped, SIGSTOP, and resumed)
    is not the parent's silence: the reader gets a fresh ``timeout_s`` to catch up."""
    heard.beats.wait()
    step = max(0.1, min(1.0, timeout_s / 10))
    last = time.monotonic()
    never = threading.Event()  # waited on rather than slept: a sleeping thread would look busy in /proc
    while True:
        never.wait(step)
        now = time.monotonic()
        if now - last > step + timeout_s / 2:
            heard.now()  # we were stopped, not the parent
        last = now
        if now - heard.at > timeout_s:
            print(SILENT_WORDS.format(s=timeout_s), file=sys.stderr, flush=True)
            exit_now(0)


def _read_stdin(inbox: queue.Queue[Message | ProtocolError], heard: _Heard | None = None) -> None:
    stream = sys.stdin.buffer
    while True:
        try:
            line = stream.readline(MAX_LINE_BYTES + 1)
        except (OSError, ValueError):
            line = b""
        if not line:
            # The parent is gone, closed the pipe to stop us, or (over ssh) the connection dropped.
            exit_now(0)
        if heard is not None:
            heard.now()
        if not line.endswith(b"\n") and len(line) > MAX_LINE_BYTES:
            inbox.put(ProtocolError(f"a request line longer than {MAX_LINE_BYTES:,} bytes"))
            while line and not line.endswith(b"\n"):  # skip the rest of it
                line = stream.readline(MAX_LINE_BYTES + 1)
            continue
        try:
            message = decode(line)
        except ProtocolError as exc:
            inbox.put(exc)
            continue
        if isinstance(message, Beat):
            if heard is not None:
                heard.beats.set()
            continue  # a sign of life, never answered
        inbox.put(message)


def _answer(request: Request, channel: _Channel, methods: Methods) -> Message:
    method = methods.get(request.method)
    if method is None:
        known = ", ".join(sorted(m for m in methods if not m.startswith("_")))
        return Error(request.id, "unknown-method", f"no method {request.method!r}; this agent has {known}")

    def emit(data: dict[str, Any]) -> None:
        channel.send(AgentEvent(request.id, data))

    try:
        data = method(request.params, emit)
    except UserError as exc:
        return Error(request.id, "failed", str(exc))
    except Exception as exc:  # the parent shows one line; no traceback crosses the pipe
        first = str(exc).strip().splitlines()
        return Error(request.id, "failed", f"{type(exc).__name__}: {first[0] if first else 'no message'}")
    return Result(request.id, data)


def started_how() -> dict[str, Any]:
    """How this agent was started, for its hello: its command line, whether sshd ran an account's
    ForceCommand instead of what the parent asked for (``SSH_ORIGINAL_COMMAND`` is set then), and
    the launcher guard's job name when a guard started it. A parent that asked for a launcher
    (``--via srun``) and finds no guard refuses such an agent in one line."""
    argv = [a[:200] for a in getattr(sys, "orig_argv", sys.argv)[:8]]
    return {
        "argv": argv,
        "forced": "SSH_ORIGINAL_COMMAND" in os.environ,
        "guard": os.environ.get(GUARD_ENV, "")[:100] or None,
    }


#: set by the launcher guard for what it starts (``explorer.remote.jobguard``)
GUARD_ENV = "DEVICE_EXPLORER_GUARD_JOB"


def serve(methods: Methods, heartbeat_s: float = 0.0) -> int:
    """Say hello, then answer requests with ``methods`` until ``bye`` or the end of stdin; with
    ``heartbeat_s``, end once a parent that beats has been silent that long."""
    die_with_parent()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # SIGTERM and SIGHUP kill an agent at once, even one stuck in a driver call (the command
        # line turns them into exceptions for the parent's clean-up; the agent has none to do).
        for name in ("SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
    channel = _Channel()
    channel.send(
        Hello(
            protocol=PROTOCOL_VERSION,
            package=PACKAGE,
            version=__version__,
            python=platform.python_version(),
            pid=os.getpid(),
            platform=sys.platform,
            build=build_id(),
            started=started_how(),
            heartbeat_s=heartbeat_s,
        )
    )
    inbox: queue.Queue[Message | ProtocolError] = queue.Queue()
    heard = _Heard() if heartbeat_s > 0 else None
    if heard is not None:
        threading.Thread(
            target=_watch_heartbeat, args=(heard, heartbeat_s), name="agent-heartbeat", daemon=True
        ).start()
    threading.Thread(target=_read_stdin, args=(inbox, heard), name="agent-stdin", daemon=True).start()
    while True:
        message = inbox.get()
        if isinstance(message, Bye):
            return 0
        if isinstance(message, ProtocolError):
            channel.send(Error(0, "bad-request", str(message)))
        elif isinstance(message, Request):
            channel.send(_answer(message, channel, methods))
        else:
            channel.send(Error(0, "bad-request", f"an agent takes requests, not {type(message).__name__}"))


def run_agent(methods: Methods, heartbeat_s: float = 0.0) -> NoReturn:
    """Serve ``methods`` (the hidden ``agent`` sub-command), then end the process (``os._exit``).

    Why not return: after ``bye`` the stdin reader thread may still sit in ``readline`` (under
    srun or ssh the end of the pipe arrives later than the bye), holding stdin's lock, and
    Python's shutdown then aborts on that lock ("Fatal Python error: _enter_buffered_busy"):
    a SIGABRT that Slurm records as a failed job. The agent has nothing to clean up."""
    try:
        code = serve(methods, heartbeat_s)
    except Exception as exc:  # one line on stderr for the parent's message
        print(f"device-explorer agent: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    exit_now(code)
