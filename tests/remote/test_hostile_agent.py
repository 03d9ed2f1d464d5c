"""A hostile remote over the real loopback sshd: every mode of tests/remote/hostile_agent.py is played
against the CLI as a student runs it. Whatever the remote sends is data: no traceback, no exit
outside 0/1/2, no control character or escape sequence reaches the terminal or the CSV, no line
the remote made up appears as a line of its own, numbers are range-checked with the limit named,
spreadsheet formulas are neutralised, and a point measured before the remote misbehaved is kept
and written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.bench.results import read_csv
from tests.remote.hostile_agent import FORMULAS, MODES
from tests.remote.servers import ALIAS

AGENT = Path(__file__).with_name("hostile_agent.py")
ROOT = AGENT.parents[2]
#: any control character but the newline, in what a terminal would be sent
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _python_for(mode: str, folder: Path) -> str:
    """The 'remote Python' that plays ``mode``: a script ssh runs in place of ``python3``."""
    script = folder / f"hostile-{mode}"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {AGENT} {mode}\n")
    script.chmod(0o755)
    return str(script)


def _cli(sshd, tmp_path: Path, mode: str, *argv: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "DEVICE_EXPLORER_SSH_CONFIG": str(sshd.config),
        "DEVICE_EXPLORER_HOME": str(tmp_path / "home"),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            *argv,
            "--host",
            ALIAS,
            "--remote-python",
            _python_for(mode, tmp_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _assert_data_only(proc: subprocess.CompletedProcess) -> str:
    """The run ended in 0, 1 or 2, with nothing a terminal would obey and no made-up line."""
    text = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1, 2), text
    assert "Traceback" not in proc.stderr.replace("Traceback (most recent call last): all points", "")
    assert not CONTROLS.search(text), repr(CONTROLS.search(text))
    assert not any(line.strip().startswith("all points ok") for line in text.splitlines()), text
    return text


def _bench(sshd, tmp_path: Path, mode: str, *extra: str) -> tuple[subprocess.CompletedProcess, Path]:
    csv = tmp_path / "run.csv"
    proc = _cli(
        sshd,
        tmp_path,
        mode,
        "bench",
        "matmul",
        "--sizes",
        "16",
        "32",
        "--repeats",
        "1",
        "--csv",
        str(csv),
        *extra,
    )
    return proc, csv


def test_every_mode_of_the_hostile_agent_is_played_here():
    played = {"escapes", "formulas", "huge-roof", "huge-repeats", "huge-median", "nan", "wrong-types"}
    played |= {"huge-device", "deep", "overlong", "garbage", "stderr-escapes"}
    played |= {"silent"}  # test_heartbeat.py: a point it takes and never answers
    assert played == set(MODES)


def test_escape_sequences_and_fake_lines_never_reach_the_terminal_or_the_csv(sshd, tmp_path):
    # on cuda:0 the run first queues for the GPU: the waiting line comes from the remote too
    proc, csv = _bench(sshd, tmp_path, "escapes", "--device", "cuda:0")
    text = _assert_data_only(proc)
    assert proc.returncode == 0, text
    assert "waiting: another run" in proc.stderr
    points = read_csv(csv)
    assert [p.size for p in points] == [16, 32]
    assert points[0].size_label == "n=16 all points ok"  # the made-up line is text within the cell
    assert not CONTROLS.search(csv.read_text().replace("\r\n", "\n"))


def test_a_remote_s_names_hostname_and_self_test_lines_are_data(sshd, tmp_path):
    listing = _cli(sshd, tmp_path, "escapes", "devices")
    _assert_data_only(listing)
    assert listing.returncode == 0 and "Hostile CPU" in listing.stdout and "hostile-server" in listing.stdout
    as_json = _cli(sshd, tmp_path, "escapes", "devices", "--json")
    _assert_data_only(as_json)
    assert "\\u001b" not in as_json.stdout and "\\u009b" not in as_json.stdout
    selftest = _cli(sshd, tmp_path, "escapes", "self-test")
    _assert_data_only(selftest)
    assert "PASS  import" in selftest.stdout


def test_spreadsheet_formulas_from_a_remote_are_neutralised_in_the_csv(sshd, tmp_path):
    proc, csv = _bench(sshd, tmp_path, "formulas")
    _assert_data_only(proc)
    assert proc.returncode == 0
    cells = [c for line in csv.read_text().splitlines()[1:] for c in _cells(line)]
    for formula in [*FORMULAS, "=1+1"]:
        assert "'" + formula in cells and formula not in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not _number(c))]
    back = read_csv(csv)  # and the file reads back as written, for --resume
    assert back[0].size_label == FORMULAS[0] and back[0].throughput_unit == "=1+1"


def _cells(line: str) -> list[str]:
    import csv as csv_module

    return next(csv_module.reader([line]))


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_a_roof_with_400_digit_numbers_costs_nothing_measured(sshd, tmp_path):
    """Once an OverflowError traceback: the measured point was lost and no CSV was written."""
    proc, csv = _bench(sshd, tmp_path, "huge-roof")
    _assert_data_only(proc)
    assert proc.returncode == 0, proc.stderr
    assert [(p.size, p.error) for p in read_csv(csv)] == [(16, None), (32, None)]


@pytest.mark.parametrize(
    "mode,said",
    [
        ("huge-repeats", "repeats is a 401-digit number"),
        ("huge-median", "median_s is 1e+308, more than 86,400"),
        ("nan", "median_s is NaN, not a finite number"),
        ("wrong-types", 'size is "big"'),
    ],
)
def test_a_point_with_an_impossible_value_is_an_error_row_naming_it(sshd, tmp_path, mode, said):
    proc, csv = _bench(sshd, tmp_path, mode)
    text = _assert_data_only(proc)
    assert proc.returncode == 1
    assert said in text, text
    assert "9" * 50 not in text and "0" * 50 not in text  # never 400 digits on the screen
    rows = read_csv(csv)
    assert [p.size for p in rows] == [16, 32] and all(p.error for p in rows)


def test_a_device_with_impossible_numbers_is_listed_without_them(sshd, tmp_path):
    proc = _cli(sshd, tmp_path, "huge-device", "devices", "--json")
    _assert_data_only(proc)
    assert proc.returncode == 0
    assert "0" * 50 not in proc.stdout and "Hostile CPU" in proc.stdout


@pytest.mark.parametrize("mode", ["deep", "overlong", "garbage", "stderr-escapes"])
def test_a_broken_answer_is_an_error_row_and_the_run_goes_on(sshd, tmp_path, mode):
    proc, csv = _bench(sshd, tmp_path, mode)
    _assert_data_only(proc)
    assert proc.returncode == 1
    rows = read_csv(csv)
    assert [p.size for p in rows] == [16, 32] and all(p.error for p in rows)
    assert "a new worker continues the run" not in (rows[-1].error or "")  # the last point promises nothing
    assert "next point connects again" not in (rows[-1].error or "")


def test_the_window_keeps_the_points_of_a_remote_whose_roof_overflows(sshd, tmp_path, qtbot, monkeypatch):
    """A hostile remote's overflowing roof, in the window: the run's thread died on the roof's OverflowError and the
    Benchmarks page kept 0 points."""
    from explorer.bench.runner import BenchPlan
    from explorer.devices.discovery import Discovery
    from explorer.devices.model import CpuDevice
    from explorer.remote.target import parse_remote
    from explorer.ui.bench_panel import BenchPanel
    from explorer.ui.context import AppContext

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path / "home"))
    remote = parse_remote(ALIAS, None, _python_for("huge-roof", tmp_path), ssh_config=sshd.config)
    panel = BenchPanel(
        AppContext(Discovery(devices=[CpuDevice(name="This laptop's CPU", key="cpu")], reports=[]))
    )
    qtbot.addWidget(panel)
    panel.controls.build_plan = lambda: BenchPlan("matmul", ["cpu"], sizes=[16, 32], repeats=1, remote=remote)
    assert panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=120_000)
    assert [(p.size, p.error, p.host) for p in panel.points] == [(16, None, ALIAS), (32, None, ALIAS)]
    assert not panel.message_label.isVisible()
    panel.shutdown()
