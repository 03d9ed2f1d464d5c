"""The GPU's line against a student who fills the queue folder, between two real local users (made
and removed by the test): 10,000 planted files (some with mtimes years ahead) never keep the other
user from the GPU and are named in the waiting line; a hard-killed run's place is passed at once,
removed by its owner's next run, and root's ``admin queue --clean`` removes ended places and
planted files (never a live place); a folder full to its inode limit gives one line naming who
fills it, and after the clean-up the victim gets the GPU."""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.remote.queueing import ROOT, QueueRun, local_users, need_root, python_for_all, shared_folder

pytest.importorskip("fcntl")

STALL_S = 3.0
KEY = "gpu-GPU-flood-test"
STEM = f"device-explorer-gpu.{KEY}"


@pytest.fixture
def two_users():
    suffix = os.getpid() % 100000
    with local_users(f"dxfa{suffix}", f"dxfb{suffix}") as names:
        yield names


def _admin(folder: Path, *more: str, user: str | None = None) -> subprocess.CompletedProcess:
    """``device-explorer admin queue --dir FOLDER ...`` as root (the test runs as root), or as ``user``."""
    return subprocess.run(
        [
            python_for_all() if user else sys.executable,
            "-m",
            "explorer",
            "admin",
            "queue",
            "--dir",
            str(folder),
            *more,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(ROOT),
            "HOME": "/nonexistent",
        },
        user=user,
        group=pwd.getpwnam(user).pw_gid if user else None,
        extra_groups=[] if user else None,
    )


def _tickets(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".ticket"))


@contextmanager
def _runs(*runs: QueueRun) -> Iterator[None]:
    try:
        yield
    finally:
        for run in runs:
            run.close()


@pytest.mark.slow
def test_ten_thousand_planted_files_are_named_and_the_victim_gets_the_gpu_once_it_is_free(two_users):
    alice_name, bob_name = two_users
    with shared_folder({"stall_s": STALL_S, "turn_s": 600}) as folder:
        alice = QueueRun(folder, KEY, "matmul", user=alice_name)
        bob = QueueRun(folder, KEY, "copy", user=bob_name)
        with _runs(alice, bob):
            alice.ask("take", "held")
            alice.ask("busy", "busy")
            bob_uid = bob.ready["uid"]
            # alice plants 10,000 files named like places (a tenth forged with bob's uid in the
            # name), half of them with an mtime ten years ahead (touch -d): none has a heartbeat
            plant = (
                "import time\n"
                "future = time.time() + 10 * 365 * 86400\n"
                "for i in range(10_000):\n"
                f"    uid = {bob_uid} if i % 10 == 0 else os.getuid()\n"
                f"    path = folder / f'{STEM}.{{uid}}.1.{{i}}.ticket'\n"
                "    open(path, 'w').close()\n"
                "    if i % 2:\n"
                "        os.utime(path, (future, future))\n"
            )
            alice.ask(f"try exec({plant!r})", "ok")
            assert len(_tickets(folder)) == 10_001
            bob.send("take")
            wait = bob.expect("wait", lambda d: d["holder"] == alice_name)
            assert wait["ahead"] == 1 and "you are next" in wait["message"], wait
            assert wait["message"].endswith(
                f"10000 tickets of user {alice_name} look dead and are ignored"
            ), wait
            alice.ask("idle", "idle")
            alice.ask("leave", "left")
            left = time.monotonic()
            held = bob.expect("held")  # as soon as alice's place is gone, whatever the flood
            assert held["waited"] > 0
            print(
                f"with 10,000 planted files, bob held the GPU {time.monotonic() - left:.2f} s after alice left"
            )
            # bob may not remove alice's files: told so, and who may
            tried = _admin(folder, "--clean", user=bob_name)
            assert tried.returncode == 1, tried.stderr
            assert (
                f"left 10000 files of other users ({alice_name} 10000): only root or the folder's owner (root) "
                "may remove them; run 'sudo device-explorer admin queue --clean'"
            ) in tried.stdout
            assert len(_tickets(folder)) == 10_001
            # root removes the flood (and nothing of bob's, whose run holds its place)
            cleaned = _admin(folder, "--clean", "--json")
            assert cleaned.returncode == 0, cleaned.stderr
            report = json.loads(cleaned.stdout)["cleaned"]
            assert report["planted"] == {alice_name: 10_000} and report["live"] == {bob_name: 1}
            assert len(_tickets(folder)) == 1 and f".{bob_uid}." in _tickets(folder)[0]


@pytest.mark.slow
def test_a_killed_run_is_passed_removed_by_its_owners_next_run_and_by_roots_clean_up(two_users):
    alice_name, bob_name = two_users
    with shared_folder({"stall_s": STALL_S, "turn_s": 600}) as folder:
        alice = QueueRun(folder, KEY, "matmul", user=alice_name)
        bob = QueueRun(folder, KEY, "copy", user=bob_name)
        again = None
        try:
            alice.ask("take", "held")
            alice.ask("busy", "busy")
            bob.send("take")
            bob.expect("wait", lambda d: d["holder"] == alice_name)
            alice_uid = alice.ready["uid"]
            (killed,) = [n for n in _tickets(folder) if f".{alice_uid}." in n]
            os.killpg(alice.proc.pid, signal.SIGKILL)  # no chance to leave the line
            bob.expect("held")
            assert killed in _tickets(folder)  # bob may not remove alice's files (sticky folder)
            # alice's next run removes her killed run's place, and waits behind bob
            again = QueueRun(folder, KEY, "matmul", user=alice_name)
            again.send("take")
            wait = again.expect("wait", lambda d: d["holder"] == bob_name)
            assert "you are next" in wait["message"]
            assert killed not in _tickets(folder) and len(_tickets(folder)) == 2
            # the admin's view of the line, then a clean-up that leaves both live places alone
            shown = _admin(folder)
            assert shown.returncode == 0, shown.stderr
            assert f"{KEY}: {bob_name} holds it; waiting: {alice_name}" in shown.stdout
            again.ask(f"try open(folder / '{STEM}.{alice_uid}.1.planted.ticket', 'w').close()", "ok")
            again.ask(f"try os.mkfifo(folder / '{STEM}.{alice_uid}.1.fifo.ticket')", "ok")
            cleaned = _admin(folder, "--clean")
            assert cleaned.returncode == 0, cleaned.stderr
            assert (
                f"removed 2 planted files, named like the queue's but written by no run ({alice_name} 2)"
                in cleaned.stdout
            )
            held_by = ", ".join(f"{name} 1" for name in sorted([alice_name, bob_name]))
            assert f"kept 2 live places, whose runs still hold them ({held_by})" in cleaned.stdout
            assert len(_tickets(folder)) == 2
            bob.ask("leave", "left")
            again.expect("held")
        finally:
            for run in (alice, bob, again):
                if run is not None:
                    run.close()


@contextmanager
def _small_tmpfs(inodes: int) -> Iterator[Path]:
    """A folder as the admin makes it (root's, 1777) on a tmpfs of ``inodes`` inodes."""
    need_root("mounting a small tmpfs")
    mount = Path(tempfile.mkdtemp(prefix="dx-full-", dir="/tmp"))
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size=4m,nr_inodes={inodes},mode=1777", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); the fast test covers the line")
        try:
            (mount / "device-explorer-gpu-queue.json").write_text(json.dumps({"stall_s": STALL_S}))
            yield mount
        finally:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)
    finally:
        os.rmdir(mount)


@pytest.mark.slow
def test_a_folder_full_to_its_inode_limit_names_who_fills_it_and_the_clean_up_frees_it(two_users):
    alice_name, bob_name = two_users
    with _small_tmpfs(64) as folder:
        alice = QueueRun(folder, KEY, "matmul", user=alice_name)
        bob = QueueRun(folder, KEY, "copy", user=bob_name)
        with _runs(alice, bob):
            fill = (
                "n = 0\n"
                "while True:\n"
                f"    open(folder / f'{STEM}.{{os.getuid()}}.1.{{n}}.ticket', 'w').close()\n"
                "    n += 1\n"
            )
            said = alice.ask(f"try exec({fill!r})", "raised")
            assert said["error"] == "OSError" and said["errno"] == 28, said  # ENOSPC: no inode left
            planted = len(_tickets(folder))
            refused = bob.ask("take", "refused")
            assert refused["message"].startswith(
                f"cannot take a place in the GPU queue in '{folder}' (No space left"
            )
            assert f"{planted} of its {planted + 1} files belong to {alice_name}" in refused["message"]
            assert "'sudo device-explorer admin queue --clean'" in refused["message"]
            cleaned = _admin(folder, "--clean", "--json")
            assert cleaned.returncode == 0, cleaned.stderr
            assert json.loads(cleaned.stdout)["cleaned"]["planted"] == {alice_name: planted}
            bob.ask("take", "held")
