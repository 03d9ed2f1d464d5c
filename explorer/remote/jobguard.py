"""The launcher guard: the process on a cluster's login node between ssh and ``srun``.

Why: ``srun`` waiting in the queue reads nothing and writes nothing, so when the client went away
(Ctrl-C, Stop, giving up, the window closed, the laptop crashed or lost its network) nothing told
it: the job stayed pending, ran later for nobody, and its ``srun`` lived on with no parent. And
while it waited, the student saw nothing of Slurm's own reason. So a remote with a launcher is
started as ``PYTHON -m explorer launcher-guard --job-name NAME -- srun ... PYTHON -m explorer agent``:

* it first says it is there (an event ``{"guard": {"job_name": NAME}}`` before anything else: a
  parent that asked for a launcher and gets an agent's hello without it knows the account ran
  something else, an sshd ``ForceCommand``), then runs the launcher with the job named ``NAME``
  (unique per connection) and passes the pipe through untouched, line by line;
* until the agent says hello, it reads the job's state and reason with ``squeue`` every
  ``POLL_S`` and sends each change to the client as an event that answers no request
  (``{"type": "event", "id": 0, "data": {"launcher": {...}}}``, ``explorer.remote.slurm.JobState``);
* when its stdin ends before the agent started (the client is gone), when the client, which
  beats every few seconds, has been silent for ``heartbeat_s`` (a frozen laptop, a dead link:
  the admin's policy, 20 s by default), or it is told to stop (SIGTERM, SIGHUP, SIGINT), it
  cancels the job (``scancel``), stops ``srun`` and waits for it;
  after the hello, the end of stdin reaches the agent, which exits, and the job ends with it (the
  guard cancels it anyway if ``srun`` has not returned within ``AGENT_EXIT_S``);
* when ``srun`` returns, it reads how the job ended (``scontrol show job``) and sends that last,
  so the client can say "reached its time limit" instead of "the connection dropped".

It cancels only its own job: by the id once it is known (``srun``'s "job N queued", or ``squeue``),
before that by the unique name it chose. When the launcher names the job itself (``-J NAME``:
another run, or the user's own jobs, may carry that name too) the guard never cancels by name:
it finds its job among those of that name by the session ``srun`` leads (Slurm's ``AllocSID``),
and otherwise stops ``srun``, which revokes a pending allocation itself.

``srun`` is started to receive SIGTERM if the guard itself dies (Linux), which makes it revoke a
pending allocation. Stdlib only besides this package's protocol encoder.
"""

from __future__ import annotations

import contextlib
import ctypes
import getpass
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from explorer.agent.protocol import MAX_LINE_BYTES, AgentEvent, encode
from explorer.agent.serve import GUARD_ENV
from explorer.remote.slurm import ACTIVE, JobState, parse_scontrol, parse_squeue
from explorer.schema import SchemaError, loads

#: how often the job's state is read while it waits (the client shows a change within about this)
POLL_S = 1.0
#: after the client left a running agent: how long the agent has to end before the job is cancelled
AGENT_EXIT_S = 10.0
#: how long ``srun`` has to return after being told to stop, before it is killed
STOP_S = 10.0
#: how long a Slurm command may take before it is given up on (a busy controller)
TOOL_TIMEOUT_S = 15.0
#: the client's silence after which it is taken for gone, without the admin's ``heartbeat_s``
HEARTBEAT_S = 20.0
#: what the guard says on stderr when the client's beats stop (the tests wait for it)
SILENT_WORDS = "device-explorer launcher-guard: no word from the app for {s:g} s (its heartbeat stopped)"
_PR_SET_PDEATHSIG = 1


def job_name_in(argv: Sequence[str]) -> str | None:
    """The job name the launcher's own options give (``-J NAME``, ``--job-name=NAME``), if any."""
    for i, arg in enumerate(argv):
        if arg in ("-J", "--job-name") and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--job-name="):
            return arg.split("=", 1)[1]
        if arg.startswith("-J") and len(arg) > 2:
            return arg[2:]
    return None


def launcher_env(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """The environment the launcher runs with (``env VAR=value ... srun``'s assignments over this
    one) and the launcher's argv without them: the Slurm tools the guard runs need the same
    (``SLURM_CONF``, ``PATH``)."""
    env = dict(os.environ)
    rest = list(argv)
    if rest and (rest[0] == "env" or rest[0].endswith("/env")):
        rest = rest[1:]
        while rest and "=" in rest[0] and not rest[0].startswith("-"):
            name, _, value = rest.pop(0).partition("=")
            env[name] = value
    return env, rest


def _tool(name: str, launcher: str, env: dict[str, str]) -> str:
    """``squeue``/``scancel``/``scontrol`` beside the launcher when it was named by path."""
    if "/" in launcher:
        beside = Path(launcher).parent / name
        if beside.exists():
            return str(beside)
    return shutil.which(name, path=env.get("PATH")) or name


def _die_with_parent() -> None:
    """In the launcher's child, before exec: SIGTERM when the guard dies (srun then revokes)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass


class Guard:
    """One launcher run, watched. ``run()`` returns the launcher's exit status."""

    def __init__(
        self,
        argv: Sequence[str],
        job_name: str,
        *,
        poll_s: float = POLL_S,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self.argv = list(argv)
        self.env, bare = launcher_env(argv)
        self.launcher = bare[0] if bare else "srun"
        named = job_name_in(bare)
        self.own_name = job_name  # the unique name this guard chose
        self.job_name = named or job_name
        #: the job's name is the guard's own: a job of that name is this guard's and no other's
        self.name_is_unique = named is None or named == job_name
        self.heartbeat_s = heartbeat_s
        self.heard_at = time.monotonic()
        self.beats = threading.Event()  # the client has said something: its silence counts from now
        self.user = getpass.getuser()
        self.poll_s = poll_s
        self.job: str | None = None
        self.last: JobState | None = None
        self.started = threading.Event()  # the agent said hello
        self.leave = threading.Event()  # the client is gone
        self.told_to_stop = False  # SIGTERM, SIGHUP or SIGINT (set by the handler, read by the loop)
        self.stderr_tail = bytearray()
        self._out_lock = threading.Lock()
        self._out: IO[bytes] = os.fdopen(os.dup(1), "wb", buffering=0)
        self.proc: subprocess.Popen[bytes] | None = None

    # --- talking to the client --------------------------------------------------------------
    def send(self, state: JobState) -> None:
        self._write(encode(AgentEvent(0, state.to_event())))

    def _write(self, data: bytes) -> None:
        with self._out_lock:
            try:
                self._out.write(data)
            except (OSError, ValueError):
                self.leave.set()  # nobody reads any more: the client is gone

    # --- Slurm ------------------------------------------------------------------------------
    def _run_tool(self, argv: list[str]) -> str:
        try:
            done = subprocess.run(
                argv,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=TOOL_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout

    def read_state(self) -> JobState | None:
        squeue = _tool("squeue", self.launcher, self.env)
        if not self.job and not self.name_is_unique:
            self.job = self.find_own_job()
            if not self.job:
                return None
        argv = [squeue, "-h", "-o", "%i|%T|%r|%l|%P", "--user", self.user, "--name", self.job_name]
        if self.job:
            argv = [squeue, "-h", "-o", "%i|%T|%r|%l|%P", "--jobs", self.job]
        for line in self._run_tool(argv).splitlines():
            state = parse_squeue(line)
            if state is not None:
                self.job = state.job
                return state
        return None

    def find_own_job(self) -> str | None:
        """This guard's job among the user's jobs named ``job_name`` (a name the launcher gave,
        which others may share): the one whose allocating session is the one ``srun`` leads."""
        proc = self.proc
        if proc is None:
            return None
        squeue = _tool("squeue", self.launcher, self.env)
        out = self._run_tool(
            [squeue, "-h", "-O", "JobID,AllocSID", "--user", self.user, "--name", self.job_name]
        )
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0].isdigit() and parts[1] == str(proc.pid):
                return parts[0]
        return None

    def read_end(self) -> JobState | None:
        """How the job ended, once Slurm has recorded it (a few seconds at most)."""
        if not self.job:
            return None
        scontrol = _tool("scontrol", self.launcher, self.env)
        deadline = time.monotonic() + 5.0
        while True:
            state = parse_scontrol(self._run_tool([scontrol, "show", "job", "-o", self.job]))
            if state is None or state.state not in ACTIVE or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        if (state is None or state.state in ACTIVE) and b"DUE TO TIME LIMIT" in self.stderr_tail:
            limit = state.time_limit if state is not None else ""
            return JobState(self.job, "TIMEOUT", "TimeLimit", limit, final=True)
        return state

    def cancel(self) -> None:
        """Cancel the job (pending or running) and stop the launcher; wait for it to return."""
        scancel = _tool("scancel", self.launcher, self.env)
        if not self.job and not self.name_is_unique:
            self.job = self.find_own_job()
        if self.job:
            self._run_tool([scancel, self.job])
        elif self.name_is_unique:
            self._run_tool([scancel, "--user", self.user, "--name", self.job_name])
        # else: a name others may share is never cancelled by; srun revokes its own allocation
        proc = self.proc
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.send_signal(signal.SIGTERM)  # srun revokes a pending allocation itself, too
        try:
            proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait()

    # --- the pipes ----------------------------------------------------------------------------
    def _pump_in(self) -> None:
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        stdin = sys.stdin.buffer
        try:
            while True:
                chunk = stdin.read1(65536) if hasattr(stdin, "read1") else stdin.read(65536)
                if not chunk:
                    break
                self.heard_at = time.monotonic()
                self.beats.set()
                proc.stdin.write(chunk)
                proc.stdin.flush()
        except (OSError, ValueError):
            pass
        with contextlib.suppress(OSError):
            proc.stdin.close()
        self.leave.set()

    def _pump_out(self) -> None:
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        for line in iter(proc.stdout.readline, b""):
            if not self.started.is_set() and line.lstrip().startswith(b"{"):
                try:
                    if loads(line, max_bytes=MAX_LINE_BYTES, allow_nan=True).get("type") == "hello":
                        self.started.set()
                except (SchemaError, AttributeError):
                    pass
            self._write(line)

    def _pump_err(self) -> None:
        proc = self.proc
        assert proc is not None and proc.stderr is not None
        err = sys.stderr.buffer
        for chunk in iter(lambda: os.read(proc.stderr.fileno(), 65536), b""):  # type: ignore[union-attr]
            self.stderr_tail += chunk
            del self.stderr_tail[:-65536]
            queued = re.findall(rb"srun: job (\d+) queued", chunk)
            if queued and not self.job:
                self.job = queued[-1].decode()
            with contextlib.suppress(OSError, ValueError):
                err.write(chunk)
                err.flush()

    # --- the whole run ----------------------------------------------------------------------
    def run(self) -> int:
        def stop(*_: object) -> None:
            self.told_to_stop = True

        for name in ("SIGTERM", "SIGHUP", "SIGINT"):
            signal.signal(getattr(signal, name), stop)
        self._write(
            encode(AgentEvent(0, {"guard": {"job_name": self.own_name, "heartbeat_s": self.heartbeat_s}}))
        )
        child_env = dict(os.environ)
        child_env["SLURM_JOB_NAME"] = self.job_name  # srun's -J, unless the launcher names one
        child_env[GUARD_ENV] = self.own_name  # the agent's hello says a guard started it
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=child_env,
                # srun leads a session of its own: Slurm records it (AllocSID), which tells this
                # guard's job from others of a name the launcher gave
                start_new_session=True,
                preexec_fn=_die_with_parent,  # before any thread of ours starts
            )
        except OSError as exc:
            print(
                f"device-explorer launcher-guard: cannot run {self.argv[0]}: {exc.strerror}", file=sys.stderr
            )
            return 127
        pumps = [
            threading.Thread(target=target, name=name, daemon=True)
            for target, name in ((self._pump_in, "in"), (self._pump_out, "out"), (self._pump_err, "err"))
        ]
        for pump in pumps:
            pump.start()
        proc = self.proc
        while proc.poll() is None:
            if self.told_to_stop:
                self.cancel()
                break
            if self.beats.is_set() and time.monotonic() - self.heard_at > self.heartbeat_s:
                print(SILENT_WORDS.format(s=self.heartbeat_s), file=sys.stderr, flush=True)
                self.cancel()
                break
            if self.leave.is_set():
                if self.started.is_set():  # the agent sees its stdin end and exits; the job with it
                    try:
                        proc.wait(AGENT_EXIT_S)
                    except subprocess.TimeoutExpired:
                        self.cancel()
                else:
                    self.cancel()
                break
            if not self.started.is_set() or self.job is None:
                state = self.read_state()
                if state is not None and not self.started.is_set() and state != self.last:
                    self.last = state
                    self.send(state)
            self.leave.wait(min(self.poll_s if not self.started.is_set() else 1.0, self.heartbeat_s / 10))
        code = proc.wait()
        pumps[1].join(5.0)  # everything the agent said reaches the client before the job's end
        pumps[2].join(5.0)
        end = self.read_end()
        if end is not None and end.final:
            self.send(end)
        return code if code >= 0 else 128 - code


def run_launcher_guard(args: object) -> int:
    """The hidden ``launcher-guard`` sub-command: ``--job-name NAME -- LAUNCHER ARGS...``."""
    argv = list(getattr(args, "launcher", []) or [])
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("device-explorer launcher-guard: no launcher to run", file=sys.stderr)
        return 2
    name = getattr(args, "job_name", None) or f"device-explorer-{os.getpid()}"
    beat = getattr(args, "heartbeat_s", None)
    code = Guard(argv, name, heartbeat_s=beat if isinstance(beat, float) and beat > 0 else HEARTBEAT_S).run()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)  # the stdin pump may still sit in a read: end without waiting for it
