"""The parent's end: start an agent as a child process and talk to it. The one way this app runs a child.

``AgentProcess(argv)`` starts a child from an argument list (never a shell string), reads its hello,
and sends requests one at a time; each answer is read by a thread, checked (``protocol.decode``) and
matched to the request before the caller sees it. Everything the child writes to stderr is kept
(the last 64 KiB) so an error can quote its last line.

Guarantees, whatever the caller does:

* The child runs in a session (and process group) of its own, so a terminal's Ctrl-C reaches only
  the parent, which then stops the child; stopping kills the whole group, so nothing the child
  started survives it either.
* The child never outlives the parent: the agent asks Linux for SIGKILL when its parent dies and
  exits when its stdin reaches end of file (see ``explorer.agent.serve``).
* Every wait has a deadline: the hello (``hello_timeout_s``), each request (``timeout_s``). Past it
  the child is killed and the caller gets ``AgentTimeout``.
* ``cancel()`` may be called from any thread: it kills the group at once and a request waiting on
  the child raises ``AgentCancelled`` within a few milliseconds.
* With ``beat_every_s`` set (a remote agent) a thread sends a ``beat`` that often from the start,
  whether or not a request is under way: an agent (or launcher guard) that stops hearing them
  takes this parent for gone and ends (``explorer.agent.serve``).

The group is killed only while the child is not yet reaped (its pid cannot be reused until then),
so a kill can never reach an unrelated process that inherited the number.

``local_agent_argv()`` is the local agent (``python -m explorer agent``, or the bundle's executable
with ``agent``); a remote agent is the same ``AgentProcess`` around ``ssh DEST ... agent``.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO, Any

from explorer import __version__
from explorer.agent.protocol import (
    MAX_LINE_BYTES,
    PACKAGE,
    PROTOCOL_VERSION,
    AgentError,
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
from explorer.cleantext import clean_text

#: From starting the child to its hello. A local agent says hello in well under a second; the margin
#: is for a laptop busy with other work (and, later, for an ssh connection being made).
HELLO_TIMEOUT_S = 30.0
#: Lines a child may print before its hello (an ssh login's rc files sometimes do); kept for the error.
MAX_NOISE_LINES = 50
STDERR_KEEP_BYTES = 64 * 1024
_POLL_S = 0.1
#: How often a parent that beats says it is still there: a few beats fit in the shortest bound an
#: admin may set (``explorer.gpuqueue.tickets.POLICY_LIMITS["heartbeat_s"]``, 6 s).
BEAT_EVERY_S = 2.0


class AgentGone(AgentError):
    """The child ended (crash, kill, out of memory, or it closed its stdout)."""

    def __init__(self, message: str, how: str) -> None:
        super().__init__(message)
        self.how = how  # e.g. "crashed (SIGSEGV)", "exited with code 1"


class AgentCancelled(AgentGone):
    """``cancel()`` stopped the child."""


class AgentTimeout(AgentError):
    """The child did not answer in time and was stopped."""


class AgentSilent(AgentTimeout):
    """The child said nothing for a request's ``idle_timeout_s`` and was stopped."""


class AgentMismatch(AgentError):
    """The child speaks another protocol or is another version of the package."""


class AgentFailed(AgentError):
    """The child answered the request with an error (``kind``, one-line ``str()``)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def describe_exit(code: int | None) -> str:
    """How a child ended, in words: "crashed (SIGSEGV)", "exited with code 3", "was stopped"."""
    if code is None:
        return "was stopped"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"crashed ({name})"
    if code >= 0xC0000000:  # a Windows exception code, e.g. 0xC0000005 access violation
        return f"crashed (exception 0x{code:08X})"
    return f"exited with code {code}"


def local_agent_argv(env: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of a local agent: ``python -m explorer agent``, or in the
    PyInstaller bundle (which has no ``-m``) the bundle's executable with ``agent``."""
    from explorer.frozen import is_frozen

    child_env = dict(os.environ if env is None else env)
    if is_frozen():
        return [sys.executable, "agent"], child_env
    return [sys.executable, "-m", "explorer", "agent"], child_env


_EOF = object()


class AgentProcess:
    """One child speaking the agent protocol. Not for concurrent requests: one caller at a time
    (``cancel`` excepted, which any thread may call)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        label: str = "the worker",
        install_hint: str | None = None,
    ) -> None:
        if isinstance(argv, (str, bytes)) or not argv:
            raise TypeError("argv must be a non-empty list of arguments, never a shell string")
        self.argv = [str(a) for a in argv]
        self.env = dict(env) if env is not None else None
        self.label = label
        # What to tell the user when the child speaks another version (e.g. for a remote machine).
        self.install_hint = install_hint or f"pip install {PACKAGE}=={__version__}"
        self.hello: Hello | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # guards _proc's kill against its reaping
        self._reaped = False
        self._cancelled = False
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._next_id = 1
        self._broken: AgentError | None = None
        self._write_lock = threading.Lock()  # one whole line at a time: requests, beats, bye
        self._closing = threading.Event()
        #: send a ``beat`` this often (seconds) from the start; None: never (a local agent)
        self.beat_every_s: float | None = None
        #: called (on the caller's thread) with the data of an event that answers no request (id 0):
        #: what a launcher guard in front of the agent reports, before the hello too
        #: (``explorer.remote.jobguard``). It may raise an AgentError to stop the child.
        self.on_unsolicited: Callable[[dict[str, Any]], None] | None = None

    # --- facts -----------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def alive(self) -> bool:
        """Started, not ended and not broken."""
        return self._proc is not None and self._broken is None and self._proc.poll() is None

    def stderr_text(self) -> str:
        """What the child (ssh, the remote shell, srun, the agent) wrote on stderr, as data: no
        escape sequence or control character of it reaches the user's terminal."""
        with self._stderr_lock:
            raw = self._stderr.decode("utf-8", errors="replace")
        return clean_text(raw, keep_newlines=True)

    def stderr_last_line(self) -> str:
        lines = [ln.strip() for ln in self.stderr_text().splitlines() if ln.strip()]
        return lines[-1] if lines else ""

    # --- life ------------------------------------------------------------------------------
    def start(self, hello_timeout_s: float = HELLO_TIMEOUT_S) -> Hello:
        """Start the child and wait for its hello; AgentError (one line) if it does not come or
        does not match this app's protocol and version."""
        if self._proc is not None:
            raise RuntimeError("an AgentProcess starts once")
        posix = os.name == "posix"
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                close_fds=True,
                start_new_session=posix,
                creationflags=0 if posix else getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
            )
        except OSError as exc:
            raise AgentGone(f"could not start {self.label}: {exc}", "could not start") from None
        with self._lock:
            self._proc = proc
            cancelled = self._cancelled
        readers = [(self._read_stdout, "agent-stdout"), (self._read_stderr, "agent-stderr")]
        if self.beat_every_s:
            readers.append((self._beat, "agent-beat"))
        for target, name in readers:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        if cancelled:  # cancel() came while the child was being started
            self._kill_group()
            raise AgentCancelled(f"{self.label} was stopped", "was stopped")
        deadline = time.monotonic() + hello_timeout_s
        noise: list[str] = []
        while True:
            item = self._next(deadline)
            if item is None:
                self._fail(AgentTimeout(f"{self.label} did not start within {hello_timeout_s:g} s"))
            if item is _EOF:
                self._fail(self._gone("while starting", noise))
            if isinstance(item, ProtocolError) and len(noise) < MAX_NOISE_LINES:
                noise.append(str(item))
                continue
            if self._unsolicited(item):
                continue
            if isinstance(item, Hello):
                self._check_hello(item)
                self.hello = item
                return item
            self._fail(
                item
                if isinstance(item, ProtocolError)
                else ProtocolError(f"{self.label} sent {type(item).__name__} before its hello")
            )

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout_s: float,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        idle_timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """Send one request and wait for its answer (events go to ``on_event`` as they come).

        ``timeout_s`` bounds the whole wait; ``idle_timeout_s`` (a method that streams events
        while it waits, ``gpu.lock``) the wait for each next message.

        Raises AgentFailed when the child answered with an error (the child goes on serving), and
        any other AgentError when the child can no longer be used (it has been killed by then).
        """
        if self._broken is not None:
            raise self._broken
        if self._proc is None or self.hello is None:
            raise RuntimeError("start() the agent before sending requests")
        request_id = self._next_id
        self._next_id += 1
        self._send(Request(request_id, method, dict(params or {})))  # a child gone: reading says how
        deadline = time.monotonic() + timeout_s
        while True:
            quiet_until = deadline if idle_timeout_s is None else time.monotonic() + idle_timeout_s
            item = self._next(min(deadline, quiet_until))
            if item is None:
                if time.monotonic() < deadline and idle_timeout_s is not None:
                    self._fail(
                        AgentSilent(f"{self.label} went silent during {method} for {idle_timeout_s:g} s")
                    )
                self._fail(AgentTimeout(f"{self.label} did not answer {method} within {timeout_s:g} s"))
            if item is _EOF:
                self._fail(self._gone(f"during {method}"))
            if isinstance(item, ProtocolError):
                self._fail(item)
            if self._unsolicited(item):
                continue
            if isinstance(item, (AgentEvent, Result, Error)) and item.id == request_id:
                if isinstance(item, AgentEvent):
                    if on_event is not None:
                        on_event(item.data)
                    continue
                if isinstance(item, Result):
                    return item.data
                raise AgentFailed(item.message, item.kind)
            self._fail(ProtocolError(f"{self.label} sent an unexpected {_describe(item)} during {method}"))

    def cancel(self) -> None:
        """Kill the child's whole process group now (any thread); a waiting call raises AgentCancelled."""
        self._cancelled = True
        self._kill_group()

    def close(self, grace_s: float = 1.0) -> None:
        """Ask the child to finish (``bye``, then end of stdin), give it ``grace_s``, then kill its
        group and reap it. Safe to call more than once and after ``cancel``."""
        proc = self._proc
        self._closing.set()
        if proc is None:
            return
        if grace_s > 0 and not self._reaped:
            self._send(Bye(), wait_s=grace_s)
        # a write stuck in a full pipe (a stopped ssh) holds the lock: the kill below ends it
        if self._write_lock.acquire(timeout=max(grace_s, 0.1)):
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            finally:
                self._write_lock.release()
        self._wait_exited(grace_s)
        self._kill_group()  # what the child started dies with it
        with self._lock:
            if not self._reaped:
                proc.wait()
                self._reaped = True
        for thread in self._threads:
            thread.join(1.0)
        for stream in (proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def __enter__(self) -> AgentProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(grace_s=0 if exc[0] is not None else 1.0)

    # --- internals -------------------------------------------------------------------------
    def _send(self, message: Message, wait_s: float = -1) -> bool:
        """Write one whole line to the child's stdin; False when it cannot be written (the child
        is gone, or its stdin closed; or, with ``wait_s``, another write held the pipe that long)."""
        proc = self._proc
        if proc is None or proc.stdin is None or not self._write_lock.acquire(timeout=wait_s):
            return False
        try:
            proc.stdin.write(encode(message))
            proc.stdin.flush()
        except (OSError, ValueError):
            return False
        finally:
            self._write_lock.release()
        return True

    def _beat(self) -> None:
        """Say "still here" every ``beat_every_s`` until closed (or the child is gone)."""
        every = self.beat_every_s or BEAT_EVERY_S
        while not self._closing.is_set():
            if self._broken is not None or not self._send(Beat()):
                return
            self._closing.wait(every)

    def _check_hello(self, hello: Hello) -> None:
        if hello.package != PACKAGE:
            self._fail(AgentMismatch(f"{self.label} is {hello.package!r}, not {PACKAGE}"))
        if hello.protocol != PROTOCOL_VERSION or hello.version != __version__:
            self._fail(
                AgentMismatch(
                    f"{self.label} runs {PACKAGE} {hello.version} (protocol {hello.protocol}); this app "
                    f"is {__version__} (protocol {PROTOCOL_VERSION}): install the same version there "
                    f"({self.install_hint})"
                )
            )

    def _next(self, deadline: float) -> Any:
        """The next item from the reader (a Message, a ProtocolError or _EOF), None at the deadline."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                # In slices, so a signal handler on the main thread runs promptly on every platform.
                return self._inbox.get(timeout=min(remaining, _POLL_S))
            except queue.Empty:
                continue

    def _unsolicited(self, item: Any) -> bool:
        """Hand an event with id 0 to ``on_unsolicited``; True when ``item`` was one."""
        if not (isinstance(item, AgentEvent) and item.id == 0 and self.on_unsolicited is not None):
            return False
        try:
            self.on_unsolicited(item.data)
        except AgentError as exc:
            self._fail(exc)
        return True

    def _fail(self, error: AgentError) -> Any:
        """Kill the child and raise ``error`` now and on every later request."""
        self._broken = error
        self._kill_group()
        raise error

    def _gone(self, when: str, noise: Sequence[str] = ()) -> AgentGone:
        self._wait_exited(2.0)
        proc = self._proc
        code = proc.returncode if proc is not None and proc.returncode is not None else self._peek_exit()
        if self._cancelled:
            return AgentCancelled(f"{self.label} was stopped", "was stopped")
        how = describe_exit(code)
        said = self.stderr_last_line() or (noise[-1] if noise else "")
        return AgentGone(f"{self.label} {how} {when}" + (f": {said}" if said else ""), how)

    def _peek_exit(self) -> int | None:
        """The child's exit status without reaping it (so its pid, and group, stay ours)."""
        proc = self._proc
        if proc is None:
            return None
        if proc.returncode is not None:
            return proc.returncode
        if hasattr(os, "waitid"):
            try:
                info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return proc.poll()
            if info is None:
                return None
            if info.si_code == os.CLD_EXITED:
                return info.si_status
            return -info.si_status
        return proc.poll()

    def _wait_exited(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while True:
            if self._reaped or self._peek_exit() is not None:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def _kill_group(self) -> None:
        with self._lock:
            proc = self._proc
            if proc is None or self._reaped:
                return
            try:
                if os.name == "posix":
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            except (ProcessLookupError, PermissionError, OSError):
                pass

    def _read_stdout(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        stream: IO[bytes] = proc.stdout
        try:
            while True:
                line = stream.readline(MAX_LINE_BYTES + 1)
                if not line:
                    break
                if len(line) > MAX_LINE_BYTES:
                    self._inbox.put(
                        ProtocolError(f"{self.label} sent a line longer than {MAX_LINE_BYTES:,} bytes")
                    )
                    break
                try:
                    self._inbox.put(decode(line))
                except ProtocolError as exc:
                    self._inbox.put(ProtocolError(f"{self.label} sent {exc}"))
        except (OSError, ValueError):
            pass
        self._inbox.put(_EOF)

    def _read_stderr(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stderr is not None
        try:
            while True:
                chunk = proc.stderr.read1(65536) if hasattr(proc.stderr, "read1") else proc.stderr.read(65536)
                if not chunk:
                    return
                with self._stderr_lock:
                    self._stderr += chunk
                    if len(self._stderr) > STDERR_KEEP_BYTES:
                        del self._stderr[: len(self._stderr) - STDERR_KEEP_BYTES]
        except (OSError, ValueError):
            return


def _describe(message: Message) -> str:
    if isinstance(message, (AgentEvent, Result, Error)):
        return f"{type(message).__name__.lower()} for request {message.id}"
    return f"{type(message).__name__.lower()} message"


def local_agent(
    *, env_overrides: Mapping[str, str | None] | None = None, label: str = "the worker"
) -> AgentProcess:
    """A local agent, not yet started (register it where ``cancel`` can reach it, then ``start()``).
    ``env_overrides`` sets (or, with None, removes) environment variables for the child only, e.g.
    ``NUMBA_ENABLE_CUDASIM``, which numba reads once at import."""
    argv, env = local_agent_argv()
    for key, value in (env_overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return AgentProcess(argv, env=env, label=label)
