"""Files the user asked for: ``bench --csv`` and the panel's CSV / JSON exports.

The path is checked before any work (one line, exit 2, no folder made), the write is all or
nothing (a full disk keeps the old file, no temporary file is left), and two runs writing the
same file never interleave: the second is refused at once, naming the first one's process.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time

import pytest

from explorer import atomicwrite
from explorer.bench import runner
from explorer.bench.export import export_csv, export_json
from explorer.bench.results import BenchPoint, read_csv, read_json
from explorer.cli import main
from explorer.errors import UserError
from explorer.outputs import lock_path_for, output_lock

POINT = BenchPoint(workload="matmul", variant="cpu", device="cpu", size=64, size_label="n=64", median_s=0.001)


@pytest.fixture
def no_run(monkeypatch):
    """Any attempt to start a benchmark fails the test: the path must be refused before."""

    def refuse(*args, **kwargs):
        raise AssertionError("the benchmark ran although --csv could not be written")

    # the run's events, not the class: a command imported while the class was replaced kept the
    # refusing stand-in for every later test (the run is planned at parse time, started later)
    monkeypatch.setattr(runner.BenchRun, "events", refuse)


def _bad_paths(tmp_path):
    cases = {
        "missing folder": ("/nonexistent/dir/x.csv", "the folder '/nonexistent/dir' does not exist"),
        "unknown user": ("~nosuchuser/x.csv", "there is no user 'nosuchuser'"),
        "a folder": (str(tmp_path), "it is a folder"),
        "a device": ("/dev/null", "a device or a pipe, not a file"),
    }
    if sys.platform.startswith("linux"):
        cases["unwritable place"] = ("/proc/x.csv", "no file can be made in /proc")
    return cases


@pytest.mark.parametrize(
    "case", ["missing folder", "unknown user", "a folder", "a device", "unwritable place"]
)
def test_a_bad_csv_path_is_refused_in_one_line_before_the_run(case, tmp_path, monkeypatch, capsys, no_run):
    cases = _bad_paths(tmp_path)
    if case not in cases:
        pytest.skip("Linux /proc")
    path, reason = cases[case]
    monkeypatch.chdir(tmp_path)
    before = sorted(os.listdir(tmp_path))
    assert main(["bench", "matmul", "--sizes", "16", "--csv", path]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert reason in err
    assert sorted(os.listdir(tmp_path)) == before  # no folder made, not even a literal '~nosuchuser'
    assert not os.path.exists("/nonexistent")


@pytest.mark.slow
def test_tilde_is_expanded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path / "..")
    assert main(["bench", "matmul", "--sizes", "16", "--repeats", "2", "--csv", "~/r.csv"]) == 0
    assert [p.size for p in read_csv(tmp_path / "r.csv")] == [16]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv"]  # and no lock or .tmp left
    assert f"to {tmp_path / 'r.csv'}" in capsys.readouterr().err


@pytest.mark.slow
def test_two_runs_on_one_csv_the_second_is_refused_naming_the_first(tmp_path):
    out = tmp_path / "same.csv"
    argv = [sys.executable, "-m", "explorer", "bench", "matmul", "--repeats", "3", "--csv", str(out)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    first = subprocess.Popen(
        [*argv, "--sizes", "16", "32", "64", "128"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lock = lock_path_for(out)
        deadline = time.monotonic() + 120
        while not (lock.exists() and lock.read_text().strip()) and first.poll() is None:
            assert time.monotonic() < deadline, "the first run never took the lock"
            time.sleep(0.05)
        assert first.poll() is None, "the first run ended before the second could start"
        second = subprocess.run([*argv, "--sizes", "8"], capture_output=True, text=True, env=env, timeout=120)
        first_out, first_err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert second.returncode == 2
    assert second.stderr.strip() == (
        f"device-explorer: error: {out} is being written by another device-explorer run "
        f"(process {first.pid}); wait for it to finish or choose another file"
    )
    assert "point(s)" not in second.stdout  # refused before measuring anything
    assert first.returncode == 0, first_err
    assert [p.size for p in read_csv(out)] == [16, 32, 64, 128]  # nothing lost, nothing interleaved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["same.csv"]


def test_a_lock_left_by_a_killed_run_does_not_block(tmp_path):
    out = tmp_path / "r.csv"
    lock_path_for(out).write_text("999999")  # the file a SIGKILLed run leaves; its flock died with it
    with output_lock(out) as held:
        assert held == out
    assert not lock_path_for(out).exists()


@pytest.mark.slow
def test_the_lock_is_reentrant_within_a_process_and_exclusive_across(tmp_path):
    out = tmp_path / "r.csv"
    with output_lock(out):
        export_csv([POINT], out)  # the CLI holds the lock for the run, then writes under it
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                f"from explorer.outputs import output_lock\nwith output_lock({str(out)!r}): pass",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert probe.returncode != 0 and f"(process {os.getpid()})" in probe.stderr
        assert lock_path_for(out).exists()
    assert not lock_path_for(out).exists()
    assert read_csv(out) == [POINT]


@pytest.mark.parametrize("export,read", [(export_csv, read_csv), (export_json, read_json)])
def test_a_full_disk_keeps_the_old_export_and_leaves_nothing(tmp_path, monkeypatch, export, read):
    out = tmp_path / "r.out"
    export([POINT], out)
    before = out.read_bytes()
    real_write = os.write

    def half_then_full(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomicwrite.os, "write", half_then_full)
    later = BenchPoint(**{**POINT.to_dict(), "size": 128, "size_label": "n=128"})
    with pytest.raises(UserError) as caught:
        export([POINT, later], out)
    assert (
        str(caught.value)
        == f"cannot write the {'CSV' if export is export_csv else 'JSON'} file to {out}: No space left on device"
    )
    assert out.read_bytes() == before and read(out) == [POINT]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.out"]


def test_exports_make_no_folders_and_say_why(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        export_json([POINT], tmp_path / "no" / "such" / "r.json")
    assert not (tmp_path / "no").exists()
    with pytest.raises(UserError, match="nothing to export"):
        export_csv([], tmp_path / "r.csv")


def test_reading_a_cut_off_csv_is_a_value_error_not_a_type_error(tmp_path):
    out = tmp_path / "r.csv"
    export_csv([POINT, POINT], out)
    text = out.read_text()
    out.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 10])  # the last row cut short
    with pytest.raises(ValueError, match="row 2 does not have the columns"):
        read_csv(out)


def test_a_link_or_pipe_named_like_the_lock_is_refused_not_followed(tmp_path):
    out = tmp_path / "r.csv"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    lock_path_for(out).symlink_to(victim)
    with pytest.raises(UserError, match="is a link, not a lock file"):
        export_csv([POINT], out)
    assert victim.read_text() == "keep me" and not out.exists()
    lock_path_for(out).unlink()
    if hasattr(os, "mkfifo"):
        os.mkfifo(lock_path_for(out))
        with pytest.raises(UserError, match="not a lock file this app made"):
            export_csv([POINT], out)  # and it does not block
