"""A run on a remote whose connection drops mid-run keeps its finished points and resumes with
the rest, on the real sshd: the CLI (``bench --resume FILE``) and the Benchmarks panel's Resume.

The drop: the remote agent is killed while it measures ``_hang_test``'s size 2 (which never
returns, so the kill always lands mid-point) and, at the same moment, the ssh config is pointed
at a closed port, so the run cannot reconnect and the point after it says why it was not measured.
Resuming (config repaired) measures exactly the points without a result; size 2 hangs again
and is killed again, so it stays an error row while size 3 is measured.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from explorer.remote.target import SSH_CONFIG_ENV
from tests.remote.servers import ALIAS, agent_python, free_port, kill_pid, ready_remote

AGENT_WAIT_S = 60.0


def _remote_agents(sshd) -> list[psutil.Process]:
    """The agents running under this test's sshd (never another test's or a local one)."""
    found = []
    for proc in psutil.Process(sshd.proc.pid).children(recursive=True):
        try:
            cmd = proc.cmdline()
        except psutil.Error:
            continue
        if cmd[-3:] == ["-m", "explorer", "agent"]:
            found.append(proc)
    return found


def _sleeping_in_a_point(pid: int) -> bool:
    """The agent's main thread sits in ``time.sleep`` (the kernel's ``hrtimer_nanosleep``): the
    hanging point is being measured. Idle, it waits on a queue (a futex) and reads stdin."""
    try:
        return any("nanosleep" in task.read_text() for task in Path(f"/proc/{pid}/task").glob("*/wchan"))
    except OSError:
        return False


def kill_agent_mid_point(sshd, break_config: Path | None = None) -> int:
    """Wait for the remote agent to sit in the point that never returns, point the ssh config
    at a closed port when asked (the network is gone), then kill the agent. Returns its pid."""
    deadline = time.monotonic() + AGENT_WAIT_S
    while time.monotonic() < deadline:
        agents = _remote_agents(sshd)
        if len(agents) == 1 and _sleeping_in_a_point(agents[0].pid):
            if break_config is not None:
                text = break_config.read_text()
                break_config.write_text(re.sub(r"Port \d+", f"Port {free_port()}", text))
            kill_pid(agents[0].pid)
            return agents[0].pid
        time.sleep(0.1)
    raise AssertionError("no remote agent sat in the hanging point")


@pytest.fixture
def config(sshd, tmp_path, monkeypatch):
    path = sshd.write_config(tmp_path / "ssh_config", sshd.known_hosts)
    monkeypatch.setenv(SSH_CONFIG_ENV, str(path))
    return path


def _bench(*argv: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "explorer", "bench", "_hang_test", "--sizes", "1", "2", "3",
         "--repeats", "3", "--json", "--host", ALIAS, "--remote-python", agent_python(), *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip


def test_the_cli_keeps_finished_points_and_resumes_only_the_rest(sshd, config, tmp_path):
    run = _bench()
    try:
        first = run.stdout.readline()
        assert json.loads(first)["size"] == 1, first
        kill_agent_mid_point(sshd, break_config=config)
        rest, stderr = run.communicate(timeout=120)
    finally:
        run.kill()
    lines = [first, *rest.splitlines(keepends=True)]
    points = [json.loads(line) for line in lines]
    assert [p["size"] for p in points] == [1, 2, 3]
    assert points[0]["error"] is None and points[0]["host"] == ALIAS
    assert ALIAS in points[1]["error"] and re.search("killed|dropped", points[1]["error"])
    assert points[2]["error"] == f"{ALIAS} refused the connection: no ssh server listens on that port"
    assert run.returncode == 1
    assert "2 points without a result; the same command with --resume FILE" in stderr
    saved = tmp_path / "run.jsonl"
    saved.write_text("".join(lines))  # what `bench --json > run.jsonl` leaves

    sshd.write_config(config, sshd.known_hosts)  # the network is back
    whole = tmp_path / "whole.csv"
    again = _bench("--resume", str(saved), "--csv", str(whole))
    try:
        kill_agent_mid_point(sshd)  # size 2 hangs again: killed again, and the run reconnects for 3
        out, stderr = again.communicate(timeout=120)
    finally:
        again.kill()
    resumed = [json.loads(line) for line in out.splitlines()]
    assert [p["size"] for p in resumed] == [2, 3], "the finished size 1 was measured again"
    assert resumed[0]["error"] and resumed[1]["error"] is None and resumed[1]["host"] == ALIAS
    assert "1 point without a result" in stderr
    from explorer.bench.results import read_csv

    kept = read_csv(whole)
    assert [(p.size, p.ok) for p in kept] == [(1, True), (2, False), (3, True)]
    assert kept[0].timestamp == points[0]["timestamp"]  # the very point measured before, kept


@pytest.mark.slow
def test_resuming_a_run_from_another_machine_is_refused_before_ssh_runs(tmp_path):
    saved = tmp_path / "run.jsonl"
    point = {"workload": "_hang_test", "variant": "plain", "device": "cpu", "size": 1, "size_label": "1"}
    saved.write_text(json.dumps({**point, "host": None}) + "\n")
    r = subprocess.run(
        [sys.executable, "-m", "explorer", "bench", "_hang_test", "--sizes", "1", "2", "--host", "gpu-lab",
         "--resume", str(saved)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "measured on this machine, but this run is on gpu-lab" in r.stderr


def test_the_benchmarks_panel_keeps_finished_points_and_resumes_with_one_click(
    sshd, config, qtbot, tmp_path, monkeypatch
):
    pytest.importorskip("pytestqt")
    from explorer.ui.bench_panel import BenchPanel

    monkeypatch.setenv("DEVICE_EXPLORER_HOME", str(tmp_path))
    context, host = ready_remote(qtbot, 90_000)
    panel = BenchPanel(context)
    qtbot.addWidget(panel)
    try:
        c = panel.controls
        c.ceilings_combo.setCurrentIndex(c.ceilings_combo.findData("skip"))
        c.remote_boxes()[(host.ident, "cpu")].setChecked(True)
        c.sizes_edit.setText("1, 2, 3")
        c.repeats_spin.setValue(3)
        # the form's plan (this remote, sizes 1 2 3) with the hidden test workload the form does
        # not offer: its size 2 never returns, so the kill below always lands mid-point
        form_plan = c.build_plan
        monkeypatch.setattr(c, "build_plan", lambda: dataclasses.replace(form_plan(), workload="_hang_test"))
        assert panel.start()
        assert panel.resume_button.isHidden()
        qtbot.waitUntil(lambda: len(panel.points) >= 1, timeout=90_000)
        kill_agent_mid_point(sshd, break_config=config)
        qtbot.waitUntil(lambda: not panel.running, timeout=90_000)
        first = panel.points
        assert [(p.size, p.ok) for p in first] == [(1, True), (2, False), (3, False)]
        assert not panel.resume_button.isHidden() and panel.resume_button.text() == "Resume (2 left)"

        sshd.write_config(config, sshd.known_hosts)
        panel.resume_button.click()
        assert panel.running and panel.resume_button.isHidden()
        assert panel.points == first[:1]  # the finished point stays in the table while the rest run
        kill_agent_mid_point(sshd)
        qtbot.waitUntil(lambda: not panel.running, timeout=90_000)
        after = panel.points
        assert [(p.size, p.ok, p.host) for p in after] == [
            (1, True, ALIAS),
            (2, False, ALIAS),
            (3, True, ALIAS),
        ]
        assert after[0] is first[0]  # kept, not measured again
        assert panel.resume_button.text() == "Resume (1 left)"
    finally:
        panel.shutdown()
        context.remotes.shutdown()


def test_a_remote_runs_csv_and_json_resume_as_the_readme_says_and_never_mix_machines(sshd, config, tmp_path):
    """The README's commands on a remote run: ``--csv run.csv`` first, then ``--resume run.csv --csv
    run.csv`` measures only what is missing, on the same machine; the file names the machine in
    every row; resuming it here, or on another machine, is refused before anything is measured."""
    from explorer.bench.results import points_to_json, read_csv

    def bench(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "explorer", "bench", "_crash_test", "--repeats", "1", *argv],
            capture_output=True, text=True, timeout=180, env=dict(os.environ),
        )  # fmt: skip

    remote = ["--host", ALIAS, "--remote-python", agent_python()]
    run_csv = tmp_path / "run.csv"
    first = bench("--sizes", "1", "--csv", str(run_csv), *remote)
    assert first.returncode == 0, first.stderr
    (kept,) = read_csv(run_csv)
    assert kept.host == ALIAS and kept.ok

    again = bench("--sizes", "1", "3", "--resume", str(run_csv), "--csv", str(run_csv), "--json", *remote)
    assert again.returncode == 0, again.stderr
    assert [json.loads(line)["size"] for line in again.stdout.splitlines()] == [3]  # only the missing one
    whole = read_csv(run_csv)
    assert [(p.size, p.host, p.ok) for p in whole] == [(1, ALIAS, True), (3, ALIAS, True)]
    assert whole[0].timestamp == kept.timestamp  # the point measured before, kept as it was

    before = run_csv.read_bytes()
    for where in ([], ["--host", "127.0.0.1", "--remote-python", agent_python()]):
        refused = bench("--sizes", "1", "3", "4", "--resume", str(run_csv), "--csv", str(run_csv), *where)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert f"was measured on {ALIAS}, but this run is on " in refused.stderr
        assert f"resume it where it ran (--host {ALIAS})" in refused.stderr
    assert run_csv.read_bytes() == before  # nothing measured here was added to the server's file

    exported = tmp_path / "run.json"  # the window's Export JSON of the same run
    exported.write_text(points_to_json(whole))
    last = bench("--sizes", "1", "3", "4", "--resume", str(exported), "--json", *remote)
    assert last.returncode == 0, last.stderr
    assert [(json.loads(x)["size"], json.loads(x)["host"]) for x in last.stdout.splitlines()] == [(4, ALIAS)]
