"""Saving measured ceilings is a read-modify-write under a lock beside the file: concurrent
measurements of different devices, in separate processes, all stay; a lock held past the deadline
is one line naming the process that holds it, and the stored ceilings are left as they were."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.roofs import store
from explorer.roofs.store import MeasuredRoof

pytest.importorskip("fcntl")
ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 8
SAVES = 25
#: a bound on the whole run of the writers (a loaded CI machine); they end on their own first
WITHIN_S = 300

WRITER = """
import sys, time
from pathlib import Path
from explorer.roofs import store
from explorer.roofs.store import MeasuredRoof
device, go = sys.argv[1], Path(sys.argv[2])
while not go.exists():  # all writers start their saves together
    time.sleep(0.005)
for n in range(int(sys.argv[3])):
    store.save(MeasuredRoof(device, "fp|lock-test", 1000.0 + n, took_s=float(n)))
print("saved", device, flush=True)
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    store.take_notice()
    return tmp_path / "home"


@pytest.mark.slow
def test_concurrent_saves_of_different_devices_all_stay(home, tmp_path):
    go = tmp_path / "go"
    env = {**os.environ, "DEVICE_EXPLORER_HOME": str(home), "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"cuda:{i}", str(go), str(SAVES)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(PROCESSES)
    ]
    go.touch()
    for i, writer in enumerate(writers):
        out, err = writer.communicate(timeout=WITHIN_S)
        assert writer.returncode == 0 and out == f"saved cuda:{i}\n", err[-2000:]
    roofs = store.read_all()
    assert store.take_notice() == ""  # never a half-written file moved aside
    assert sorted(roofs) == sorted(f"cuda:{i}" for i in range(PROCESSES))
    assert {roof.measured_at for roof in roofs.values()} == {1000.0 + SAVES - 1}  # each one's last


def test_a_lock_held_past_the_deadline_is_one_line_and_the_store_is_left_as_it_was(home, monkeypatch):
    store.save(MeasuredRoof("cpu", "fp|lock-test", 1000.0))
    monkeypatch.setattr(store, "LOCK_WAIT_S", 0.2)
    with store.store_lock(store.store_path()):  # another open file: its lock conflicts like a process's
        with pytest.raises(OSError) as info:
            store.save(MeasuredRoof("cuda:0", "fp|lock-test", 2000.0))
    assert isinstance(info.value, TimeoutError)
    assert info.value.strerror == f"another process (pid {os.getpid()}) kept it locked for over 0.2 s"
    assert sorted(store.read_all()) == ["cpu"]
    assert store.save(MeasuredRoof("cuda:0", "fp|lock-test", 2000.0)).replaced  # free again: saved
    assert sorted(store.read_all()) == ["cpu", "cuda:0"]
    assert store.lock_path(store.store_path()).name == ".measured-ceilings.json.lock"
