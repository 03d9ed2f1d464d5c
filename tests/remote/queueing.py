"""Drive runs in a GPU's line (``queue_run.py``) from a test, waiting on their own lines, and make
the folder, the admin's policy and real local users the line is shared between."""

from __future__ import annotations

import json
import os
import pwd
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from explorer.gpuqueue.tickets import POLICY_FILE

SCRIPT = Path(__file__).with_name("queue_run.py")
ROOT = Path(__file__).resolve().parents[2]
#: a bound on any one wait for a child's line (a loaded CI machine); the waits end on the line
LINE_WITHIN_S = 60.0


def python_for_all() -> str:
    """A Python every local user may run: this one when no folder on its path is private (a venv
    made from a Python under /root is not), else the system's. The line needs only the standard
    library and this checkout (on PYTHONPATH)."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        path = Path(candidate).resolve()
        if path.exists() and all(p.stat().st_mode & 0o001 for p in [path, *path.parents]):
            return candidate
    pytest.skip(f"no Python here that every user may run ({sys.executable} is under a private folder)")


class QueueRun:
    """One ``queue_run.py`` child: ``send`` a command, ``expect`` the line it answers with."""

    def __init__(self, folder: Path, key: str, workload: str, *, user: str | None = None) -> None:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(ROOT),
            "HOME": "/nonexistent",
        }
        python = python_for_all() if user else sys.executable
        self.proc = subprocess.Popen(
            [python, "-B", str(SCRIPT), str(folder), key, workload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd="/",
            user=user,
            group=pwd.getpwnam(user).pw_gid if user else None,
            extra_groups=[] if user else None,
            start_new_session=True,
        )
        self.lines: queue.Queue[dict] = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.ready = self.expect("ready")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put({"event": "exited"})

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def expect(self, event: str, where: Callable[[dict], bool] = lambda d: True) -> dict:
        """The next line with ``event`` (and ``where``), skipping others; fails when the child exits
        or says nothing of the kind within ``LINE_WITHIN_S``."""
        deadline = time.monotonic() + LINE_WITHIN_S
        while True:
            try:
                data = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no {event!r} line within {LINE_WITHIN_S:g} s; saw {self.seen[-3:]}")
            self.seen.append(data)
            if data["event"] == "exited":
                err = self.proc.stderr.read() if self.proc.stderr else ""
                pytest.fail(f"the run exited before its {event!r} line: {err[-2000:]}")
            if data["event"] == event and where(data):
                return data

    def ask(self, command: str, event: str) -> dict:
        self.send(command)
        return self.expect(event)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
        self.proc.wait(30)


@contextmanager
def shared_folder(policy: dict | None = None) -> Iterator[Path]:
    """A folder as the README has the admin make it (root's, mode 1777), somewhere every user can
    reach, with the admin's policy file in it when given; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="dx-queue-", dir="/tmp"))
    try:
        folder.chmod(0o1777)
        if policy is not None:
            path = folder / POLICY_FILE
            path.write_text(json.dumps(policy))
            path.chmod(0o644)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def need_root(why: str) -> None:
    if os.geteuid() != 0:
        pytest.skip(f"{why} needs root (as CI runs the tests)")


@contextmanager
def local_users(*names: str) -> Iterator[list[str]]:
    """Real local users, made for the test (no home, no login shell) and removed after it."""
    need_root("making real local users")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("useradd/userdel are not installed (the passwd package)")
    made = []
    try:
        for name in names:
            try:
                pwd.getpwnam(name)
                subprocess.run(["userdel", name], check=False, capture_output=True)
            except KeyError:
                pass
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                check=True,
                capture_output=True,
            )
            made.append(name)
        yield made
    finally:
        for name in made:
            subprocess.run(["userdel", name], check=False, capture_output=True)


def user_name() -> str:
    return pwd.getpwuid(os.getuid()).pw_name
