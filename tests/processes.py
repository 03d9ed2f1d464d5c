"""What the child-process tests ask of the OS: has this process ended (within a moment)? what
is left of a process group? and the waiting and killing every such test does the same way."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

import psutil
import pytest

#: the outer deadline for a child process to end once it has been told to (a signal, the end of
#: its input): generous, since a shared machine under load, or a fresh venv compiling its first
#: imports, can take minutes; a child that ends sooner is seen at once
CHILD_EXIT_S = 600.0


def alive(pid: int) -> bool:
    """``pid`` exists and has not exited: a zombie (exited, waiting for its parent to read its
    status) counts as ended, and so does a process that vanishes while it is being looked at."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone(pid: int, within_s: float = CHILD_EXIT_S) -> bool:
    """True once ``pid`` has exited (``alive`` is false) within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def wait_until(ready: Callable[[], bool], proc: subprocess.Popen | None, within_s: float, what: str) -> None:
    """Poll ``ready()`` until it holds; fail the test if ``proc`` (when given) exits first or
    ``within_s`` passes."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if ready():
            return
        if proc is not None and proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            err = proc.stderr.read() if proc.stderr else ""
            pytest.fail(f"the process exited ({proc.returncode}) before {what}: {out}{err}")
        time.sleep(0.05)
    pytest.fail(f"{what} did not happen within {within_s:g} s")


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the session ``proc`` leads (started with ``start_new_session``) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    found = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p.pid)
        except (OSError, psutil.Error):
            pass
    return found
