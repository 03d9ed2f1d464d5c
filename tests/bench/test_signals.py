"""Signals to ``device-explorer bench``: the worker never outlives the command, what finished is kept.

Each test starts the real command in a session of its own (so signalling its group reaches nothing
else), waits until the first point is printed and the worker is stuck in the hanging one, sends the
signal, and checks the exit status, that no process of the run survives, what reached --csv and
what was said on stderr.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

from explorer.bench.wl_selftest import HANG_MARK_ENV
from tests.processes import CHILD_EXIT_S, gone, kill_group, wait_until

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="POSIX signals and process groups"),
    pytest.mark.slow,  # every test runs the bench command and its worker
]


class BenchCommand:
    """``device-explorer bench _hang_test --sizes 1 2 3``: size 1 finishes, size 2 never does."""

    def __init__(self, tmp_path: Path, *extra: str, prefix: tuple[str, ...] = ()) -> None:
        self.csv = tmp_path / "points.csv"
        self.hanging = tmp_path / "hanging"
        env = dict(os.environ)
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        env[HANG_MARK_ENV] = str(self.hanging)
        self.proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "explorer", "bench", "_hang_test", "--sizes", "1", "2", "3"]
            + ["--csv", str(self.csv), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_for_hang(self) -> int:
        """The worker's pid, once the first point is out and the worker is inside the second."""
        first = lambda: any("size=1" in ln or '"size": 1' in ln for ln in self.lines)  # noqa: E731
        wait_until(first, self.proc, 90, "the first point came")
        wait_until(self.hanging.exists, self.proc, 90, "the worker hung in the size-2 point")
        children = psutil.Process(self.proc.pid).children(recursive=True)
        assert len(children) == 1, children
        return children[0].pid

    def finish(self, timeout_s: float = CHILD_EXIT_S) -> tuple[int, str]:
        code = self.proc.wait(timeout_s)
        self._reader.join(5)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()

    def kill(self) -> None:
        kill_group(self.proc)


@pytest.fixture
def bench(tmp_path):
    started: list[BenchCommand] = []

    def start(*extra: str, prefix: tuple[str, ...] = ()) -> BenchCommand:
        command = BenchCommand(tmp_path, *extra, prefix=prefix)
        started.append(command)
        return command

    yield start
    for command in started:
        command.kill()


def _csv_sizes(path: Path) -> list[str]:
    with open(path, newline="") as fh:
        return [row["size"] for row in csv.DictReader(fh)]


@pytest.mark.parametrize(
    "signum,status,said",
    [
        (signal.SIGTERM, 143, "interrupted by SIGTERM"),
        (signal.SIGHUP, 129, "interrupted by SIGHUP"),
    ],
)
def test_sigterm_and_sighup_stop_the_worker_and_keep_what_finished(bench, signum, status, said):
    command = bench()
    worker = command.wait_for_hang()
    command.proc.send_signal(signum)
    code, stderr = command.finish()  # the point hangs for good: ending at all means it was stopped
    assert code == status
    assert gone(worker), "the benchmark worker outlived the command"
    assert stderr.strip().splitlines() == [
        f"{said}: 1 of 3 points finished; wrote 1 point to {command.csv}; "
        f"the same command with --resume {command.csv} measures the 2 left"
    ]
    assert _csv_sizes(command.csv) == ["1"]


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_to_the_group_prints_one_line_writes_what_finished_and_exits_130(bench, as_json):
    """A terminal's Ctrl-C reaches every process of its foreground group: here, all of ours."""
    command = bench(*(["--json"] if as_json else []))
    worker = command.wait_for_hang()
    os.killpg(command.proc.pid, signal.SIGINT)
    code, stderr = command.finish()
    assert code == 130
    assert gone(worker)
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines() == [
        f"interrupted: 1 of 3 points finished; wrote 1 point to {command.csv}; "
        f"the same command with --resume {command.csv} measures the 2 left"
    ]
    assert _csv_sizes(command.csv) == ["1"]
    if as_json:
        import json

        assert [json.loads(ln)["size"] for ln in command.lines] == [1]


def test_a_command_under_nohup_outlives_a_hangup_and_still_stops_for_sigterm(bench):
    """``nohup device-explorer bench ...`` over ssh: nohup ignores SIGHUP so that closing the
    session does not end the run, and the command must keep it ignored. Both signals are sent
    at once: a SIGHUP it heard would end it with 129 and leave the SIGTERM ignored."""
    nohup = shutil.which("nohup")
    if nohup is None:
        pytest.skip("no nohup on this machine")
    command = bench(prefix=(nohup,))
    worker = command.wait_for_hang()
    command.proc.send_signal(signal.SIGHUP)
    command.proc.send_signal(signal.SIGTERM)
    code, stderr = command.finish()
    assert code == 143, stderr
    assert gone(worker)
    assert stderr.strip().splitlines()[-1].startswith("interrupted by SIGTERM: 1 of 3 points finished")


def test_sigkill_of_the_command_takes_the_worker_with_it(bench):
    """Nothing runs in the parent after SIGKILL: the worker must go by itself (parent-death
    signal, end of its stdin), not be re-parented to PID 1 and compute on."""
    command = bench()
    worker = command.wait_for_hang()
    command.proc.send_signal(signal.SIGKILL)
    assert command.proc.wait(CHILD_EXIT_S) == -signal.SIGKILL
    assert gone(worker), "the benchmark worker outlived a killed command"
