"""The GPU's line between two real local users (made and removed by the test), in a folder made as
the README's admin section says: the second user waits, told who holds the GPU and where they
stand; cannot delete, replace, block or jump ahead of the first user's place; and takes the GPU
once the first user's run is suspended (SIGSTOP) for longer than the admin's bound."""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.remote.queueing import QueueRun, local_users, shared_folder

pytest.importorskip("fcntl")

STALL_S = 3.0
KEY = "gpu-GPU-test-users"


@pytest.fixture
def two_users():
    suffix = os.getpid() % 100000
    with local_users(f"dxqa{suffix}", f"dxqb{suffix}") as names:
        yield names


def _ticket_of(folder, uid):
    names = [n for n in os.listdir(folder) if n.endswith(".ticket") and f".{uid}." in n]
    assert len(names) == 1, names
    return names[0]


@contextmanager
def alice_holds_bob_waits(two_users) -> Iterator[tuple]:
    """In a folder made as the README says: alice's run holds the GPU and measures (her heartbeat
    renewed the whole time); bob's run has asked for it and waits. (folder, alice, bob, bob's wait)."""
    alice_name, _ = two_users
    with shared_folder({"stall_s": STALL_S, "turn_s": 600}) as folder:
        alice = QueueRun(folder, KEY, "matmul", user=alice_name)
        bob = QueueRun(folder, KEY, "copy", user=two_users[1])
        try:
            alice.ask("take", "held")
            alice.ask("busy", "busy")
            bob.send("take")
            yield folder, alice, bob, bob.expect("wait", lambda d: d["holder"] == alice_name)
        finally:
            for run in (alice, bob):
                try:
                    os.kill(run.proc.pid, signal.SIGCONT)
                except OSError:
                    pass
                run.close()


def test_a_second_user_waits_is_told_who_holds_it_and_cannot_break_the_line(two_users):
    alice_name, bob_name = two_users
    with alice_holds_bob_waits(two_users) as (folder, alice, bob, wait):
        assert wait["holder"] == alice_name and wait["ahead"] == 1
        assert wait["message"].startswith(f"waiting for cuda:0: {alice_name} has held it since ")
        assert (
            "(matmul, " in wait["message"]
            and wait["message"].endswith(")")
            and "you are next" in wait["message"]
        )

        ticket = _ticket_of(folder, alice.ready["uid"])
        assert (folder / ticket).stat().st_mode & 0o777 == 0o644  # readable, no one else may write
        # bob, as bob: every way of breaking alice's place fails or changes nothing
        attacks = {
            "delete": f"os.unlink(folder / {ticket!r})",
            "replace": f"open(folder / 'mine', 'w').close(); os.rename(folder / 'mine', folder / {ticket!r})",
            "write": f"open(folder / {ticket!r}, 'w')",
            "lock the folder out": "os.chmod(folder, 0o700)",
        }
        for what, code in attacks.items():
            said = bob.ask(f"try {code}", "raised")
            assert said["errno"] in (errno.EPERM, errno.EACCES), (what, said)
        # planted files where a place could be: a FIFO, a link to alice's ticket, a place with no
        # heartbeat (locked, so it looks alive), a place claiming to be alice's; a lock on the folder
        stem = f"device-explorer-gpu.{KEY}"
        bob_uid, alice_uid = bob.ready["uid"], alice.ready["uid"]
        plants = [
            f"os.mkfifo(folder / '{stem}.{bob_uid}.1.fifo.ticket')",
            f"os.symlink(folder / {ticket!r}, folder / '{stem}.{bob_uid}.1.link.ticket')",
            f"fd = os.open(folder / '{stem}.{bob_uid}.1.nobeat.ticket', os.O_CREAT | os.O_RDWR, 0o644); "
            "__import__('fcntl').flock(fd, 2)",
            f"open(folder / '{stem}.{alice_uid}.1.forged.ticket', 'w').write('{{}}')",
            "fd = os.open(folder, os.O_RDONLY); __import__('fcntl').flock(fd, 2)",
        ]
        for code in plants:
            bob.ask(f"try {code}", "ok")
        # bob's own run still waits behind alice (no plant jumped it ahead or hung it) ...
        wait = bob.expect("wait", lambda d: d["holder"] == alice_name)
        assert wait["ahead"] == 1
        # ... and gets the GPU as soon as alice's run leaves the line
        alice.ask("idle", "idle")
        alice.ask("leave", "left")
        held = bob.expect("held")
        assert held["waited"] > 0
        # alice comes back: now she waits behind bob, told so
        alice.send("take")
        wait = alice.expect("wait")
        assert wait["holder"] == bob_name and "you are next" in wait["message"]


def test_a_suspended_holder_loses_the_gpu_within_the_admins_bound(two_users):
    alice_name, bob_name = two_users
    with alice_holds_bob_waits(two_users) as (folder, alice, bob, wait):
        assert not wait["stalled"]
        os.kill(alice.proc.pid, signal.SIGSTOP)  # Ctrl-Z, or a debugger, on the holder
        stalled = bob.expect("wait", lambda d: d["stalled"])
        assert (
            "has not made progress for" in stalled["message"]
            and "loses the GPU after 3 s" in stalled["message"]
        )
        held = bob.expect("held")
        print(
            f"with alice suspended, bob took the GPU after waiting {held['waited']:.1f} s in all (bound {STALL_S:g} s)"
        )
        # bob waited for alice's bound (3 s since her last beat) and a look or two, not for her run
        assert held["waited"] < STALL_S + 15, held
        os.kill(alice.proc.pid, signal.SIGCONT)
        # alice's measurement ends: it knows it was stopped past the bound (its point is marked)
        idle = alice.ask("idle", "idle")
        assert idle["lapse"] > STALL_S
        # and her next point waits behind bob instead of measuring beside him
        alice.send("take")
        wait = alice.expect("wait")
        assert wait["holder"] == bob_name
